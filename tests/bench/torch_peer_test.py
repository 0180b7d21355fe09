"""bench/gpu/torch_peer.py's parsing of cuda_probe's output, on the output
recorded on the H200 (bench/gpu/results/2026-12-04-run2/probe.txt), and
its side-by-side table. Standard library only (the script imports torch
only to measure). Run by ctest as TorchPeer.ParsesRecordedProbeOutput."""
import pathlib
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench/gpu"))
import torch_peer  # noqa: E402

PROBE = ROOT / "bench/gpu/results/2026-12-04-run2/probe.txt"


class ParseProbe(unittest.TestCase):
    def setUp(self):
        self.rows = torch_peer.parse_probe(PROBE.read_text())

    def test_every_copy_row_both_directions(self):
        # 5 sizes x pinned/pageable x h2d/d2h
        copies = [k for k in self.rows if k[0] in ("h2d", "d2h")]
        self.assertEqual(len(copies), 20)
        self.assertEqual(self.rows[("h2d", "pinned", 1048576)], 55.56)
        self.assertEqual(self.rows[("d2h", "pageable", 64)], 4.50)

    def test_hbm_adam_and_gemms(self):
        self.assertEqual(self.rows[("hbm_copy",)], 4276)
        # the fp32-moment row, not the bf16 one
        self.assertEqual(self.rows[("adam", "stowage")], 134.90e9)
        self.assertEqual(len([k for k in self.rows if k[0] == "gemm"]), 6)
        self.assertEqual(self.rows[("gemm", 2048, 2048, 8192)], 866.9)

    def test_side_by_side_ratios_and_missing_rows(self):
        theirs = {("hbm_copy",): 4000.0, ("adam", "fused"): 100e9}
        table = torch_peer.side_by_side(self.rows, theirs).splitlines()
        self.assertEqual(len(table), 3)  # header, and only the rows both sides have
        hbm = next(line for line in table if line.startswith("HBM copy"))
        self.assertTrue(hbm.endswith(" 1.069"), hbm)  # 4276 / 4000
        adam = next(line for line in table if "torch fused" in line)
        self.assertTrue(adam.endswith(" 1.349"), adam)  # 134.90 / 100


if __name__ == "__main__":
    unittest.main()
