"""Reads the lines bench/peers/adam and bench/peers/nvme record and prints
their side-by-side tables (min / median / max over the interleaved
rounds). Standard library only, so that tests/bench/peer_table_test.py runs
without the peers' virtual environment.

Adam lines (one per timed pass; `load` is idle or busy: a spinning process
on the other core):
    load=idle stowage kernel=adam params=1048576 threads=1 seconds=0.001400
    load=idle peer kernel=ds_adam_copy params=1048576 threads=1 seconds=0.001900
    load=idle peer kernel=ds_adam unavailable reason=...
NVMe lines (one per pass):
    nvme tool=stowage rw=read block=1048576 depth=8 bytes_per_s=1.9e9
"""
import re
import statistics

_FIELD = re.compile(r"(\w+)=(\S+)")

# Kernels that do the same work as Stowage's adam_step (step and bf16 copy).
SAME_WORK = ("ds_adam_copy", "torch_foreach_copy", "torch_fused_copy")
ADAM_COLUMNS = ("adam", "roofline", "ds_adam", "ds_adam_copy", "torch_foreach_copy", "torch_fused_copy")
NVME_TOOLS = ("stowage", "fio_io_uring", "fio_libaio", "ds_aio")


def fields(line):
    """The key=value pairs of one line; `reason` takes the rest of the line."""
    out = {}
    head, sep, reason = line.partition(" reason=")
    for key, value in _FIELD.findall(head):
        out[key] = value
    words = head.split()
    out["_source"] = next((w for w in words if w in ("stowage", "peer", "nvme")), None)
    out["_unavailable"] = "unavailable" in words
    if sep:
        out["reason"] = reason.strip()
    return out


def parse_adam(lines):
    """{(params, threads, load): {kernel: [params per second, ...]}} and
    {kernel: reason} for kernels that could not run."""
    rates, unavailable = {}, {}
    for line in lines:
        f = fields(line)
        if f["_source"] not in ("stowage", "peer") or "kernel" not in f:
            continue
        if f["_unavailable"]:
            unavailable[f["kernel"]] = f.get("reason", "")
            continue
        try:
            key = (int(f["params"]), int(f["threads"]), f.get("load", "idle"))
            rate = int(f["params"]) / float(f["seconds"])
        except (KeyError, ValueError, ZeroDivisionError):
            continue
        rates.setdefault(key, {}).setdefault(f["kernel"], []).append(rate)
    return rates, unavailable


def parse_nvme(lines):
    """{(rw, block, depth): {tool: [bytes per second, ...]}}; Stowage's
    lines also give {(rw, block, depth): [mean queue depth kept, ...]} under
    the tool name 'stowage_depth'."""
    rates = {}
    for line in lines:
        f = fields(line)
        if f["_source"] != "nvme" or "tool" not in f:
            continue
        try:
            key = (f["rw"], int(f["block"]), int(f["depth"]))
            rate = float(f["bytes_per_s"])
        except (KeyError, ValueError):
            continue
        rates.setdefault(key, {}).setdefault(f["tool"], []).append(rate)
        if "queue_depth_mean" in f:
            rates[key].setdefault(f["tool"] + "_depth", []).append(float(f["queue_depth_mean"]))
    return rates


def spread(values, scale, digits=0):
    """'median [min-max]' of values / scale with `digits` decimals, or '-'."""
    if not values:
        return "-"
    v = [x / scale for x in values]
    return f"{statistics.median(v):.{digits}f} [{min(v):.{digits}f}-{max(v):.{digits}f}]"


def ratio(ours, theirs):
    """Median ratio, and the worst case (our slowest / their fastest)."""
    if not ours or not theirs:
        return "-"
    return f"{statistics.median(ours) / statistics.median(theirs):.2f} " \
           f"(worst {min(ours) / max(theirs):.2f})"


def size_name(params):
    return f"{params >> 20}M" if params % (1 << 20) == 0 else str(params)


def adam_table(lines):
    """Markdown: M params/s per kernel, Stowage / best same-work peer, and
    Stowage / roofline, per size, threads and load."""
    rates, unavailable = parse_adam(lines)
    head = ["params", "threads", "load"] + [f"{k} Mp/s" for k in ADAM_COLUMNS] + \
           ["stowage / best peer", "best peer", "adam / roofline"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(rates, key=lambda k: (k[2] != "idle", k[0], k[1])):
        by = rates[key]
        peers = [k for k in SAME_WORK if by.get(k)]
        best = max(peers, key=lambda k: statistics.median(by[k])) if peers else None
        cells = [size_name(key[0]), str(key[1]), key[2]] + [spread(by.get(k, []), 1e6) for k in ADAM_COLUMNS]
        cells += [ratio(by.get("adam", []), by[best]) if best else "-", best or "-",
                  ratio(by.get("adam", []), by.get("roofline", []))]
        rows.append("| " + " | ".join(cells) + " |")
    for kernel, reason in sorted(unavailable.items()):
        rows.append(f"\n{kernel}: did not run: {reason}")
    return "\n".join(rows)


def nvme_table(lines):
    """Markdown: GB/s per tool, and Stowage / the best of fio and DeepSpeed."""
    rates = parse_nvme(lines)
    unavailable = [l for l in lines if " unavailable" in l and l.startswith("nvme ")]
    head = ["rw", "block", "depth"] + [f"{t} GB/s" for t in NVME_TOOLS] + \
           ["stowage / best other", "best other", "stowage depth kept"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(rates):
        by = rates[key]
        others = [t for t in NVME_TOOLS[1:] if by.get(t)]
        best = max(others, key=lambda t: statistics.median(by[t])) if others else None
        cells = [key[0], f"{key[1] >> 20} MiB" if key[1] % (1 << 20) == 0 else str(key[1]), str(key[2])]
        cells += [spread(by.get(t, []), 1e9, 2) for t in NVME_TOOLS]
        cells += [ratio(by.get("stowage", []), by[best]) if best else "-", best or "-",
                  spread(by.get("stowage_depth", []), 1, 1)]
        rows.append("| " + " | ".join(cells) + " |")
    for line in unavailable:
        f = fields(line)
        rows.append(f"\n{f.get('tool')}: did not run: {f.get('reason', '')}")
    return "\n".join(rows)
