#!/usr/bin/env python3
"""cuda_probe's measurements as a machine profile's `calibration:` section
(docs/formats/profiles.md), for the GPU profile the machine names:

  bench/gpu/probe_calibration.py probe.txt --gpu h200 [--stowage build/dev/cli/stowage]

  h2d_rate, d2h_rate     the median pinned copy rate at 16 MiB and more, each way
  hbm_efficiency         the device copy (read + written) / the GPU's memory bandwidth
  matmul_efficiency      the median bf16 GEMM rate / the GPU's tensor-core rate

The GPU's figures come from `stowage profiles gpu --json` (in base units,
read by Stowage's own profile loader); its tensor-core rate is the fp16
one, which the bundled profiles of bf16-capable GPUs give as their bf16 rate too.

Prints YAML to paste under a machine profile (bench/gpu/plans/h200-vm.yaml
was written this way). These are micro-benchmark figures: docs/gpu.md shows
what they predict of a real run, and where they mislead (a layer's compute
is not all GEMM). Standard library only; the parsing is torch_peer.py's.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_peer import parse_probe  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def gpu_figures(stowage, name):
    """The named GPU profile's figures, as `stowage profiles gpu --json` gives them."""
    listed = json.loads(subprocess.run([stowage, "profiles", "gpu", "--json"], check=True, capture_output=True,
                                       text=True).stdout)
    for profile in listed:
        if profile["name"] == name:
            return profile["figures"]
    raise ValueError(f"no GPU profile named '{name}'")


def calibration(rows, figures):
    pinned = {d: [v for k, v in rows.items() if k[:2] == (d, "pinned") and k[2] >= 16384] for d in ("h2d", "d2h")}
    gemms = [v for k, v in rows.items() if k[0] == "gemm"]
    if not pinned["h2d"] or not pinned["d2h"] or ("hbm_copy",) not in rows or not gemms:
        raise ValueError("the probe output lacks pinned copies of 16 MiB or more, the HBM copy or a GEMM")
    bandwidth = figures.get("memory_bandwidth_bytes_per_s")
    matmul = figures.get("fp16_flops_per_s")
    if not bandwidth or not matmul:
        raise ValueError("the GPU's figures lack its memory bandwidth or its fp16 rate")
    return {
        "h2d_rate": f"{statistics.median(pinned['h2d']):.1f} GB/s",
        "d2h_rate": f"{statistics.median(pinned['d2h']):.1f} GB/s",
        "hbm_efficiency": round(rows[("hbm_copy",)] * 1e9 / bandwidth, 3),
        "matmul_efficiency": round(statistics.median(gemms) * 1e12 / matmul, 3),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("probe", help="cuda_probe's output")
    parser.add_argument("--gpu", required=True, help="the machine's GPU profile, by name (e.g. h200)")
    parser.add_argument("--stowage", default=str(ROOT / "build/dev/cli/stowage"), help="the stowage program")
    args = parser.parse_args()
    try:
        values = calibration(parse_probe(Path(args.probe).read_text()), gpu_figures(args.stowage, args.gpu))
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"probe_calibration: {e}", file=sys.stderr)
        return 1
    print(f"# from cuda_probe ({args.probe}), not fitted to any training run")
    print("calibration:")
    for key, value in values.items():
        print(f"  {key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
