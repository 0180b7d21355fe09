#!/usr/bin/env python3
"""PyTorch on the same GPU, the same sizes and the same work as cuda_probe,
and the two side by side (a peer check run by bench/gpu/check.sh; never in
CI).

  bench/gpu/torch_peer.py [--probe probe.txt]

Measures with torch: host<->device copies by size, pinned and pageable,
each direction; the device-to-device copy of 4 GiB; AdamW over 256M fp32
parameters, fused and foreach (28 bytes a parameter, as Stowage's kernel
with fp32 moments: master, m, v read and written, a 4-byte gradient read
where Stowage reads a 2-byte one and writes a 2-byte copy); and bf16 matrix
products of cuda_probe's shapes. Each figure is the mean of the timed
repetitions after one warm-up, timed with CUDA events, as cuda_probe does.

With --probe (cuda_probe's output), prints one table: each figure for
Stowage and for torch, and Stowage / torch (above 1: Stowage faster). The
parsing needs no torch (tests/bench/torch_peer_test.py).
"""

import argparse
import re
import sys

SIZES_KIB = [64, 1024, 16384, 262144, 1048576]
GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 2048, 8192), (2048, 2048, 2048),
               (8192, 2048, 2048), (2048, 2048, 8192)]
ADAM_PARAMS = 256 << 20


def seconds_per_call(body, reps):
    import torch
    body()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        body()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / reps


def measure():
    import torch
    rows = {}
    for kib in SIZES_KIB:
        n = kib << 10
        device = torch.empty(n, dtype=torch.uint8, device="cuda")
        reps = 5 if n >= 256 << 20 else 20
        for host_kind in ("pinned", "pageable"):
            host = torch.ones(n, dtype=torch.uint8, pin_memory=(host_kind == "pinned"))
            up = seconds_per_call(lambda: device.copy_(host, non_blocking=True), reps)
            down = seconds_per_call(lambda: host.copy_(device, non_blocking=True), reps)
            rows[("h2d", host_kind, kib)] = n / up / 1e9
            rows[("d2h", host_kind, kib)] = n / down / 1e9
    copy_bytes = 4 << 30
    src = torch.ones(copy_bytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    rows[("hbm_copy",)] = 2 * copy_bytes / seconds_per_call(lambda: dst.copy_(src), 10) / 1e9
    del src, dst
    for mode in ("fused", "foreach"):
        p = torch.zeros(ADAM_PARAMS, device="cuda", requires_grad=True)
        p.grad = torch.full_like(p, 1.0 / 1024)
        opt = torch.optim.AdamW([p], lr=1e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1,
                                **{mode: True})
        rows[("adam", mode)] = ADAM_PARAMS / seconds_per_call(opt.step, 10)
        del p, opt
    for m, n, k in GEMM_SHAPES:
        a = torch.full((m, k), 0.01, dtype=torch.bfloat16, device="cuda")
        b = torch.full((k, n), 0.01, dtype=torch.bfloat16, device="cuda")
        rows[("gemm", m, n, k)] = 2 * m * n * k / seconds_per_call(lambda: a @ b, 10) / 1e12
    return rows


def parse_probe(text):
    """cuda_probe's tables as the keys measure() uses (the names are its own)."""
    rows = {}
    for m in re.finditer(r"^(\d+)\s+(pinned|pageable)\s+([\d.]+)\s+([\d.]+)\s*$", text, re.M):
        kib, kind = int(m.group(1)), m.group(2)
        rows[("h2d", kind, kib)] = float(m.group(3))
        rows[("d2h", kind, kib)] = float(m.group(4))
    m = re.search(r"^HBM copy .*: ([\d.]+) GB/s", text, re.M)
    if m:
        rows[("hbm_copy",)] = float(m.group(1))
    m = re.search(r"^fp32 moments\s+\d+M\s+\d+\s+([\d.]+)", text, re.M)
    if m:
        rows[("adam", "stowage")] = float(m.group(1)) * 1e9
    for m in re.finditer(r"^\s*(\d+) x\s+(\d+) x\s+(\d+)\s+([\d.]+)\s*$", text, re.M):
        rows[("gemm", int(m.group(1)), int(m.group(2)), int(m.group(3)))] = float(m.group(4))
    return rows


def side_by_side(ours, theirs):
    lines = [f"{'what':54} {'stowage':>10} {'torch':>10} {'ratio':>7}"]

    def row(label, a, b, unit_scale=1.0, fmt="{:10.2f}"):
        if a is None or b is None:
            return
        lines.append(f"{label:54} {fmt.format(a * unit_scale)} {fmt.format(b * unit_scale)} {a / b:7.3f}")

    for kib in SIZES_KIB:
        for direction in ("h2d", "d2h"):
            for kind in ("pinned", "pageable"):
                key = (direction, kind, kib)
                row(f"{direction} {kind} {kib} KiB (GB/s)", ours.get(key), theirs.get(key))
    row("HBM copy, read + written (GB/s)", ours.get(("hbm_copy",)), theirs.get(("hbm_copy",)), fmt="{:10.0f}")
    for mode in ("fused", "foreach"):
        row(f"AdamW 256M fp32 moments vs torch {mode} (Gparams/s)", ours.get(("adam", "stowage")),
            theirs.get(("adam", mode)), unit_scale=1e-9)
    for m, n, k in GEMM_SHAPES:
        key = ("gemm", m, n, k)
        row(f"bf16 GEMM {m} x {n} x {k} (TFLOP/s)", ours.get(key), theirs.get(key), fmt="{:10.1f}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", help="cuda_probe's output, for the side-by-side table")
    args = parser.parse_args()
    import torch  # here, so that the parsing above is testable without torch
    if not torch.cuda.is_available():
        print("no CUDA device for torch", file=sys.stderr)
        return 77
    theirs = measure()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    if args.probe:
        with open(args.probe) as f:
            print(side_by_side(parse_probe(f.read()), theirs))
    else:
        for key, value in theirs.items():
            print(key, f"{value:.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
