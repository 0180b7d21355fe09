#!/usr/bin/env python3
"""cuda_probe's measurements as a machine profile's `calibration:` section
(docs/formats/profiles.md), for the GPU profile the machine names:

  bench/gpu/probe_calibration.py probe.txt --gpu profiles/gpus/h200.yaml

  h2d_rate, d2h_rate     the median pinned copy rate at 16 MiB and more, each way
  hbm_efficiency         the device copy (read + written) / the GPU's memory_bandwidth
  matmul_efficiency      the median bf16 GEMM rate / the GPU's bf16_rate (or fp16_rate)

Prints YAML to paste under a machine profile (bench/gpu/plans/h200-vm.yaml
was written this way). These are micro-benchmark figures: docs/gpu.md shows
what they predict of a real run, and where they mislead (a layer's compute
is not all GEMM). Standard library only; the parsing is torch_peer.py's.
"""

import argparse
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_peer import parse_probe  # noqa: E402

UNITS = {"GB/s": 1e9, "GiB/s": 2**30, "TB/s": 1e12, "TFLOP/s": 1e12, "TFLOPS": 1e12}


def profile_rate(text, key):
    """A rate field of a GPU profile (`memory_bandwidth: 4800 GB/s`), in base units, or None."""
    m = re.search(rf"^{key}:\s*([\d.eE+]+)\s*(\S+)?\s*$", text, re.M)
    if not m:
        return None
    return float(m.group(1)) * UNITS.get(m.group(2) or "", 1.0)


def calibration(rows, gpu_text):
    pinned = {d: [v for k, v in rows.items() if k[:2] == (d, "pinned") and k[2] >= 16384] for d in ("h2d", "d2h")}
    gemms = [v for k, v in rows.items() if k[0] == "gemm"]
    if not pinned["h2d"] or not pinned["d2h"] or ("hbm_copy",) not in rows or not gemms:
        raise ValueError("the probe output lacks pinned copies of 16 MiB or more, the HBM copy or a GEMM")
    bandwidth = profile_rate(gpu_text, "memory_bandwidth")
    matmul = profile_rate(gpu_text, "bf16_rate") or profile_rate(gpu_text, "fp16_rate")
    if not bandwidth or not matmul:
        raise ValueError("the GPU profile lacks memory_bandwidth or bf16_rate/fp16_rate")
    return {
        "h2d_rate": f"{statistics.median(pinned['h2d']):.1f} GB/s",
        "d2h_rate": f"{statistics.median(pinned['d2h']):.1f} GB/s",
        "hbm_efficiency": round(rows[("hbm_copy",)] * 1e9 / bandwidth, 3),
        "matmul_efficiency": round(statistics.median(gemms) * 1e12 / matmul, 3),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("probe", help="cuda_probe's output")
    parser.add_argument("--gpu", required=True, help="the machine's GPU profile (YAML)")
    args = parser.parse_args()
    try:
        values = calibration(parse_probe(Path(args.probe).read_text()), Path(args.gpu).read_text())
    except (OSError, ValueError) as e:
        print(f"probe_calibration: {e}", file=sys.stderr)
        return 1
    print(f"# from cuda_probe ({args.probe}), not fitted to any training run")
    print("calibration:")
    for key, value in values.items():
        print(f"  {key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
