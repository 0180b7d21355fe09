"""bench/gpu/this-machine, the machine profile bench/gpu/check.sh makes on
the lent GPU machine, on the probe output recorded on the H200 on
2026-12-04 (run 2) and this machine's `stowage profile --quick`: it must
name the GPU's bundled profile, give the GPU calibration the committed
h200-vm profile was written from (within the spread of the three runs),
take the host and its CPU Adam from Stowage's own profile and nothing of
that profile's CPU-backend device, load in Stowage, and refuse a GPU it
has no profile for rather than guess. Run by ctest as
ThisMachine.ProfileFromTheRecordedProbe.

  python3 this_machine_test.py STOWAGE
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench/gpu/this-machine"
RECORDED = ROOT / "bench/gpu/results"
STOWAGE = None


HOST_PROFILE = None  # `stowage profile --quick --threads 8` of this machine, made once (setUpModule)


def setUpModule():
    global HOST_PROFILE
    HOST_PROFILE = subprocess.run([STOWAGE, "profile", "--quick", "--threads", "8"], check=True,
                                  capture_output=True, text=True).stdout


def host_profile(folder, text=None):
    path = pathlib.Path(folder) / "host.yaml"
    path.write_text(HOST_PROFILE if text is None else text)
    return path


def probe_named(folder, gpu_name):
    """The recorded probe output as if printed on a GPU of that name."""
    text = (RECORDED / "2026-12-04-run2/probe.txt").read_text()
    path = pathlib.Path(folder) / "probe.txt"
    path.write_text(text.replace("device 0: NVIDIA H200,", f"device 0: {gpu_name},", 1))
    return path


def this_machine(probe, host, *extra):
    return subprocess.run([sys.executable, str(SCRIPT), "--probe", str(probe), "--host-profile", str(host),
                           "--stowage", STOWAGE, *extra], capture_output=True, text=True)


def section_of(yaml_text, name):
    """A top-level section's `key: value` lines, the values as written."""
    m = re.search(rf"^{name}:\n((?:  .*\n?)*)", yaml_text, re.M)
    return dict(re.findall(r"^  (\w+): (.+)$", m.group(1), re.M))


def calibration_of(yaml_text):
    """The calibration's numbers (rates in GB/s as written)."""
    return {k: float(v.split()[0]) for k, v in section_of(yaml_text, "calibration").items()
            if re.fullmatch(r"[\d.e+-]+( GB/s)?", v)}


class ThisMachine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)
        self.host = host_profile(self.dir)

    def tearDown(self):
        self.tmp.cleanup()

    def test_the_h200_gets_the_committed_profiles_calibration(self):
        made = this_machine(probe_named(self.dir, "NVIDIA H200"), self.host)
        self.assertEqual(made.returncode, 0, made.stderr)
        self.assertIn("\ngpu: h200\n", made.stdout)
        ours = calibration_of(made.stdout)
        committed = calibration_of((ROOT / "bench/gpu/plans/h200-vm.yaml").read_text())
        self.assertEqual(set(committed), {"h2d_rate", "d2h_rate", "hbm_efficiency", "matmul_efficiency"})
        for key, value in committed.items():  # one run's probe against the three runs' middle
            self.assertAlmostEqual(ours[key], value, delta=0.01 * value, msg=key)

    def test_the_host_and_its_cpu_adam_are_stowage_profiles_and_nothing_of_its_device(self):
        made = this_machine(probe_named(self.dir, "NVIDIA H200"), self.host)
        self.assertEqual(made.returncode, 0, made.stderr)
        host, measured_host = section_of(made.stdout, "host"), section_of(HOST_PROFILE, "host")
        for key in ("cpu_cores", "dram", "dram_bandwidth"):
            self.assertEqual(host[key], measured_host[key], key)
        self.assertEqual((host["pcie_generation"], host["pcie_lanes"]), ("5", "16"))  # the H200's, not the probe's 4
        ours, measured = section_of(made.stdout, "calibration"), section_of(HOST_PROFILE, "calibration")
        for key in ("dram_efficiency", "adam_flops_per_param", "cpu_core_rate", "optimizer_threads"):
            self.assertEqual(ours[key], measured[key], key)
        self.assertEqual(ours["optimizer_threads"], "8")
        # The CPU backend's device: its copies, products and gradient check are not this GPU's.
        self.assertNotEqual(ours["h2d_rate"], measured["h2d_rate"])
        self.assertEqual(ours["h2d_rate"], "55.5 GB/s")
        for key in ("compute_overhead", "grad_check_rate", "host_lane_cores", "pcie_pinned_efficiency"):
            self.assertIn(key, measured)
            self.assertNotIn(key, ours)
        self.assertIn("compute_rate_by_flops:", HOST_PROFILE)
        self.assertNotIn("compute_rate_by_flops", made.stdout)

    def test_an_h100_gets_the_h100_profile(self):
        made = this_machine(probe_named(self.dir, "NVIDIA H100 80GB HBM3"), self.host)
        self.assertEqual(made.returncode, 0, made.stderr)
        self.assertIn("\ngpu: h100-sxm\n", made.stdout)
        self.assertIn("one NVIDIA H100 80GB HBM3", made.stdout)
        # The H200's HBM copy over the H100's 3.35 TB/s: what it measured, against this GPU's figure.
        self.assertAlmostEqual(calibration_of(made.stdout)["hbm_efficiency"], 4276 / 3350, places=3)

    def test_the_profile_loads_and_the_plans_simulate_on_it(self):
        made = this_machine(probe_named(self.dir, "NVIDIA H100 80GB HBM3"), self.host)
        plans = self.dir / "plans"
        shutil.copytree(ROOT / "bench/gpu/plans", plans)
        (plans / "this-machine.yaml").write_text(made.stdout)
        plan = plans / "tiny-gpt-zero-offload.yaml"
        plan.write_text(re.sub(r"^machine: .*$", "machine: this-machine.yaml", plan.read_text(), flags=re.M))
        run = subprocess.run([STOWAGE, "simulate", "--json", plan.name], cwd=plans, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertGreater(json.loads(run.stdout)["step_time_s"], 0)

    def test_the_gpu_is_found_by_the_device_names_its_profile_lists(self):
        listed = json.loads(subprocess.run([STOWAGE, "profiles", "gpu", "--json"], check=True, capture_output=True,
                                           text=True).stdout)
        names = {name: profile["name"] for profile in listed for name in profile["figures"]["device_names"]}
        self.assertEqual(names["NVIDIA H100 80GB HBM3"], "h100-sxm")
        for device, profile in [("NVIDIA GeForce RTX 4090", "rtx-4090"), ("Tesla T4", "t4")]:
            made = this_machine(probe_named(self.dir, device), self.host)
            self.assertEqual(made.returncode, 0, made.stderr)
            self.assertIn(f"\ngpu: {profile}\n", made.stdout)

    def test_a_gpu_without_a_profile_is_refused_by_name(self):
        made = this_machine(probe_named(self.dir, "NVIDIA H100 NVL"), self.host)
        self.assertEqual(made.returncode, 1)
        self.assertEqual(made.stdout, "")
        self.assertIn("no bundled GPU profile for 'NVIDIA H100 NVL'", made.stderr)
        self.assertIn("--gpu", made.stderr)
        given = this_machine(probe_named(self.dir, "NVIDIA H100 NVL"), self.host, "--gpu", "h100-pcie")
        self.assertEqual(given.returncode, 0, given.stderr)
        self.assertIn("\ngpu: h100-pcie\n", given.stdout)

    def test_missing_measurements_are_refused(self):
        no_adam = host_profile(self.dir, re.sub(r"^  cpu_core_rate: .*\n", "", HOST_PROFILE, flags=re.M))
        made = this_machine(probe_named(self.dir, "NVIDIA H200"), no_adam)
        self.assertEqual(made.returncode, 1)
        self.assertIn("it lacks cpu_core_rate", made.stderr)
        unnamed = self.dir / "unnamed.txt"
        unnamed.write_text(re.sub(r"^device 0: .*\n", "", probe_named(self.dir, "NVIDIA H200").read_text()))
        made = this_machine(unnamed, self.host)
        self.assertEqual(made.returncode, 1)
        self.assertIn("does not name its device", made.stderr)


if __name__ == "__main__":
    STOWAGE = str(pathlib.Path(sys.argv.pop(1)).resolve())
    unittest.main()
