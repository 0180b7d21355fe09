"""DeepSpeed's aio_handle (the op ZeRO-Infinity moves NVMe tensors with) at
one block size and queue depth, for bench/peers/nvme: writes, then reads,
one pinned tensor of --bytes to a file in --dir with O_DIRECT, --repeat
passes each, one line per pass as peer_table.py reads it:

    nvme tool=ds_aio rw=read block=1048576 depth=8 bytes_per_s=1.93e+09

If the op cannot be built, prints "nvme tool=ds_aio unavailable reason=..."
and exits 3.
"""
import argparse
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--bytes", type=int, required=True)
    ap.add_argument("--block", type=int, required=True)
    ap.add_argument("--depth", type=int, required=True)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    import torch
    try:
        import logging
        logging.disable(logging.WARNING)
        from deepspeed.ops.op_builder import AsyncIOBuilder
        aio = AsyncIOBuilder().load(verbose=False)
        # block_size, queue_depth, single_submit, overlap_events, intra_op_parallelism
        handle = aio.aio_handle(a.block, a.depth, False, True, 1)
    except Exception as e:
        reason = (type(e).__name__ + ": " + str(e)).replace("\n", " ")[:300]
        print(f"nvme tool=ds_aio unavailable reason={reason}", flush=True)
        sys.exit(3)
    buf = torch.empty(a.bytes, dtype=torch.uint8).pin_memory() if torch.cuda.is_available() else \
        handle.new_cpu_locked_tensor(a.bytes, torch.empty(0, dtype=torch.uint8))
    buf.fill_(7)
    path = os.path.join(a.dir, "ds_aio.bin")
    try:
        handle.sync_pwrite(buf, path)  # untimed: allocates the file
        for rw in ("write", "read"):
            for _ in range(a.repeat):
                start = time.perf_counter()
                if rw == "write":
                    handle.sync_pwrite(buf, path)
                else:
                    handle.sync_pread(buf, path)
                took = time.perf_counter() - start
                print(f"nvme tool=ds_aio rw={rw} block={a.block} depth={a.depth} "
                      f"bytes_per_s={a.bytes / took:.4e}", flush=True)
    finally:
        if os.path.exists(path):
            os.remove(path)


if __name__ == "__main__":
    main()
