#!/usr/bin/env python3
"""Checks bench/peers/deepspeed_estimator_check's domain, parsing and verdicts
on a recorded run (no torch, no DeepSpeed needed):
tests/bench/deepspeed_estimator_check_sample.txt is the output of DeepSpeed's
own estimator functions (DeepSpeed 0.19.8) on every bundled machine x model x
DeepSpeed placement, each line carrying the case and Stowage's figures of
the time. tests/core/memory_estimate_test.cpp holds today's Stowage to the
same recorded DeepSpeed figures."""

import copy
import importlib.machinery
import importlib.util
import itertools
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def load_check():
    path = ROOT / "bench" / "peers" / "deepspeed_estimator_check"
    loader = importlib.machinery.SourceFileLoader("deepspeed_estimator_check", str(path))
    spec = importlib.util.spec_from_loader("deepspeed_estimator_check", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


check = load_check()
SAMPLE = (HERE / "deepspeed_estimator_check_sample.txt").read_text()
RESULTS = check.parse_results(SAMPLE)
ESTIMATES, MODELS = check.split(RESULTS)
# The 14 DeepSpeed placements by name (core/placement.cpp deepspeed_placements).
DEEPSPEED_PLACEMENTS = ["zero-0", "zero-1", "zero-1-optimizer-cpu", "zero-2", "zero-2-optimizer-cpu"] + [
    "zero-3" + ("" if o == "gpu" else "-optimizer-" + o) + ("" if p == "gpu" else "-params-" + p)
    for o in ("gpu", "cpu", "nvme") for p in ("gpu", "cpu", "nvme")]
COVERED = {"zero-1", "zero-1-optimizer-cpu", "zero-2", "zero-2-optimizer-cpu", "zero-3", "zero-3-optimizer-cpu",
           "zero-3-optimizer-cpu-params-cpu"}


class Domain(unittest.TestCase):
    def test_deepspeed_estimator_poses_exactly_seven_of_the_fourteen(self):
        self.assertEqual({n for n in DEEPSPEED_PLACEMENTS if check.estimator_call(n)}, COVERED)

    def test_calls(self):
        self.assertEqual(check.estimator_call("zero-1-optimizer-cpu"), {"function": "zero2", "cpu_offload": True})
        self.assertEqual(check.estimator_call("zero-3-optimizer-cpu-params-cpu"),
                         {"function": "zero3", "cpu_offload": True, "cpu_offload_params": True})
        # Parameters offloaded without the optimizer: DeepSpeed's zero3
        # estimator reads cpu_offload_params only under cpu_offload.
        self.assertIsNone(check.estimator_call("zero-3-params-cpu"))
        self.assertIsNone(check.estimator_call("zero-3-optimizer-nvme"))
        self.assertIsNone(check.estimator_call("zero-3-optimizer-cpu-ratio-0.5"))
        self.assertIsNone(check.estimator_call("zero-0"))


class RecordedRun(unittest.TestCase):
    def test_covers_every_bundled_machine_model_and_placement(self):
        machines, models = check.bundled("machines"), check.bundled("models")
        self.assertGreaterEqual(len(machines), 6)
        self.assertGreaterEqual(len(models), 25)
        want = {(a, b, p) for a, b in itertools.product(machines, models) for p in DEEPSPEED_PLACEMENTS}
        self.assertEqual({(r["machine"], r["model"], r["placement"]) for r in ESTIMATES}, want)
        self.assertEqual(len(ESTIMATES), len(want))
        self.assertEqual(sorted(m["model"] for m in MODELS), models)

    def test_made_by_deepspeed_and_transformers_themselves(self):
        self.assertEqual({r.get("deepspeed_version") for r in ESTIMATES if r["call"]}, {"0.19.8"})
        self.assertEqual({m["transformers_version"] for m in MODELS}, {"5.24.0"})

    def test_every_case_agrees(self):
        summary = check.summarise(RESULTS)
        self.assertEqual(summary["failures"], [])
        self.assertEqual(set(summary["placements"]), COVERED)
        self.assertEqual(summary["compared"], len(ESTIMATES) * len(COVERED) // len(DEEPSPEED_PLACEMENTS))
        self.assertEqual(len(summary["models_checked"]), len(MODELS))
        # The recorded run agrees to the byte (the slack is for future models).
        self.assertEqual(summary["max_gpu_difference"], 0)
        self.assertEqual(summary["max_cpu_difference"], 0)
        self.assertIn("all agree", check.format_summary(summary))

    def test_a_figure_off_by_more_than_the_floors_fails(self):
        results = copy.deepcopy(RESULTS)
        hit = next(r for r in check.split(results)[0] if r["call"] and r["call"]["function"] == "zero3")
        hit["stowage_cpu"] += check.FLOOR_SLACK + 1
        summary = check.summarise(results)
        self.assertEqual(len(summary["failures"]), 1)
        self.assertIn("cpu: stowage", summary["failures"][0][3])
        self.assertIn("1 disagreements", check.format_summary(summary))

    def test_a_largest_module_other_than_deepspeeds_fails(self):
        # What Stowage said before its experts were one module: Mixtral's
        # largest module was the embedding, where DeepSpeed gathers a
        # layer's fused experts at once.
        results = copy.deepcopy(RESULTS)
        hit = next(m for m in check.split(results)[1] if m["model"] == "mixtral-8x7b")
        self.assertEqual(hit["largest_module"], "model.layers.0.mlp.experts")
        hit["stowage_largest_module_params"] = 32000 * 4096
        failures = check.summarise(results)["failures"]
        self.assertEqual(len(failures), 1)
        self.assertIn("largest module: stowage 131072000, DeepSpeed 1409286144", failures[0][3])

    def test_a_placement_stowage_covers_and_deepspeed_does_not_fails(self):
        results = copy.deepcopy(RESULTS)
        hit = next(r for r in results if r.get("placement") == "zero-3-params-cpu")
        hit["stowage_covers"] = True
        self.assertIn("has no formula for it, Stowage says it covers it", check.verdict(hit))
        self.assertEqual(len(check.summarise(results)["failures"]), 1)

    def test_logs_and_untagged_lines_are_skipped(self):
        tagged = [l for l in SAMPLE.splitlines() if check.RESULT_TAG in l]
        text = "[INFO] import\n" + tagged[-1] + "\n" + check.RESULT_TAG + '{"cut'
        self.assertEqual(len(check.parse_results(text)), 1)


if __name__ == "__main__":
    sys.exit(unittest.main())
