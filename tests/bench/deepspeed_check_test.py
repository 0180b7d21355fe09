#!/usr/bin/env python3
"""Checks bench/peers/deepspeed_check's parsing and table on a recorded run
(no torch, no DeepSpeed needed): tests/bench/deepspeed_check_sample.txt is
the stdout of a real case run under DeepSpeed 0.19.8 on its CPU accelerator
(DeepSpeed's log lines included), deepspeed_check_pools_sample.json the
`stowage export --pools-json` report it was checked against."""

import copy
import importlib.machinery
import importlib.util
import json
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def load_check():
    path = ROOT / "bench" / "peers" / "deepspeed_check"
    loader = importlib.machinery.SourceFileLoader("deepspeed_check", str(path))
    spec = importlib.util.spec_from_loader("deepspeed_check", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


check = load_check()
SAMPLE = (HERE / "deepspeed_check_sample.txt").read_text()
POOLS = json.loads((HERE / "deepspeed_check_pools_sample.json").read_text())
CASE = {"name": "optimizer-nvme", "machine": "workstation-24gb-1nvme", "model": "llama-2-13b"}


class ParseChildOutput(unittest.TestCase):
    def test_finds_the_tagged_line_among_deepspeed_logs(self):
        r = check.parse_child_output(SAMPLE)
        self.assertIsNotNone(r)
        self.assertTrue(r["ok"])
        self.assertEqual(r["launcher"], "deepspeed")
        self.assertEqual(r["steps"], 3)
        self.assertEqual(r["optimizer_steps"], 3)
        self.assertIn("optimizer swap buffers", r["allocated"])

    def test_no_tagged_line_is_none(self):
        untagged = "\n".join(l for l in SAMPLE.splitlines() if not l.startswith(check.RESULT_TAG))
        self.assertIsNone(check.parse_child_output(untagged))

    def test_results_of_ranks_sharing_a_line_are_all_read(self):
        # Eight ranks of `accelerate launch` write to one pipe; one rank's
        # result may follow another's on the same line.
        one = check.RESULT_TAG + json.dumps({"ok": True, "steps": 3, "rank": 0})
        two = check.RESULT_TAG + json.dumps({"ok": True, "steps": 3, "rank": 1})
        text = "log line\n" + one + two + "\n[INFO] more\n" + check.RESULT_TAG + '{"cut'
        results = check.parse_child_results(text)
        self.assertEqual([r["rank"] for r in results], [0, 1])
        self.assertEqual(check.parse_child_output(text)["rank"], 1)

    def test_the_last_tagged_line_wins(self):
        text = SAMPLE + "\n" + check.RESULT_TAG + json.dumps({"ok": False, "steps": 0}) + "\n"
        self.assertFalse(check.parse_child_output(text)["ok"])


class Row(unittest.TestCase):
    def setUp(self):
        self.direct = check.parse_child_output(SAMPLE)
        self.launched = dict(self.direct, launcher="accelerate")

    def test_recorded_run_matches_the_prediction(self):
        row = check.row_of(CASE, POOLS, self.direct, self.launched, refused=False)
        self.assertTrue(row["accepts"])
        self.assertEqual(row["steps"], "3/3")
        self.assertTrue(row["shape_ok"])
        # Predicted: the pinned pools of the report; allocated: DeepSpeed's
        # buffers of those pools in the recorded run.
        self.assertEqual(row["pinned_predicted"],
                         sum(p["bytes"] for p in POOLS["pools"] if p["pinned"] and p["tier"] == "cpu"))
        self.assertLessEqual(check.relative_difference(row["pinned_predicted"], row["pinned_allocated"]),
                             check.TOLERANCE)
        self.assertTrue(row["pinned_ok"])
        self.assertTrue(row["swap_folder_ok"])
        self.assertTrue(check.all_passed([row]))

    def test_a_pool_ten_percent_off_fails(self):
        direct = copy.deepcopy(self.direct)
        direct["allocated"]["optimizer swap buffers"] = int(direct["allocated"]["optimizer swap buffers"] * 1.5)
        row = check.row_of(CASE, POOLS, direct, self.launched, refused=False)
        self.assertFalse(row["pinned_ok"])
        self.assertFalse(check.all_passed([row]))

    def test_optimizer_stepping_every_micro_step_fails(self):
        launched = dict(self.launched, optimizer_steps=self.launched["micro_steps"])
        row = check.row_of(CASE, POOLS, self.direct, launched, refused=False)
        if launched["micro_steps"] != launched["steps"]:
            self.assertFalse(row["shape_ok"])
            self.assertFalse(check.all_passed([row]))

    def test_a_failed_run_is_not_accepted(self):
        row = check.row_of(CASE, POOLS, {"ok": False, "steps": 0, "config_ok": False, "error": "E: x"}, None, True)
        self.assertFalse(row["accepts"])
        self.assertIsNone(row["pinned_allocated"])
        self.assertEqual(row["exported"], "lossy")
        self.assertIn("error in", check.format_table([row]))


class Table(unittest.TestCase):
    def test_has_the_issue_columns_and_one_line_per_row(self):
        row = check.row_of(CASE, POOLS, check.parse_child_output(SAMPLE), None, refused=False)
        text = check.format_table([row, row])
        lines = text.splitlines()
        for column in ("DeepSpeed accepts", "steps ds/acc", "pinned predicted", "allocated",
                       "GPU share planned -> realised", "swap folder as planned"):
            self.assertIn(column, lines[0])
        self.assertEqual(len(lines), 4)  # header, rule, two rows
        self.assertTrue(all(l.startswith("| ") for l in (lines[0], lines[2], lines[3])))


if __name__ == "__main__":
    sys.exit(unittest.main())
