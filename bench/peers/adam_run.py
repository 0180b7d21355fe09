"""Drives bench/peers/adam: Stowage's CPU Adam (cpu_adam_once), its
roofline kernel, DeepSpeedCPUAdam and torch.optim.AdamW (foreach, fused),
each in its own process (which measures every size in turn), interleaved:
every round visits every thread count, and within one the contenders run
back to back in an order that rotates from round to round. With --busy SIZES, those sizes are run
again on 2 threads with a spinning process on the machine (the other core
busy). Appends every line to --log and prints the table at the end.
"""
import argparse
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import peer_table  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
SIZE = {"1M": 1 << 20, "4M": 4 << 20, "16M": 16 << 20, "64M": 64 << 20, "256M": 256 << 20}
CONTENDERS = ["adam", "roofline", "ds_adam", "ds_adam_copy", "torch_foreach_copy", "torch_fused_copy"]


def command(build_dir, kernel, params, threads, repeat):
    if kernel in ("adam", "roofline"):
        return [str(build_dir / "bench/executor/cpu_adam_once"), f"--kernel={kernel}", f"--params={params}",
                f"--threads={threads}", f"--repeat={repeat}"]
    return [sys.executable, str(HERE / "adam_worker.py"), f"--kernel={kernel}", f"--params={params}",
            f"--threads={threads}", f"--repeat={repeat}"]


def run_one(cmd, threads, load, log):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    lines = [f"load={load} {l}" for l in out.stdout.splitlines() if l.startswith(("stowage ", "peer "))]
    if out.returncode not in (0, 3) and not lines:
        kernel = next(c.split('=', 1)[1] for c in cmd if c.startswith('--kernel='))
        last = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "no output"
        lines = [f"load={load} peer kernel={kernel} unavailable reason=exit {out.returncode}: {last}"]
    with open(log, "a") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", type=pathlib.Path, default=pathlib.Path("build/dev"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3, help="timed passes per process")
    ap.add_argument("--sizes", default="1M,4M,16M,64M,256M")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--kernels", default=",".join(CONTENDERS))
    ap.add_argument("--busy", default="", help="sizes (e.g. 1M,16M) also run on 2 threads with the other core busy")
    ap.add_argument("--log", type=pathlib.Path, default=None)
    a = ap.parse_args()
    log = a.log or a.build_dir / "peers-adam.log"
    log.write_text("")
    kernels = a.kernels.split(",")
    unavailable = set()
    all_lines = []
    # One process per kernel, thread count and load measures every size in
    # turn: a peer's process pays for importing torch once (tens of seconds
    # on a loaded machine), not once per size.
    idle = ",".join(str(SIZE[s]) for s in a.sizes.split(","))
    points = [(idle, int(t), "idle") for t in a.threads.split(",")]
    if a.busy:
        points.append((",".join(str(SIZE[s]) for s in a.busy.split(",")), 2, "busy"))
    for r in range(a.rounds):
        for params, threads, load in points:
            spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if load == "busy" else None
            try:
                order = kernels[r % len(kernels):] + kernels[:r % len(kernels)]
                for k in order:
                    if k in unavailable:
                        continue
                    lines = run_one(command(a.build_dir, k, params, threads, a.repeat), threads, load, log)
                    if any(" unavailable" in l for l in lines):
                        unavailable.add(k)
                    all_lines += lines
                    print(f"round {r + 1} x{threads} {load} {k}: "
                          f"{len(lines)} lines", file=sys.stderr, flush=True)
            finally:
                if spinner:
                    spinner.kill()
                    spinner.wait()
    print(peer_table.adam_table(all_lines))


if __name__ == "__main__":
    main()
