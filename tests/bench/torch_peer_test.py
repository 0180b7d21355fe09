"""bench/gpu/torch_peer.py's parsing of cuda_probe's output, on the output
recorded on the H200 (bench/gpu/results/2026-12-04-run2/probe.txt), its
side-by-side table, and bench/gpu/probe_calibration.py's calibration
section from it. Standard library only (the script imports torch
only to measure). Run by ctest as TorchPeer.ParsesRecordedProbeOutput."""
import pathlib
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench/gpu"))
import probe_calibration  # noqa: E402
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

    def test_the_executors_products_are_not_read_as_bf16_gemms(self):
        # cuda_probe's table of the CUDA backend's products (fp32 operands,
        # print_executor_products), after the bf16 GEMMs: rows that start
        # with a word, which the GEMM rows' pattern must not take.
        executor = ("the executor's products on fp32 operands (--products), TFLOP/s and share of the bf16 GEMM's\n"
                    + "%-28s %16s %16s %16s\n" % ("m x n x k", "bf16", "fp16", "fp32")
                    + "products %5d x %5d x %5d" % (2048, 2048, 8192)
                    + "".join(" %8.1f (%4.2f)" % (r, r / 866.9) for r in (612.0, 640.5, 51.2)) + "\n")
        rows = torch_peer.parse_probe(PROBE.read_text() + "\n" + executor)
        self.assertEqual(rows, self.rows)

    def test_side_by_side_ratios_and_missing_rows(self):
        theirs = {("hbm_copy",): 4000.0, ("adam", "fused"): 100e9}
        table = torch_peer.side_by_side(self.rows, theirs).splitlines()
        self.assertEqual(len(table), 3)  # header, and only the rows both sides have
        hbm = next(line for line in table if line.startswith("HBM copy"))
        self.assertTrue(hbm.endswith(" 1.069"), hbm)  # 4276 / 4000
        adam = next(line for line in table if "torch fused" in line)
        self.assertTrue(adam.endswith(" 1.349"), adam)  # 134.90 / 100


class ProbeCalibration(unittest.TestCase):
    # profiles/gpus/h200.yaml as `stowage profiles gpu --json` gives it
    GPU = {"memory_bandwidth_bytes_per_s": 4800e9, "fp16_flops_per_s": 989e12}

    def test_the_h200_run(self):
        values = probe_calibration.calibration(torch_peer.parse_probe(PROBE.read_text()), self.GPU)
        # pinned 16 MiB, 256 MiB, 1 GiB: h2d 54.93 55.54 55.56, d2h 55.17 55.36 55.42
        self.assertEqual(values["h2d_rate"], "55.5 GB/s")
        self.assertEqual(values["d2h_rate"], "55.4 GB/s")
        self.assertEqual(values["hbm_efficiency"], round(4276 / 4800, 3))
        # GEMMs 868.0 892.9 903.6 736.8 805.3 866.9: median 867.45 of 989
        self.assertEqual(values["matmul_efficiency"], round(867.45 / 989, 3))

    def test_an_output_without_gemms_is_refused(self):
        text = PROBE.read_text().split("bf16 GEMM")[0]
        with self.assertRaises(ValueError):
            probe_calibration.calibration(torch_peer.parse_probe(text), self.GPU)

    def test_a_profile_without_rates_is_refused(self):
        with self.assertRaises(ValueError):
            probe_calibration.calibration(torch_peer.parse_probe(PROBE.read_text()), {"memory_bytes": 1})


if __name__ == "__main__":
    unittest.main()
