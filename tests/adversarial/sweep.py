#!/usr/bin/env python3
"""The adversarial sweep of issue 12 (item 8), kept as a suite.

Generates bad inputs field by field and file by file for every kind of file
Stowage reads (machine, GPU, host and NVMe profiles, models, training files,
plans, Chrome traces, checkpoint manifests, the --data corpus), runs each
through `stowage memory`, `simulate`, `compare`, `run` and the GUI's
`--screenshot` (QT_QPA_PLATFORM=offscreen), and fails on:

  crash      a signal, a sanitizer report, exit 70 (an internal error) or an
             exit code outside the README's table
  hang       no exit within the per-case timeout
  unlocated  a refusal (exit 2, 65, 73) with an error line that names no
             file (`file:line:column: ...` or at least `file: ...`) and no
             `--argument`
  silent     the GUI reporting a failed input but exiting 0
  destroyed  an output path that held something Stowage did not create (a
             FIFO, a device, a folder, a symlink to one) changed by the case
  echoed     the output holds a line of the file that a plan's escaping
             reference (`model: ../secret.yaml`) names: it may not be read

Each case starts from inputs that work (checked first: a control that fails
is a failure too) and changes one thing. Cases run round-robin across the
kinds, so a time budget that ends the sweep early still covers them all; the
count skipped is reported, not failed. Exit 0 when nothing failed.

Under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/run-sanitizer-sweep
builds both programs so and runs every case with --timeout-scale), a report
in a case's output fails the case as a crash, whatever its exit code.

Usage: sweep.py --stowage BIN [--gui BIN] --data tests/data --work DIR [--budget S]
       sweep.py --self-test   (the judge on made-up outputs: each verdict can be reached)
"""
import argparse
import collections
import concurrent.futures
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time

DOCUMENTED = {0, 2, 65, 73, 74}  # README's exit codes (130/143 need a signal we do not send)
REFUSALS = {2, 65, 73}
VALUES = [("empty", ""), ("negative", "-1"), ("zero", "0"), ("huge", "1e308"),
          ("overflow", "99999999999999999999999"), ("word", "bogus"), ("list", "[1, 2]"),
          ("map", "{a: 1}"), ("nan", ".nan"), ("unterminated", '"oops')]
QT_NOISE = re.compile(r"^(QStandardPaths|qt\.|This plugin|QFont|propagateSizeHints|Fontconfig)")
# Mutations no reader may accept: whatever the file kind, these are refused.
MUST_REFUSE = {"empty", "garbage", "deep", "truncated", "format-only", "directory", "fifo", "dev-zero",
               "symlink-loop", "over-limit", "not-an-object", "events-not-a-list", "v1",
               "onto-fifo", "onto-folder", "onto-dev-full", "onto-link-to-fifo", "in-missing-folder",
               "machine-escape-up", "machine-escape-absolute", "machine-escape-dotted", "model-escape-up",
               "model-escape-absolute", "model-escape-dotted", "training-escape-up", "training-escape-absolute",
               "training-escape-dotted"}
# What a sanitizer prints: ASan's and LSan's "==PID==ERROR: ...Sanitizer", UBSan's
# "file:line:col: runtime error: ..." and the SUMMARY line each of them ends with.
SANITIZER = re.compile(r"ERROR: (Address|Leak|Thread|Memory|UndefinedBehavior)Sanitizer|"
                       r"runtime error: |SUMMARY: (Address|Leak|Thread|Memory|UndefinedBehavior)Sanitizer")
# A line of the file escaping references point at: never read, so never printed.
SECRET = "hash-of-a-password"
LOCATION = re.compile(r"^(?P<file>[^\s:][^:]*?)(?::\d+(?::\d+)?)?: \S")


# --- CRC32C, to reseal a manifest edited on purpose (executor/checkpoint/manifest.h)
def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


KEY = '"manifest_crc32c"'


def seal(text):
    """seal_manifest_text: the CRC32C of every byte before the key, appended last."""
    at = text.rfind(KEY)
    if at >= 0:
        text = text[:at]
    text = text.rstrip()
    if text.endswith(","):
        prefix = text + "\n  "
    else:
        if not text.endswith("}"):
            return None
        text = text[:-1].rstrip()
        prefix = text + ("\n  " if text.endswith("{") else ",\n  ")
    return prefix + KEY + ": " + str(crc32c(prefix.encode())) + "\n}\n"


# --- inputs
class Case:
    def __init__(self, kind, name, files, command, timeout=30, env=None, gui=False, control=False, cwd=None,
                 check=None):
        self.kind, self.name, self.files, self.command, self.cwd = kind, name, files, command, cwd
        self.check = check  # after the run: a text when something that was there changed
        self.timeout, self.env, self.gui, self.control = timeout, env or {}, gui, control
        self.verdict, self.code, self.detail, self.seconds = None, None, "", 0.0


def yaml_line_mutations(text):
    """(name, new text) for each field of a YAML file: removed, renamed, given twice, bad values."""
    lines = text.split("\n")
    field = re.compile(r"^(\s*)(- )?([A-Za-z_][\w.]*):(\s*)(.*)$")
    pair = re.compile(r"([A-Za-z_]\w*): ([^,}]+)")
    for i, line in enumerate(lines):
        def variant(new_lines):
            return "\n".join(lines[:i] + new_lines + lines[i + 1:])
        flow = re.match(r"^(\s*- )\{(.*)\}\s*$", line)
        if flow:  # a plan's partition: each pair inside the braces
            yield f"line{i + 1}-delete", variant([])
            yield f"line{i + 1}-twice", variant([line, line])
            for m in pair.finditer(line):
                for tag, value in (("word", "bogus"), ("negative", "-1"), ("empty", "")):
                    yield f"line{i + 1}-{m.group(1)}-{tag}", variant([line[:m.start(2)] + value + line[m.end(2):]])
                gone = line[:m.start()] + line[m.end():]
                yield f"line{i + 1}-{m.group(1)}-delete", variant([gone.replace("{, ", "{").replace(", ,", ",").replace(", }", "}")])
            continue
        m = field.match(line)
        if not m or line.lstrip().startswith("#"):
            continue
        indent, dash, key, _, value = m.groups()
        dash = dash or ""
        head = f"{indent}{dash}{key}:"
        yield f"{key}@{i + 1}-delete", variant([] if not dash else [f"{indent}- {{}}"])
        yield f"{key}@{i + 1}-renamed", variant([f"{indent}{dash}{key}_x: {value}"])
        yield f"{key}@{i + 1}-twice", variant([line, f"{indent}{' ' * len(dash)}{key}: {value}"])
        if value.strip() == "":  # a map or list follows: replace it with a scalar
            yield f"{key}@{i + 1}-scalar", variant([f"{head} 1"])
            continue
        for tag, bad in VALUES:
            if bad == value.strip():
                continue  # no change: not a mutation
            yield f"{key}@{i + 1}-{tag}", variant([f"{head} {bad}"])


def whole_file_mutations(text):
    yield "empty", ""
    yield "garbage", "\x00\xff\xfe binary \x01\x02"
    yield "deep", "a: " + "[" * 100000
    yield "truncated", text[: len(text) // 2]
    yield "format-only", text.split("\n")[0] + "\n"
    yield "tabs", text.replace("  ", "\t")


def special_files(path):
    """Things at the input's path that are not regular files."""
    def directory():
        os.makedirs(path)

    def fifo():
        os.mkfifo(path)

    def dev_zero():
        os.symlink("/dev/zero", path)

    def loop():
        os.symlink(path, path)

    return [("directory", directory), ("fifo", fifo), ("dev-zero", dev_zero), ("symlink-loop", loop)]


def must_refuse(name):
    """Whole-file damage, and a manifest changed without its checksum being made right."""
    base = name.rsplit(":", 1)[-1]
    return base in MUST_REFUSE or base.endswith("-unsealed")


def writer(text, env=None):
    """A mutation that writes `text` at the path; returns the environment the case needs."""
    def write(path):
        with open(path, "w") as f:
            f.write(text)
        return env
    return write


def special(name):
    """A mutation that puts one of special_files() at the path."""
    def make(path):
        dict(special_files(path))[name]()
    return make


class Sweep:
    def __init__(self, args):
        self.args = args
        self.work = os.path.abspath(args.work)
        self.data = os.path.abspath(args.data)
        self.cases = collections.defaultdict(list)  # kind -> cases
        self.counter = itertools.count()

    def run_stowage(self, *argv, cwd=None):
        out = subprocess.run([self.args.stowage, *argv], capture_output=True, text=True,
                             timeout=300 * self.args.timeout_scale, cwd=cwd)
        if out.returncode != 0 or SANITIZER.search(out.stderr):
            raise SystemExit(f"setup failed: stowage {' '.join(argv)}\n{out.stderr}")
        return out

    def case_dir(self, kind):
        d = os.path.join(self.work, f"{kind}-{next(self.counter):05d}")
        os.makedirs(d)
        return d

    def add(self, case):
        self.cases[case.kind].append(case)

    # -- the base inputs, each made to work first
    def prepare(self):
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        base = os.path.join(self.work, "base")
        os.makedirs(base)
        profiles = self.args.profiles
        copies = {"gpu.yaml": "gpus/rtx-4090.yaml", "host.yaml": "hosts/desktop-ddr5-128gb.yaml",
                  "nvme.yaml": "nvme/samsung-990-pro-2tb.yaml", "model.yaml": "models/tiny-gpt.yaml",
                  "training.yaml": "training/tiny.yaml"}
        self.profile_texts = {}
        for name, source in copies.items():
            with open(os.path.join(profiles, source)) as f:
                self.profile_texts[name] = f.read()
        with open(os.path.join(profiles, "machines/workstation-24gb-1nvme.yaml")) as f:
            machine = f.read()
        machine = re.sub(r"^gpu: .*$", "gpu: ./gpu.yaml", machine, flags=re.M)
        machine = re.sub(r"^host: .*$", "host: ./host.yaml", machine, flags=re.M)
        machine = re.sub(r"^nvme: .*$", "nvme: ./nvme.yaml", machine, flags=re.M)
        self.profile_texts["machine.yaml"] = machine
        plan = os.path.join(base, "plan.yaml")
        trace = os.path.join(base, "trace.json")
        self.run_stowage("simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt", "--training",
                         "tiny", "--placement", "zero-infinity", "--save-plan", plan, "--trace", trace)
        with open(plan) as f:
            self.plan_text = f.read()
        with open(trace) as f:
            self.trace_text = f.read()
        # The run's profiles go beside each plan that names them: a plan may
        # name only files in its own folder or the profile folder (issue 12).
        executor = os.path.join(self.data, "executor")
        self.run_profiles = [os.path.join(executor, name) for name in ("small-gpt.yaml", "small-training.yaml")]
        for source in self.run_profiles:
            shutil.copy(source, base)
        run_plan = os.path.join(base, "run-plan.yaml")
        self.run_stowage("simulate", "--machine", "workstation-24gb-1nvme", "--model",
                         os.path.join(base, "small-gpt.yaml"), "--training",
                         os.path.join(base, "small-training.yaml"), "--placement", "zero-infinity",
                         "--save-plan", run_plan)
        with open(run_plan) as f:
            self.run_plan_text = f.read()
        self.run_plan = run_plan
        self.checkpoints = os.path.join(base, "checkpoints")
        self.run_stowage("run", run_plan, "--steps", "1", "--nvme-dir", os.path.join(base, "nvme"),
                         "--block-size", "64KiB", "--checkpoint-dir", self.checkpoints, "--json")
        with open(os.path.join(self.checkpoints, "step-000001", "manifest.json")) as f:
            self.manifest_text = f.read()

    # -- profiles through `memory`
    def memory_case(self, name, target, mutate):
        d = self.case_dir("profile")
        for file, text in self.profile_texts.items():
            with open(os.path.join(d, file), "w") as f:
                f.write(text)
        path = os.path.join(d, target)
        os.remove(path)
        env = mutate(path)
        return Case("profile", f"{target}:{name}", [d],
                    ["memory", "--machine", os.path.join(d, "machine.yaml"), "--model", os.path.join(d, "model.yaml"),
                     "--training", os.path.join(d, "training.yaml")], env=env,
                    cwd=d)  # a machine profile's `gpu: ./gpu.yaml` is found from the working directory

    def profiles(self):
        self.add(self.memory_case("control", "model.yaml", writer(self.profile_texts["model.yaml"])))
        self.cases["profile"][-1].control = True
        for target, text in self.profile_texts.items():
            for name, new in itertools.chain(yaml_line_mutations(text), whole_file_mutations(text)):
                self.add(self.memory_case(name, target, writer(new)))
            for name, _ in special_files("unused"):
                self.add(self.memory_case(name, target, special(name)))
            self.add(self.memory_case("over-limit", target, writer(text, {"STOWAGE_MAX_PROFILE_BYTES": "100 B"})))

    # -- plans through `simulate` (and a sample through the GUI)
    def plan_case(self, kind, name, text, make=None, gui=False):
        d = self.case_dir(kind)
        path = os.path.join(d, "plan.yaml")
        if make:
            make(path)
        else:
            with open(path, "w") as f:
                f.write(text)
        if gui:
            return Case(kind, name, [d], ["--screenshot", os.path.join(d, "shot.png"), path], timeout=120, gui=True)
        return Case(kind, name, [d], ["simulate", path])

    def plans(self):
        self.add(self.plan_case("plan", "control", self.plan_text))
        self.cases["plan"][-1].control = True
        mutations = list(itertools.chain(yaml_line_mutations(self.plan_text), whole_file_mutations(self.plan_text)))
        for name, text in mutations:
            self.add(self.plan_case("plan", name, text))
        for name, _ in special_files("unused"):
            self.add(self.plan_case("plan", name, None, make=special(name)))
        for name, text in self.escaping_references():
            self.add(self.plan_case("plan", name, text))
        if self.args.gui:
            self.add(self.plan_case("gui", "plan-control", self.plan_text, gui=True))
            self.cases["gui"][-1].control = True
            for name, text in mutations[:: max(1, len(mutations) // self.args.gui_plans)]:
                self.add(self.plan_case("gui", "plan:" + name, text, gui=True))

    def escaping_references(self):
        """A plan's machine, model or training named as a path outside the plan's folder and the profile
        folder (issue 12 item 4): each is refused at its line, the file unread."""
        secret = os.path.join(self.work, "base", "secret.yaml")
        with open(secret, "w") as f:
            f.write(f"root:$6${SECRET}:19000:0:99999:7:::\n")
        for field in ("machine", "model", "training"):
            for tag, target in (("up", "../base/secret.yaml"), ("absolute", secret), ("dotted", "./x/../../base/secret.yaml")):
                text, n = re.subn(rf"^{field}: .*$", f"{field}: {target}", self.plan_text, count=1, flags=re.M)
                if n:
                    yield f"{field}-escape-{tag}", text

    # -- traces through `compare` and the GUI
    def trace_mutations(self):
        doc = json.loads(self.trace_text)
        events = doc.get("traceEvents", [])
        picked = [i for i, e in enumerate(events) if e.get("ph") == "X"][:3]
        picked += [i for i, e in enumerate(events) if e.get("ph") not in ("X", None)][:2]
        for i in picked:
            event = events[i]
            for key in list(event.keys()) + [f"args.{k}" for k in event.get("args", {})]:
                for tag, value in (("delete", None), ("huge", 1e308), ("negative", -1), ("string", "bogus"),
                                   ("null", "null"), ("list", [1]), ("object", {"a": 1})):
                    copy = json.loads(self.trace_text)
                    target = copy["traceEvents"][i]
                    if key.startswith("args."):
                        target, key2 = target["args"], key[5:]
                    else:
                        key2 = key
                    if tag == "delete":
                        target.pop(key2, None)
                    else:
                        target[key2] = None if value == "null" else value
                    yield f"event{i}.{key}-{tag}", json.dumps(copy, indent=1)
        ids = [e.get("args", {}).get("op_id") for e in events if e.get("ph") == "X"]
        if len(ids) >= 2 and ids[0] is not None:
            for tag, deps in (("cycle", None), ("dangling", [987654321]), ("self", "self")):
                copy = json.loads(self.trace_text)
                xs = [e for e in copy["traceEvents"] if e.get("ph") == "X"]
                if deps is None:
                    xs[0].setdefault("args", {})["deps"] = [ids[1]]
                    xs[1].setdefault("args", {})["deps"] = [ids[0]]
                elif deps == "self":
                    xs[0].setdefault("args", {})["deps"] = [ids[0]]
                else:
                    xs[0].setdefault("args", {})["deps"] = deps
                yield f"deps-{tag}", json.dumps(copy, indent=1)
        yield "events-not-a-list", json.dumps({"traceEvents": 3})
        yield "not-an-object", "[1, 2, 3]"
        yield "deep", "[" * 100000
        yield "empty", ""
        yield "truncated", self.trace_text[: len(self.trace_text) // 2]
        yield "garbage", "\x00\xff garbage"

    def trace_case(self, kind, name, text, make=None, gui=False, env=None):
        d = self.case_dir(kind)
        path = os.path.join(d, "trace.json")
        if make:
            make(path)
        else:
            with open(path, "w") as f:
                f.write(text)
        if gui:
            return Case(kind, name, [d], ["--screenshot", os.path.join(d, "shot.png"), path], timeout=120, gui=True,
                        env=env)
        return Case(kind, name, [d], ["compare", "--machine", "workstation-24gb-1nvme", path], env=env)

    def traces(self):
        self.add(self.trace_case("trace", "control", self.trace_text))
        self.cases["trace"][-1].control = True
        mutations = list(self.trace_mutations())
        for name, text in mutations:
            self.add(self.trace_case("trace", name, text))
        for name, _ in special_files("unused"):
            self.add(self.trace_case("trace", name, None, make=special(name)))
        self.add(self.trace_case("trace", "over-limit", self.trace_text, env={"STOWAGE_MAX_TRACE_BYTES": "100 B"}))
        if self.args.gui:
            self.add(self.trace_case("gui", "trace-control", self.trace_text, gui=True))
            self.cases["gui"][-1].control = True
            for name, text in mutations[:: max(1, len(mutations) // self.args.gui_traces)]:
                self.add(self.trace_case("gui", "trace:" + name, text, gui=True))
            for name, _ in special_files("unused"):
                self.add(self.trace_case("gui", "trace:" + name, None, gui=True,
                                         make=special(name)))
            self.add(self.trace_case("gui", "trace:over-limit", self.trace_text, gui=True,
                                     env={"STOWAGE_MAX_TRACE_BYTES": "100 B"}))

    # -- `run`: plans, corpora and checkpoint manifests
    def run_case(self, name, plan_text=None, corpus=None, manifest=None, make_corpus=None, env=None):
        d = self.case_dir("run")
        for source in self.run_profiles:
            shutil.copy(source, d)
        plan = os.path.join(d, "plan.yaml")
        with open(plan, "w") as f:
            f.write(plan_text if plan_text is not None else self.run_plan_text)
        argv = ["run", plan, "--steps", "1", "--nvme-dir", os.path.join(d, "nvme"), "--block-size", "64KiB", "--json"]
        if corpus is not None or make_corpus:
            path = os.path.join(d, "corpus.txt")
            if make_corpus:
                make_corpus(path)
            else:
                with open(path, "w") as f:
                    f.write(corpus)
            argv += ["--data", path]
        if manifest is not None:
            # Resumed by the plan that made the checkpoint: a checkpoint
            # names its model and profiles by path, so the same plan and
            # profiles copied to another folder are another run.
            argv[1] = self.run_plan
            ckpt = os.path.join(d, "checkpoints", "step-000001")
            shutil.copytree(os.path.join(self.checkpoints, "step-000001"), ckpt)
            with open(os.path.join(ckpt, "manifest.json"), "w") as f:
                f.write(manifest)
            argv[3] = "2"
            argv += ["--resume", ckpt]
        return Case("run" if manifest is None else "manifest", name, [d], argv, timeout=60, env=env)

    def manifest_mutations(self):
        lines = self.manifest_text.split("\n")
        number = re.compile(r'^(\s*"(\w+)": )(-?\d+|"[^"]*")(,?)$')
        for i, line in enumerate(lines):
            m = number.match(line)
            if not m:
                continue
            for tag, value in (("huge", "9223372036854775807"), ("negative", "-1"), ("string", '"x"'),
                               ("zero", "0"), ("other", "12345")):
                if value == m.group(3):
                    continue  # no change: not a mutation
                text = "\n".join(lines[:i] + [m.group(1) + value + m.group(4)] + lines[i + 1:])
                yield f"{m.group(2)}@{i + 1}-{tag}-unsealed", text
                sealed = seal(text)
                if sealed:
                    yield f"{m.group(2)}@{i + 1}-{tag}-sealed", sealed
        yield "empty", ""
        yield "truncated", self.manifest_text[: len(self.manifest_text) // 2]
        yield "deep", seal('{"format": "stowage/checkpoint/v2", "metadata": ' + "[" * 100000 + "]" * 100000 + "}")
        yield "v1", self.manifest_text.replace("checkpoint/v2", "checkpoint/v1")

    def runs(self):
        self.add(self.run_case("control"))
        self.cases["run"][-1].control = True
        plan_mutations = list(yaml_line_mutations(self.run_plan_text))
        for name, text in plan_mutations[:: max(1, len(plan_mutations) // self.args.run_plans)]:
            self.add(self.run_case("plan:" + name, plan_text=text))
        for name, corpus in (("empty", ""), ("one-byte", "x"), ("too-small", "short text"),
                             ("binary", "\x00\xff" * 50)):
            self.add(self.run_case("corpus:" + name, corpus=corpus))
        for name, _ in special_files("unused"):
            self.add(self.run_case("corpus:" + name, make_corpus=special(name)))
        self.add(self.run_case("corpus:over-limit", corpus="x" * 5000, env={"STOWAGE_MAX_CORPUS_BYTES": "1000 B"}))
        self.add(self.run_case("manifest:control", manifest=self.manifest_text))
        self.cases["manifest"][-1].control = True
        mutations = list(self.manifest_mutations())
        for name, text in mutations[:: max(1, len(mutations) // self.args.manifests)]:
            self.add(self.run_case(name, manifest=text))

    # -- outputs: `simulate --trace/--save-plan` and the GUI's `--screenshot` onto what Stowage did not make
    @staticmethod
    def output_targets(d):
        """(name, path, make, check) for each thing an output path may hold that must survive it.
        Every name ends in .png: the GUI takes the image format from it, the CLI does not look."""
        import stat

        def kind_of(path):
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                return "absent"
            for test, word in ((stat.S_ISFIFO, "fifo"), (stat.S_ISDIR, "folder"), (stat.S_ISLNK, "link"),
                               (stat.S_ISCHR, "device"), (stat.S_ISREG, "file")):
                if test(mode):
                    return word
            return "other"

        def stays(*pairs):
            def check():
                for path, kind in pairs:
                    if kind_of(path) != kind:
                        return f"{path} was a {kind}, now {kind_of(path)}"
                return None
            return check

        fifo, folder = os.path.join(d, "out-fifo.png"), os.path.join(d, "out-folder.png")
        link, target = os.path.join(d, "out-link.png"), os.path.join(d, "link-target-fifo")
        full, private = os.path.join(d, "full.png"), os.path.join(d, "private.png")
        missing = os.path.join(d, "no-such-folder")

        def make_folder():
            os.makedirs(folder)
            open(os.path.join(folder, "keep"), "w").close()

        def make_link():
            os.mkfifo(target)
            os.symlink(target, link)

        def make_private():
            with open(private, "w") as f:
                f.write("mine")
            os.chmod(private, 0o600)

        def private_kept():
            mode = os.stat(private).st_mode & 0o777
            return None if mode == 0o600 else f"{private} was 0600, now {oct(mode)}"

        folder_stays = stays((folder, "folder"))
        return [
            ("onto-fifo", fifo, lambda: os.mkfifo(fifo), stays((fifo, "fifo"))),
            ("onto-folder", folder, make_folder,
             lambda: folder_stays() or (None if os.listdir(folder) == ["keep"] else f"{folder} changed")),
            ("onto-dev-full", full, lambda: os.symlink("/dev/full", full), stays((full, "link"), ("/dev/full", "device"))),
            ("onto-link-to-fifo", link, make_link, stays((link, "link"), (target, "fifo"))),
            ("in-missing-folder", os.path.join(missing, "out.png"), lambda: None, stays((missing, "absent"))),
            ("over-private-file", private, make_private, private_kept),
        ]

    def outputs(self):
        base = os.path.join(self.work, "base")
        plan, trace = os.path.join(base, "plan.yaml"), os.path.join(base, "trace.json")
        flags = [("trace", lambda p: ["simulate", plan, "--trace", p]),
                 ("save-plan", lambda p: ["simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt",
                                          "--training", "tiny", "--placement", "zero-offload", "--save-plan", p])]
        if self.args.gui:
            flags.append(("screenshot", lambda p: ["--screenshot", p, trace]))
        for flag, argv in flags:
            for name in [t[0] for t in self.output_targets("unused")]:
                d = self.case_dir("output")
                _, path, make, check = next(t for t in self.output_targets(d) if t[0] == name)
                make()
                gui = flag == "screenshot"
                self.add(Case("output", f"{flag}:{name}", [d], argv(path), timeout=120 if gui else 30, gui=gui,
                              check=check))

    # -- running and judging
    def execute(self, case):
        binary = self.args.gui if case.gui else self.args.stowage
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", **case.env)
        started = time.monotonic()
        case.timeout *= self.args.timeout_scale
        try:
            out = subprocess.run([binary, *case.command], capture_output=True, timeout=case.timeout, env=env,
                                 stdin=subprocess.DEVNULL, cwd=case.cwd)
            case.code = out.returncode
            err = out.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            case.code, err = None, ""
        case.seconds = time.monotonic() - started
        self.judge(case, err)
        return case

    def located(self, line, case):
        if line.startswith("--") or re.match(r"^[\w-]+: --", line):
            return True  # a command-line argument, named
        m = LOCATION.match(line)
        if not m:
            return False
        file = os.path.join(case.cwd or os.getcwd(), m.group("file"))  # relative to where the case ran
        return any(os.path.normpath(file).startswith(d) for d in case.files) or os.path.exists(file)

    def judge(self, case, err):
        sanitizer = SANITIZER.search(err)
        if case.code is None:
            case.verdict, case.detail = "hang", f"no exit in {case.timeout} s"
        elif sanitizer:
            case.verdict, case.detail = "crash", err[sanitizer.start():][:600]
        elif case.code < 0 or case.code not in DOCUMENTED:
            case.verdict, case.detail = "crash", f"exit {case.code}: {err[-600:]}"
        else:
            if case.gui:
                lines = [l for l in err.splitlines() if l.strip() and not QT_NOISE.match(l)]
                lines = [l[len("stowage-gui: "):] if l.startswith("stowage-gui: ") else l for l in lines]
            else:
                lines = [l[len("error: "):] for l in err.splitlines() if l.startswith("error: ")]
                lines = [l for l in lines if not l.startswith("... and ")]
            unlocated = [l for l in lines if not self.located(l, case)] if case.code in REFUSALS or case.gui else []
            if unlocated:
                case.verdict, case.detail = "unlocated", unlocated[0][:300]
            elif SECRET in err:
                case.verdict, case.detail = "echoed", "the output holds a line of a file no reader may echo"
            elif case.gui and case.code == 0 and lines:
                case.verdict, case.detail = "silent", f"exit 0 after: {lines[0][:300]}"
            elif case.code == 0 and must_refuse(case.name):
                case.verdict, case.detail = "accepted-bad", "exit 0 for an input no reader may accept"
            elif case.control and case.code != 0:
                case.verdict, case.detail = "control", f"a working input failed: exit {case.code}: {err[-400:]}"
            else:
                case.verdict = "accepted" if case.code == 0 else "refused"
        if case.check and case.verdict not in ("hang", "crash"):
            changed = case.check()
            if changed:
                case.verdict, case.detail = "destroyed", changed

    def run(self):
        order = [c for group in itertools.zip_longest(*self.cases.values()) for c in group if c is not None]
        deadline = time.monotonic() + self.args.budget
        done, skipped = [], 0
        with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as pool:
            pending = set()
            it = iter(order)
            for case in it:
                if time.monotonic() > deadline:
                    skipped = 1 + sum(1 for _ in it)
                    break
                pending.add(pool.submit(self.execute, case))
                if len(pending) >= 2 * self.args.jobs:
                    finished, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    done += [f.result() for f in finished]
            done += [f.result() for f in concurrent.futures.as_completed(pending)]
        return done, skipped


def self_test():
    """Each verdict from a made-up output, so a judge that passed everything would fail here."""
    args = argparse.Namespace(work="/nonexistent", data="/nonexistent", timeout_scale=1)
    sweep = Sweep(args)
    here = os.path.abspath("plan.yaml")
    cases = [  # (stderr, exit code, gui, name, verdict)
        ("", 0, False, "x", "accepted"),
        (f"error: {here}:3:7: policy: bad (expected good)\n", 65, False, "x", "refused"),
        ("error: something went wrong\n", 65, False, "x", "unlocated"),
        ("error: --seed: must be 0 or more\n", 2, False, "x", "refused"),
        ("==12==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020\n", 86, False, "x", "crash"),
        ("core/units.cpp:40:12: runtime error: signed integer overflow\n", 87, False, "x", "crash"),
        ("==3==ERROR: LeakSanitizer: detected memory leaks\nSUMMARY: AddressSanitizer: 8 byte(s)\n", 0, False,
         "x", "crash"),  # a report fails the case even if the exit code were 0
        ("", 70, False, "x", "crash"),
        ("", -11, False, "x", "crash"),
        (None, None, False, "x", "hang"),
        ("", 0, False, "deep", "accepted-bad"),
        (f"stowage-gui: {here}: cannot read\n", 0, True, "x", "silent"),
    ]
    cases += [(f"error: {here}: not a regular file\n", 73, False, "onto-fifo", "destroyed")]
    cases += [(f"error: {here}:1:1: unknown key 'root:$6${SECRET}'\n", 65, False, "model-escape-up", "echoed")]
    failed = 0
    for err, code, gui, name, want in cases:
        check = (lambda: "out-fifo.png was a fifo, now file") if want == "destroyed" else None
        case = Case("t", name, [os.path.dirname(here)], [], gui=gui, check=check)
        case.code = code
        sweep.judge(case, err or "")
        if case.verdict != want:
            failed += 1
            print(f"self-test: {err!r} exit {code}: judged {case.verdict}, expected {want}")
    print(f"self-test: {len(cases) - failed} of {len(cases)} verdicts as expected")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stowage", required=True)
    parser.add_argument("--gui", help="stowage-gui; without it the GUI cases are left out")
    parser.add_argument("--profiles", required=True, help="the bundled profiles folder")
    parser.add_argument("--data", required=True, help="tests/data")
    parser.add_argument("--work", required=True, help="scratch folder (emptied first)")
    parser.add_argument("--budget", type=float, default=240, help="seconds for running the cases")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--gui-plans", type=int, default=40, help="plan mutations also opened in the GUI")
    parser.add_argument("--gui-traces", type=int, default=40, help="trace mutations also opened in the GUI")
    parser.add_argument("--run-plans", type=int, default=40, help="plan mutations also given to `run`")
    parser.add_argument("--manifests", type=int, default=1000, help="manifest mutations resumed from")
    parser.add_argument("--only", action="append", help="run only the cases of this kind (repeatable)")
    parser.add_argument("--timeout-scale", type=float, default=1,
                        help="multiply every case's timeout (a sanitizer build runs several times slower)")
    args = parser.parse_args()
    args.stowage = os.path.abspath(args.stowage)  # cases run in their own folders
    args.gui = os.path.abspath(args.gui) if args.gui else None
    args.profiles = os.path.abspath(args.profiles)
    sweep = Sweep(args)
    sweep.prepare()
    sweep.profiles()
    sweep.plans()
    sweep.traces()
    sweep.runs()
    sweep.outputs()
    if args.only:
        sweep.cases = {k: v for k, v in sweep.cases.items() if k in args.only}
    started = time.monotonic()
    done, skipped = sweep.run()
    elapsed = time.monotonic() - started
    counts = collections.defaultdict(collections.Counter)
    for c in done:
        counts[c.kind][c.verdict] += 1
    failures = [c for c in done if c.verdict not in ("accepted", "refused")]
    print(f"adversarial sweep: {len(done)} cases in {elapsed:.0f} s, {skipped} skipped (time budget)")
    for kind in sorted(counts):
        row = ", ".join(f"{v} {n}" for v, n in sorted(counts[kind].items()))
        print(f"  {kind:9} {sum(counts[kind].values()):5}  {row}")
    slowest = max(done, key=lambda c: c.seconds, default=None)
    if slowest:
        print(f"  slowest case {slowest.seconds:.1f} s: {slowest.kind} {slowest.name}")
    for c in failures:
        print(f"FAIL {c.verdict}: {c.kind} {c.name}: {' '.join(c.command)}\n    {c.detail}")
    with open(os.path.join(sweep.work, "summary.json"), "w") as f:
        json.dump({"cases": len(done), "skipped": skipped, "seconds": elapsed,
                   "counts": {k: dict(v) for k, v in counts.items()},
                   "accepted": [f"{c.kind} {c.name}" for c in done if c.verdict == "accepted"],
                   "failures": [{"kind": c.kind, "name": c.name, "verdict": c.verdict, "command": c.command,
                                 "detail": c.detail} for c in failures]}, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
