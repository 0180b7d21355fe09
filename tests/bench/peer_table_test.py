"""The peer scripts' parsing (bench/peers/peer_table.py) on recorded samples
of their output (tests/data/peers/*.log): which lines count, the
min/median/max of each contender, the ratio to the best peer doing the same
work, and the reasons a peer did not run. Expected numbers worked out by
hand in the comments. Run by ctest as PeerTable.ParsesRecordedOutput."""
import pathlib
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench/peers"))
import peer_table  # noqa: E402

DATA = ROOT / "tests/data/peers"
M = 1 << 20


def lines(name):
    return (DATA / name).read_text().splitlines()


class AdamTable(unittest.TestCase):
    def test_counts_only_well_formed_pass_lines(self):
        rates, unavailable = peer_table.parse_adam(lines("adam_sample.log"))
        # 9 idle 1M lines (3 kernels x 3), 3 busy 16M lines; the log line of
        # a library and "params=oops" are not counted.
        self.assertEqual(sorted(rates), [(M, 1, "idle"), (16 * M, 2, "busy")])
        self.assertEqual(len(rates[(M, 1, "idle")]["adam"]), 3)
        self.assertEqual(len(rates[(M, 1, "idle")]["ds_adam_copy"]), 3)
        self.assertEqual(len(rates[(16 * M, 2, "busy")]), 3)
        self.assertEqual(unavailable, {"ds_adam": "RuntimeError: Error building extension 'cpu_adam' (no compiler)"})

    def test_rates_are_params_over_seconds(self):
        rates, _ = peer_table.parse_adam(lines("adam_sample.log"))
        # 1048576 params in 0.000736 s = 1.4247e9 params/s.
        self.assertAlmostEqual(rates[(M, 1, "idle")]["adam"][0], 1048576 / 0.000736)

    def test_table_shows_spread_and_ratio_to_the_best_same_work_peer(self):
        table = peer_table.adam_table(lines("adam_sample.log"))
        one_m = next(l for l in table.splitlines() if l.startswith("| 1M | 1 | idle"))
        cells = [c.strip() for c in one_m.strip("|").split("|")]
        # adam: 1048576 / {0.000736, 0.002975, 0.000672} s = {1424.7, 352.5,
        # 1560.4} M/s: median 1425, min 352, max 1560.
        self.assertEqual(cells[3], "1425 [352-1560]")
        # ds_adam_copy: / {0.002247, 0.002226, 0.005896} = {466.7, 471.1, 177.8}.
        self.assertEqual(cells[6], "467 [178-471]")
        # stowage / best: 1424.7 / 466.7 = 3.05; worst 352.5 / 471.1 = 0.75.
        self.assertEqual(cells[9], "3.05 (worst 0.75)")
        self.assertEqual(cells[10], "ds_adam_copy")
        # roofline: / {0.000896, 0.000841, 0.000888} = {1170.3, 1246.8,
        # 1180.8}; 1424.7 / 1180.8 = 1.21; worst 352.5 / 1246.8 = 0.28.
        self.assertEqual(cells[4], "1181 [1170-1247]")
        self.assertEqual(cells[11], "1.21 (worst 0.28)")

    def test_the_best_peer_is_the_fastest_by_median(self):
        table = peer_table.adam_table(lines("adam_sample.log"))
        busy = next(l for l in table.splitlines() if l.startswith("| 16M | 2 | busy"))
        cells = [c.strip() for c in busy.strip("|").split("|")]
        # foreach: 16 Mi / 0.05 s = 335.5 M/s beats fused's 209.7; adam
        # 419.4: 419.4 / 335.5 = 1.25.
        self.assertEqual(cells[10], "torch_foreach_copy")
        self.assertEqual(cells[9], "1.25 (worst 1.25)")
        self.assertIn("ds_adam: did not run: RuntimeError", table)


class NvmeTable(unittest.TestCase):
    def test_rates_depths_and_ratio_to_the_best_other_tool(self):
        table = peer_table.nvme_table(lines("nvme_sample.log"))
        read = next(l for l in table.splitlines() if l.startswith("| read | 1 MiB | 8"))
        cells = [c.strip() for c in read.strip("|").split("|")]
        # stowage {2.0, 1.0, 1.5} GB/s: median 1.50; libaio {1.4, 1.6}:
        # median 1.50 beats io_uring's 1.20. 1.5 / 1.5 = 1.00; worst 1.0 / 1.6
        # = 0.62 (0.625 rounds to even).
        self.assertEqual(cells[3], "1.50 [1.00-2.00]")
        self.assertEqual(cells[5], "1.50 [1.40-1.60]")
        self.assertEqual(cells[7], "1.00 (worst 0.62)")
        self.assertEqual(cells[8], "fio_libaio")
        # queue depth kept {7.91, 7.80, 7.85}: median 7.85, stored as 7.8499...: 7.8.
        self.assertEqual(cells[9], "7.8 [7.8-7.9]")
        write = next(l for l in table.splitlines() if l.startswith("| write | 8 MiB | 32"))
        self.assertIn("0.50 (worst 0.50) | ds_aio", write)
        self.assertIn("ds_aio: did not run: exit 1: something", table)


if __name__ == "__main__":
    unittest.main()
