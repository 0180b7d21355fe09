"""Drives bench/peers/nvme: Stowage's block store (nvme_bench --lines),
fio with io_uring and with libaio, and DeepSpeed's aio_handle, each moving
--bytes sequentially with O_DIRECT in --dir at each block size and queue
depth, writes then reads, interleaved: every round visits every point, and
within one the tools run back to back in an order that rotates from round
to round. Each tool writes its own file in the same directory (the same
filesystem and disk). Appends every line to --log; prints the table.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import peer_table  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
TOOLS = ["stowage", "fio_io_uring", "fio_libaio", "ds_aio"]
MIB = 1 << 20


def stowage(a, block, depth):
    out = subprocess.run([str(a.build_dir / "bench/executor/nvme_bench"), str(a.dir), f"--bytes={a.bytes}",
                          f"--block={block}", f"--depth={depth}", f"--repeat={a.repeat}", "--no-fio", "--lines"],
                         capture_output=True, text=True)
    return [l for l in out.stdout.splitlines() if l.startswith("nvme ")] or \
        [f"nvme tool=stowage unavailable reason=exit {out.returncode}: {out.stderr.strip()[-200:]}"]


def fio(a, engine, block, depth):
    lines = []
    path = a.dir / f"fio_{engine}.bin"
    def run(rw):
        return subprocess.run(["fio", "--name=peers", f"--filename={path}", f"--rw={rw}", f"--bs={block}",
                               f"--size={a.bytes}", f"--iodepth={depth}", f"--ioengine={engine}",
                               "--direct=1", "--output-format=json"], capture_output=True, text=True)
    try:
        # Untimed: the first write allocates the file's blocks. Stowage's
        # bench writes its fallocated extents once untimed too, so both time
        # overwrites of blocks the filesystem has already allocated.
        run("write")
        for rw in ("write", "read"):
            for _ in range(a.repeat):
                out = run(rw)
                try:
                    doc = json.loads(out.stdout[out.stdout.index("{"):])
                    bw = doc["jobs"][0][rw]["bw_bytes"]
                except (ValueError, KeyError, IndexError):
                    return [f"nvme tool=fio_{engine} unavailable reason=fio exit {out.returncode}: "
                            f"{out.stderr.strip()[-200:]}"]
                lines.append(f"nvme tool=fio_{engine} rw={rw} block={block} depth={depth} bytes_per_s={bw:.4e}")
    finally:
        if path.exists():
            path.unlink()
    return lines


def ds_aio(a, block, depth):
    # DeepSpeed builds its aio op on first use (minutes on a loaded machine),
    # in a folder of our own under the build folder.
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str((a.build_dir / "peers-torch-extensions").resolve()))
    try:
        out = subprocess.run([sys.executable, str(HERE / "nvme_worker.py"), f"--dir={a.dir}", f"--bytes={a.bytes}",
                              f"--block={block}", f"--depth={depth}", f"--repeat={a.repeat}"],
                             capture_output=True, text=True, env=env, timeout=a.ds_timeout)
    except subprocess.TimeoutExpired:
        return [f"nvme tool=ds_aio unavailable reason=its op did not build and run within {a.ds_timeout} s"]
    return [l for l in out.stdout.splitlines() if l.startswith("nvme ")] or \
        [f"nvme tool=ds_aio unavailable reason=exit {out.returncode}: {out.stderr.strip()[-200:]}"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", type=pathlib.Path, default=pathlib.Path("build/dev"))
    ap.add_argument("--dir", type=pathlib.Path, default=None, help="where the files go (default: the build dir)")
    ap.add_argument("--bytes", type=int, default=1 << 30)
    ap.add_argument("--blocks", default="1,8", help="block sizes in MiB")
    ap.add_argument("--depths", default="8,32")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1, help="passes per direction per tool per round")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--ds-timeout", type=int, default=1200, help="seconds DeepSpeed's aio may take, build included")
    ap.add_argument("--log", type=pathlib.Path, default=None)
    a = ap.parse_args()
    a.dir = a.dir or a.build_dir / "peers-nvme-dir"
    a.dir.mkdir(parents=True, exist_ok=True)
    log = a.log or a.build_dir / "peers-nvme.log"
    log.write_text("")
    tools = a.tools.split(",")
    run = {"stowage": stowage, "ds_aio": ds_aio,
           "fio_io_uring": lambda a, b, d: fio(a, "io_uring", b, d),
           "fio_libaio": lambda a, b, d: fio(a, "libaio", b, d)}
    unavailable, all_lines = set(), []
    points = [(int(b) * MIB, int(d)) for b in a.blocks.split(",") for d in a.depths.split(",")]
    for r in range(a.rounds):
        for block, depth in points:
            for t in tools[r % len(tools):] + tools[:r % len(tools)]:
                if t in unavailable:
                    continue
                lines = run[t](a, block, depth)
                if any(" unavailable" in l for l in lines):
                    unavailable.add(t)
                with open(log, "a") as f:
                    f.write("\n".join(lines) + "\n")
                all_lines += lines
                print(f"round {r + 1} {block // MIB} MiB qd {depth} {t}: {len(lines)} lines", file=sys.stderr,
                      flush=True)
    print(peer_table.nvme_table(all_lines))


if __name__ == "__main__":
    main()
