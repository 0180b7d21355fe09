// A training run: the plan's policy lowered to schedules of at most
// TrainerOptions::steps_per_schedule steps, interpreted on a backend one
// after the other, each starting from the state the one before left (as a
// resume from its checkpoint would), so that memory stays bounded however
// long the run. Owns the model, the data and every partition's home.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/machine_spec.h"
#include "core/model_spec.h"
#include "core/plan_file.h"
#include "core/schedule.h"
#include "core/timeline.h"
#include "core/training_spec.h"
#include "executor/backend.h"
#include "executor/loss_scaler.h"

namespace stowage::executor {

// One finished step, as the progress line shows it.
struct StepReport {
  int64_t step = 0;          // global, 0-based
  double loss = 0;           // mean over the step's micro-batches
  double seconds = 0;        // since the previous step finished (the first: since the run began)
  double tokens_per_second = 0;
  std::array<int64_t, core::kLaneCount> bytes{};  // moved per lane in this step
  bool skipped = false;       // a gradient was not finite (fp16 overflow): the update was skipped
  int64_t skipped_total = 0;  // steps skipped so far in the run, this one included
};

struct TrainerOptions {
  int64_t steps = 100;        // global step to stop at (exclusive)
  // Steps lowered and run as one schedule; 0: as many as kOpsPerRunSchedule
  // ops hold (steps_per_run_schedule). A boundary drains the lanes, as a
  // resume does, and changes no loss.
  int64_t steps_per_schedule = 0;
  uint64_t seed = 1;          // parameters and data order
  std::filesystem::path data;  // a text file of bytes; empty: the generated corpus
  std::optional<std::filesystem::path> checkpoint_root;
  int64_t checkpoint_every = 0;  // steps; 0: only at the end when a root is given
  std::optional<std::filesystem::path> resume;  // a checkpoint directory
  std::string plan_name;       // recorded in checkpoints
  // Start from these weights instead of the architecture's initialisation:
  // every layer's fp32 parameters in core::Workload's layout, as
  // load_initial_weights reads them. Not with resume.
  std::optional<std::vector<std::vector<float>>> initial_weights;
  // After the last step, write the fp32 master weights there as safetensors
  // with Hugging Face names (Llama or GPT-2 layout; check_export says).
  std::optional<std::filesystem::path> export_weights;
  // The prediction of the run's schedule (`stowage run` passes the
  // simulator on the plan's machine). The run applies its memory effects in
  // the order predicted (Schedule::memory_order, core/memory_gate.h), so
  // each tier's measured peak is the predicted one to the byte; without
  // it the peaks depend on how the lanes happen to race.
  std::function<core::Timeline(const core::Schedule&)> predict;
  std::function<void(const StepReport&)> on_step;
  std::function<void(const std::string&)> on_note;  // "checkpoint written to ..."
  // Stop with a report of every lane when no op finished for this long.
  std::chrono::nanoseconds watchdog = std::chrono::seconds(60);
  // Set to ask the run to stop early (SIGINT, SIGTERM): the steps whose
  // update has begun finish, a checkpoint of the last one is written when a
  // root is given, and the run returns with `interrupted`. May be null.
  const std::atomic<int>* stop = nullptr;
  // The host memory free now (`stowage run` reads MemAvailable), or null
  // where unknown: a plan whose homes in host memory alone need more is
  // refused before anything is allocated, and one whose predicted peak
  // (with predict) needs more than the setup left, before its first step
  // (host_memory.h). Unset: not checked.
  std::function<std::optional<int64_t>()> host_memory_available;
};

struct TrainingRun {
  int64_t first_step = 0;            // where it began (after a resume)
  std::vector<double> losses;        // by step from first_step
  double held_out_loss = 0;          // after the last step
  double unigram_entropy = 0;        // nats per byte of the training data
  double seconds = 0;                // wall time of the steps
  // The run's first schedule (the whole run when it is one), checkpoints
  // included, and its measured timeline in its ids: what traces, lane busy
  // and the measured step are of. Later schedules are not kept.
  core::Schedule schedule;
  core::Timeline timeline;
  double schedule_seconds = 0;  // wall time of that first schedule
  int64_t schedules = 0;        // how many schedules the run was lowered as
  // Each tier's peak over every schedule: measured, and as the prediction
  // of each (TrainerOptions::predict) placed its memory effects; by Tier.
  std::array<core::Bytes, 3> peak{};
  std::optional<std::array<core::Bytes, 3>> predicted_peak;
  std::vector<std::string> checkpoints;  // directories written
  int64_t replayed_steps = 0;            // speculative updates rolled back and replayed (failed checks)
  bool interrupted = false;              // stopped on request before the last step (TrainerOptions::stop)
};

// A run schedule's size: lowering holds far more (core::kMaxScheduleOps),
// but a schedule, its prediction and its timeline cost about 1 KB an op.
inline constexpr int64_t kOpsPerRunSchedule = 1'000'000;

// The most steps one schedule of the plan holds within `ops` ops by the
// lowering's estimate, at least 1: TrainerOptions::steps_per_schedule's
// default with kOpsPerRunSchedule, the most lowering takes with
// core::kMaxScheduleOps.
[[nodiscard]] int64_t steps_per_run_schedule(const core::PlanFile& plan, const core::ModelSpec& model,
                                             const core::TrainingSpec& training,
                                             int64_t ops = kOpsPerRunSchedule);

// Whether the executor can run the plan at all: one GPU, a GPT-2-style or
// Llama-style model, a lowerable policy. Empty when it can; train() checks it too.
[[nodiscard]] core::Diagnostics check_runnable(const core::PlanFile& plan, const core::MachineSpec& machine,
                                               const core::ModelSpec& model, const core::TrainingSpec& training);

// The weights of a safetensors file with Hugging Face names for the plan's
// model, or every mismatch with it (missing, misshapen or extra tensors, a
// damaged file): bad input, found before anything runs.
[[nodiscard]] core::Result<std::vector<std::vector<float>>> load_initial_weights(
    const std::filesystem::path& path, const core::PlanFile& plan, const core::ModelSpec& model,
    const core::TrainingSpec& training);

// Empty when the plan's model can be exported with --export-weights.
[[nodiscard]] core::Diagnostics check_export(const core::PlanFile& plan, const core::ModelSpec& model,
                                             const core::TrainingSpec& training);

// Runs the plan. Everything the plan or options get wrong comes back as
// diagnostics before anything runs; a failure while running stops every
// lane and names the op, and leaves the last checkpoint as it was.
[[nodiscard]] core::Result<TrainingRun> train(const core::PlanFile& plan, const core::MachineSpec& machine,
                                              const core::ModelSpec& model, const core::TrainingSpec& training,
                                              Backend& backend, const TrainerOptions& options);

}  // namespace stowage::executor
