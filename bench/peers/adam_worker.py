"""One peer CPU Adam at one size and thread count, in its own process, for
bench/peers/adam. Prints one line per timed pass in the same form as
Stowage's cpu_adam_once, which peer_table.py reads:

    peer kernel=ds_adam_copy params=16777216 threads=2 seconds=0.0300

Kernels (all AdamW, fp32 master weights and moments, lr 1e-3, wd 1e-2):
  ds_adam            DeepSpeedCPUAdam.step() alone: 28 B/param, no 16-bit copy
  ds_adam_copy       the same, then the bf16 copy (param16.copy_(param)): 30 B
  torch_foreach_copy torch.optim.AdamW(foreach=True), then the bf16 copy
  torch_fused_copy   torch.optim.AdamW(fused=True), then the bf16 copy
The bf16 copy is what the device trains with; Stowage's adam_step writes it
in the same pass. If DeepSpeed's op cannot be built, prints one line
"peer kernel=ds_adam unavailable reason=..." and exits 3.
"""
import argparse
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", required=True,
                    choices=["ds_adam", "ds_adam_copy", "torch_foreach_copy", "torch_fused_copy"])
    ap.add_argument("--params", required=True, help="sizes, comma-separated: each measured in turn")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()

    import torch
    torch.set_num_threads(a.threads)
    for params in (int(x) for x in a.params.split(",")):
        measure(torch, a.kernel, params, a.threads, a.repeat)


def measure(torch, kernel, params, threads, repeat):
    p = torch.full((params,), 0.01, dtype=torch.float32)
    p.grad = torch.full((params,), 1e-3, dtype=torch.float32)
    p16 = torch.empty(params, dtype=torch.bfloat16)
    copy = kernel != "ds_adam"
    if kernel.startswith("ds_adam"):
        try:
            import logging
            logging.disable(logging.WARNING)
            from deepspeed.ops.adam import DeepSpeedCPUAdam
            opt = DeepSpeedCPUAdam([p], lr=1e-3, weight_decay=1e-2, adamw_mode=True)
        except Exception as e:  # the op is built at first use and may fail
            reason = (type(e).__name__ + ": " + str(e)).replace("\n", " ")[:300]
            print(f"peer kernel={kernel} unavailable reason={reason}", flush=True)
            sys.exit(3)
    else:
        fused = kernel == "torch_fused_copy"
        opt = torch.optim.AdamW([p], lr=1e-3, weight_decay=1e-2, foreach=not fused, fused=fused)

    def one_pass():
        opt.step()
        if copy:
            p16.copy_(p.detach())

    one_pass()  # untimed: allocates the moments, builds kernels
    for _ in range(repeat):
        start = time.perf_counter()
        one_pass()
        took = time.perf_counter() - start
        print(f"peer kernel={kernel} params={params} threads={threads} seconds={took:.6f}", flush=True)


if __name__ == "__main__":
    main()
