#!/usr/bin/env python3
"""Trains one plan with two builds of the command and fails unless their
losses and held-out loss are the same bits: stowage-standalone (Debian's
static archives inside) against stowage (Debian's shared libraries).

Usage: same_training.py STOWAGE OTHER PLAN WORKDIR
"""
import json
import pathlib
import shutil
import subprocess
import sys

STEPS = 3


def train(program, plan, work):
    """The run's JSON: `stowage run PLAN --json` with the NVMe tier in work."""
    nvme = work / "nvme"
    shutil.rmtree(nvme, ignore_errors=True)
    result = subprocess.run(
        [program, "run", plan, "--steps", str(STEPS), "--device-memory", "100MiB",
         "--nvme-dir", str(nvme), "--json"],
        capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"{program} run failed (exit {result.returncode}):\n{result.stderr}")
    return json.loads(result.stdout)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    stowage, other, plan, work = sys.argv[1:]
    work = pathlib.Path(work)
    work.mkdir(parents=True, exist_ok=True)
    runs = {program: train(program, plan, work) for program in (stowage, other)}
    failed = False
    for field in ("losses", "held_out_loss"):
        a, b = runs[stowage][field], runs[other][field]
        print(f"{field}: {a!r} | {b!r}")
        if a != b:
            print(f"{field} differ: {stowage} {a!r}, {other} {b!r}")
            failed = True
    if len(runs[stowage]["losses"]) != STEPS:
        print(f"expected {STEPS} losses, got {runs[stowage]['losses']!r}")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
