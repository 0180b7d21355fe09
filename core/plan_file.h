// The plan file (`format: stowage/plan/v1`, docs/formats/plan.md): a policy
// plus the names of the machine, model and training profiles it was made
// for, and optionally the figures the simulator predicted for it. Writing
// then reading a plan gives back exactly the same PlanFile, doubles included.
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "core/policy.h"
#include "core/profile_reference.h"  // is_path_reference, declared here before
#include "core/units.h"

namespace stowage::core {

// What the simulator predicted for a plan, for one training step.
struct PredictedFigures {
  Seconds step_time;
  double tokens_per_second = 0;     // tokens the whole machine trains per second
  double model_tflops_per_gpu = 0;  // model FLOPs (no recompute) per GPU, in TFLOP/s
  // The peak memory of each tier, indexed by static_cast<size_t>(Tier):
  // gpu is per GPU, cpu and nvme are per machine.
  std::array<Bytes, 3> peak_memory{};
  std::string bounding_lane;  // the lane that bounds the step, e.g. "nvme.read"
  bool operator==(const PredictedFigures&) const = default;
};

// Where each field of a plan file was read, by qualified name
// ("policy.partitions", "policy.partitions[3].optimizer"), so that a problem
// found after reading (lowering finds too few partitions for the model)
// still names file:line:column. Not part of what the plan means: two plans
// are equal whatever their places, and a plan not read from a file has none.
struct PlanPlaces {
  std::string file;
  std::map<std::string, SourceLocation, std::less<>> fields;
  bool operator==(const PlanPlaces&) const { return true; }
};

struct PlanFile {
  std::string machine;   // profile names, e.g. "workstation-24gb-1nvme"
  std::string model;     // "llama-2-7b"
  std::string training;  // "default"
  Policy policy;
  std::optional<PredictedFigures> predicted;
  PlanPlaces places;  // filled by read_plan and load_plan
  bool operator==(const PlanFile&) const = default;
};

// Gives a place to each diagnostic that has none and whose message starts
// with a plan field ("policy.partitions[3].optimizer: a GPU optimizer
// needs..."): that field's line and column in the plan file, or the nearest
// enclosing field's ("policy.partitions[3]", then "policy.partitions"), or
// at least the plan file. Diagnostics of other problems are left alone.
void locate_in_plan(Diagnostics& diagnostics, const PlanPlaces& places);

// The problems of loading the profile a plan's `field` ("machine", "model",
// "training") names: each that has no place of its own (an unknown profile
// name) becomes "field: what" at that field's line in the plan.
void locate_reference_problems(Diagnostics& diagnostics, std::string_view field, const PlanPlaces& places);

// The plan as YAML text, starting with `format: stowage/plan/v1`. Doubles are
// written in their shortest round-trip form and sizes as exact byte counts,
// so read_plan(write_plan(p)) == p. Precondition: the predicted figures are
// finite and not negative, and sizes are not negative (as read_plan requires).
// With `partition_names` (one per partition, "embedding", "layers.3"),
// each partition's line ends in a comment naming it, so a reader sees which
// layer each line places; comments are not read back.
[[nodiscard]] std::string write_plan(const PlanFile& plan, const std::vector<std::string>& partition_names = {});

// Reads a plan from `text`; `file` names it in diagnostics. Every problem in
// the text is reported at once, as file:line:column with the field's path
// ("policy.partitions[3].param16"). Partition count is not checked against
// a workload here: the plan file does not know the model's layers.
[[nodiscard]] Result<PlanFile> read_plan(const std::string& text, const std::string& file);

// Reads the plan file at `path`; an unreadable file is a diagnostic too.
// A relative path among the plan's references (`training: ./x.yaml`) names
// a file beside the plan, not in the working directory: it comes back
// joined to the plan's folder, so that the profile catalog finds it. A path
// reference must lie inside the plan's folder or `profiles_root` (the
// catalog's root), unless STOWAGE_ALLOW_PROFILE_PATHS=1 (core/profile_reference.h,
// the rule a machine profile's references follow too); one that does not is
// refused at its line: `plan.yaml:3:8: model: the reference '...' lies outside ...`.
[[nodiscard]] Result<PlanFile> load_plan(const std::filesystem::path& path,
                                         const std::filesystem::path& profiles_root);

// The plan with each path reference, given relative to the working
// directory, rewritten relative to the folder of `plan_path`, where the plan
// will be written; load_plan(plan_path) then finds the same files. Names of
// bundled profiles are left as they are.
[[nodiscard]] PlanFile with_references_relative_to(PlanFile plan, const std::filesystem::path& plan_path);

// What a command that writes `plan` (references already relative to it, as
// with_references_relative_to gives them) to `plan_path` should warn of: one
// line per reference that load_plan(plan_path, profiles_root) would refuse,
// a path the user gave on the command line that lies outside the plan's
// folder and the profile folder ("model: '../m.yaml' lies outside ...").
[[nodiscard]] std::vector<std::string> references_refused_on_reading(
    const PlanFile& plan, const std::filesystem::path& plan_path, const std::filesystem::path& profiles_root);

}  // namespace stowage::core
