"""bench/gpu/check.sh rehearsed without a GPU (bench/gpu/rehearse): the
script's own logic, which otherwise first runs on a machine lent for
minutes. With the CUDA runs stood in for by the CPU backend, the check
must pass, compare each tiny plan's loss curve with the CPU's, give the
enqueue-only run the flags and steps of the run it is compared with (it
once ran 10 steps against a 3-step run, and a default of --products would
have given it other products), and print item 6's table with a row for
every CUDA run. Run by ctest as bench.gpu_check_rehearsal.

  python3 gpu_check_rehearsal_test.py STOWAGE
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
STOWAGE = None


class Rehearsal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = pathlib.Path(cls.tmp.name) / "rehearsal"
        cls.outcome = subprocess.run([str(ROOT / "bench/gpu/rehearse"), STOWAGE, str(cls.dir)],
                                 capture_output=True, text=True, timeout=600)
        check = cls.dir / "out/check.txt"
        cls.check = check.read_text() if check.exists() else ""
        calls = cls.dir / "stowage-calls.txt"
        cls.calls = calls.read_text().splitlines() if calls.exists() else []

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def runs(self, plan, backend="cuda"):
        return [c for c in self.calls if c.startswith(f"run bench/gpu/plans/{plan}.yaml --backend {backend} ")]

    def test_the_check_passes(self):
        self.assertEqual(self.outcome.returncode, 0, self.check[-3000:] + self.outcome.stderr[-2000:])

    def test_each_tiny_plans_loss_curve_against_the_cpus(self):
        for plan in ("tiny-gpt-zero-offload", "tiny-gpt-fp16-zero-offload"):
            self.assertIn(f"{plan} loss curve, cuda against cpu: 3 steps, largest relative difference 0\n",
                          self.check)
        self.assertIn("enqueue-only against the synchronising cuda run: identical", self.check)

    def test_each_cuda_run_gets_its_products(self):
        (bf16,) = self.runs("tiny-gpt-zero-offload")[:1]
        (fp16,) = self.runs("tiny-gpt-fp16-zero-offload")
        self.assertIn("--layers device --products fp32 ", bf16)
        self.assertIn("--layers device --products fp16 ", fp16)

    def test_the_enqueue_only_run_is_the_compared_runs_but_for_the_flag(self):
        waiting, enqueuing = self.runs("tiny-gpt-zero-offload")
        self.assertEqual(enqueuing.replace(" --enqueue-only", "").replace(".enqueue-only.", ".cuda."), waiting)

    def test_one_table_with_a_row_for_every_cuda_run(self):
        head = next((l for l in self.check.splitlines() if l.startswith("| run | layers | measured step")), "")
        self.assertIn("| error | gpu.compute | pcie.h2d | pcie.d2h | cpu.optim |", head)
        for run in ("tiny-gpt-zero-offload.cuda", "tiny-gpt-fp16-zero-offload.cuda",
                    "tiny-gpt-zero-offload.enqueue-only"):
            self.assertRegex(self.check, rf"\n\| {run} \| [^|]+ \| [\d.]+ m?s \| [\d.]+ m?s \| [+-][\d.]+% \|")


if __name__ == "__main__":
    STOWAGE = sys.argv.pop(1)
    unittest.main()
