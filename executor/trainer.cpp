#include "executor/trainer.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <span>
#include <system_error>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/gather_pieces.h"
#include "core/lower.h"
#include "core/memory_gate.h"
#include "core/memory_replay.h"
#include "core/policy.h"
#include "core/workload.h"
#include "executor/checkpoint/checkpoint_reader.h"
#include "executor/checkpoint/checkpoint_root.h"
#include "executor/checkpoint/checkpoint_write_error.h"
#include "executor/checkpoint/save_checkpoint.h"
#include "executor/compute_footprint.h"
#include "executor/crc32c.h"
#include "executor/host_memory.h"
#include "executor/interpreter.h"
#include "executor/lane_order.h"
#include "executor/model/byte_corpus.h"
#include "executor/model/half_convert.h"
#include "executor/model/hf_weights.h"
#include "executor/model/linear.h"
#include "executor/model/synthetic_text.h"
#include "executor/partition_homes.h"
#include "executor/resident_buffers.h"
#include "executor/trained_model.h"

namespace stowage::executor {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The executor holds no CUDA context and no data loader: the schedule it
// runs (and the prediction of it) reserves nothing for them.
constexpr core::RuntimeBuffers kNoReserves{.gpu_reserve = core::Bytes(0), .host_reserve = core::Bytes(0)};

// Partition names as lowering gives them.
std::vector<std::string> partition_names(const core::Workload& w, const std::vector<core::Partition>& parts) {
  std::vector<std::string> names;
  for (const core::Partition& p : parts) names.push_back(core::partition_name(w, p));
  return names;
}

std::span<const std::byte> bytes_of(std::span<const float> f) {
  return std::as_bytes(f);
}

// What a checkpoint's metadata says of itself that must hold for this run
// (issue 12: a wrong step or model resumed silently with other losses): the
// model the plan trains, and the step its directory is named for.
core::Diagnostics identity_problems(const nlohmann::json& meta, const std::filesystem::path& dir,
                                    const std::string& model) {
  core::Diagnostics problems;
  const std::string where = (dir / "manifest.json").string();
  const nlohmann::json* saved_model = meta.contains("model") ? &meta["model"] : nullptr;
  if (saved_model == nullptr || !saved_model->is_string() || saved_model->get<std::string>() != model) {
    problems.push_back(
        {{where},
         "the checkpoint is of model " + (saved_model ? saved_model->dump() : std::string("(none)")),
         "model \"" + model + "\", the plan's"});
  }
  const std::optional<int64_t> named = checkpoint_step(dir.filename().string());
  const nlohmann::json* step = meta.contains("step") ? &meta["step"] : nullptr;
  if (step == nullptr || !step->is_number_integer() || (named && step->get<int64_t>() != *named)) {
    problems.push_back({{where},
                        "the manifest says step " + (step ? step->dump() : std::string("(none)")) +
                            (named ? ", its directory's name step " + std::to_string(*named) : std::string()),
                        "the checkpoint saved in that directory (was it renamed?)"});
  }
  return problems;
}

// What a checkpoint records of the run that made it (CRC32C): the plan
// (profiles named, policy) and the corpus, both parts.
uint32_t digest_of(const core::PlanFile& plan) {
  const std::string text = core::write_plan(
      {.machine = plan.machine, .model = plan.model, .training = plan.training, .policy = plan.policy});
  return crc32c(std::as_bytes(std::span(text)));
}
uint32_t digest_of(const model::ByteCorpus& corpus) {
  const std::array<uint32_t, 2> parts{crc32c(std::as_bytes(corpus.part(model::CorpusPart::kTrain))),
                                      crc32c(std::as_bytes(corpus.part(model::CorpusPart::kHeldOut)))};
  return crc32c(std::as_bytes(std::span(parts)));
}

int64_t steps_within(const core::Policy& policy, const core::Workload& workload,
                     const core::TrainingSpec& training, int64_t ops) {
  return std::max<int64_t>(1, core::max_steps_in_one_schedule(policy, workload, training, ops));
}

// Each tier's peak: `so_far`'s, or a sample's above it.
std::array<core::Bytes, 3> max_peaks(std::array<core::Bytes, 3> so_far,
                                     const std::vector<core::MemorySample>& samples) {
  for (const core::MemorySample& m : samples) {
    core::Bytes& peak = so_far[static_cast<size_t>(m.tier)];
    peak = std::max(peak, m.bytes);
  }
  return so_far;
}

// The state of a run between schedules: what a checkpoint holds.
struct RunState {
  int64_t step = 0;
  LossScaler scaler;
  int64_t skipped = 0;
};

class Trainer {
 public:
  Trainer(const core::PlanFile& plan, const core::MachineSpec& machine, const core::TrainingSpec& training,
          const core::Workload& workload, const TrainedModel& model, const model::ByteCorpus& corpus,
          Backend& backend, const TrainerOptions& options, const std::vector<std::vector<float>>* initial)
      : plan_(plan),
        machine_(machine),
        training_(core::effective_training(training, plan.policy)),
        profile_training_(training),
        workload_(workload),
        model_(model),
        corpus_(corpus),
        backend_(backend),
        options_(options),
        initial_(initial),
        parts_(core::partitions_of(workload, plan.policy.sub_group_params)),
        names_(partition_names(workload, parts_)),
        plan_digest_(digest_of(plan)),
        corpus_digest_(digest_of(corpus)) {}

  core::Result<TrainingRun> run();

 private:
  core::Result<void> initialise();
  core::Result<void> restore(const std::filesystem::path& dir);
  core::Result<void> same_state_precision(const std::string& metadata_json, const std::filesystem::path& dir) const;
  core::Result<void> snapshot(size_t j, std::span<std::byte> into);
  // The memory samples the run told `recorder` from `first` on (at the
  // host's times), rebuilt over its spans as the device's clock retimed them.
  static void retime_memory(core::TimelineRecorder& recorder, const core::Schedule& schedule, size_t first);
  core::Result<std::string> save(const RunState& state,
                                 const std::vector<std::span<const std::byte>>& snapshots);
  core::Result<void> train_steps(TrainingRun& out);
  core::Result<void> run_schedule(ModelCompute& compute, const core::Workload& run_workload, int64_t steps,
                                  TrainingRun& out);
  core::Result<void> checkpoint_where_stopped(TrainingRun& out);
  core::Result<std::vector<std::vector<float>>> master_weights();
  core::Result<double> held_out_loss(std::vector<std::vector<float>> layers);
  // Micro-batch `index` of a part of the data, a function of the seed.
  void fill(model::CorpusPart part, int64_t index, std::span<int32_t> in, std::span<int32_t> target) const {
    model::TokenBatch b =
        corpus_.sample(part, options_.seed, index, training_.micro_batch, training_.sequence_length);
    std::copy(b.inputs.begin(), b.inputs.end(), in.begin());
    std::copy(b.targets.begin(), b.targets.end(), target.begin());
  }

  const core::PlanFile& plan_;
  const core::MachineSpec& machine_;
  const core::TrainingSpec training_;
  const core::TrainingSpec& profile_training_;
  const core::Workload& workload_;
  const TrainedModel& model_;
  const model::ByteCorpus& corpus_;
  Backend& backend_;
  const TrainerOptions& options_;
  const std::vector<std::vector<float>>* initial_;  // weights to start from; null: init_parameters
  std::vector<core::Partition> parts_;
  std::vector<std::string> names_;
  const uint32_t plan_digest_;    // computed once: the corpus may be large
  const uint32_t corpus_digest_;
  std::optional<PartitionHomes> homes_;
  RunState state_;
  int64_t checkpointed_step_ = -1;      // the step the last checkpoint op saved
  core::TimelineRecorder recorder_{0};  // the run's first schedule
  int64_t origin_ns_ = 0;
  int64_t last_step_ns_ = 0;
  std::mutex report_mutex_;
};

// Layers [first, first + out.size()) drawn by init_parameters, one thread
// each. Every layer draws from a stream of its own (derive_seed(seed,
// layer)), so neither the threads nor their order change a value. On two
// cores, initialise() of the 57M-parameter fidelity model (states on NVMe)
// took 3.5-3.9 s drawing on one thread and 2.8-3.0 s on two; the rest is
// writing the states home.
void init_layers_at_once(const TrainedModel& model, int first, uint64_t seed, std::vector<std::vector<float>>& out) {
  std::vector<std::exception_ptr> errors(out.size());
  {
    std::vector<std::jthread> threads;
    for (size_t k = 0; k < out.size(); ++k) {
      const int l = first + static_cast<int>(k);
      out[k].assign(static_cast<size_t>(model.layer_param_count(l)), 0.0f);
      auto draw = [&, k, l] {
        try {
          model.init_parameters(l, out[k], seed);
        } catch (...) {
          errors[k] = std::current_exception();
        }
      };
      if (k + 1 == out.size()) {
        draw();  // the last on this thread
        continue;
      }
      try {
        threads.emplace_back(draw);
      } catch (const std::system_error&) {
        draw();  // no thread to be had: this one draws it, the same numbers
      }
    }
  }
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

core::Result<void> Trainer::initialise() {
  // Every layer initialised in fp32, then each partition's slice becomes
  // its master weights (moments zero) and, rounded, its 16-bit copies.
  // Drawn a wave of layers at a time, one per core, so that at most that
  // many layers' fp32 weights exist at once.
  const int layers = model_.layer_count();
  const int wave = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 8);
  std::vector<std::vector<float>> drawn;
  for (int l = 0; l < layers; ++l) {
    if (initial_ == nullptr && (l % wave) == 0) {
      drawn.assign(static_cast<size_t>(std::min(wave, layers - l)), {});
      init_layers_at_once(model_, l, options_.seed, drawn);
    }
    const std::vector<float>& params =
        initial_ != nullptr ? (*initial_)[static_cast<size_t>(l)] : drawn[static_cast<size_t>(l % wave)];
    for (size_t j = 0; j < parts_.size(); ++j) {
      if (parts_[j].layer != l) continue;
      const size_t n = static_cast<size_t>(parts_[j].params);
      std::span<const float> slice(params.data() + parts_[j].first_param, n);
      // master32 then the moments, all zero bits (0.0 in fp32 and in bf16).
      std::vector<float> states(static_cast<size_t>((*homes_)[j].state_bytes()) / sizeof(float), 0.0f);
      std::copy(slice.begin(), slice.end(), states.begin());
      if (auto r = homes_->write_states(j, bytes_of(states)); !r) return r;
      std::vector<uint16_t> half(n);
      model::to_half(training_.precision, slice, half);
      for (int v = 0; v < homes_->versions(); ++v) {
        if (auto r = homes_->write_param16(j, static_cast<size_t>(v), std::as_bytes(std::span(half))); !r)
          return r;
      }
    }
  }
  state_.scaler = LossScaler::for_precision(training_.precision, training_.loss_scaling);
  return {};
}

void Trainer::retime_memory(core::TimelineRecorder& recorder, const core::Schedule& schedule, size_t first) {
  // The run's first samples are what rested on each tier as it began.
  const std::vector<core::MemorySample>& told = recorder.timeline().memory;
  std::array<core::Bytes, 3> at_start{};
  core::SimTime from = 0;
  for (size_t i = first; i < told.size() && i < first + at_start.size(); ++i) {
    at_start[static_cast<size_t>(told[i].tier)] = told[i].bytes;
    from = told[i].time;
  }
  recorder.replace_memory_from(first, core::memory_samples(schedule, recorder.timeline(), at_start, from));
}

core::Result<void> Trainer::snapshot(size_t j, std::span<std::byte> into) {
  // Partition j's snapshot layout: each param16 version, then its states.
  size_t at = 0;
  auto mismatch = [&] {
    return core::fail({{},
                       "the snapshot of " + names_[j] + " does not have the size the schedule declared (" +
                           std::to_string(into.size()) + " bytes; a bug in stowage)",
                       ""});
  };
  auto put = [&](core::Result<std::vector<std::byte>> bytes) -> core::Result<void> {
    if (!bytes) return std::unexpected(bytes.error());
    if (at + bytes->size() > into.size()) return mismatch();
    std::copy(bytes->begin(), bytes->end(), into.begin() + static_cast<std::ptrdiff_t>(at));
    at += bytes->size();
    return {};
  };
  for (int v = 0; v < homes_->versions(); ++v) {
    if (auto r = put(homes_->read_param16(j, static_cast<size_t>(v))); !r) return r;
  }
  if (auto r = put(homes_->read_states(j)); !r) return r;
  if (at != into.size()) return mismatch();
  return {};
}

core::Result<std::string> Trainer::save(const RunState& state,
                                        const std::vector<std::span<const std::byte>>& snapshots) {
  // Blobs name the partition and what they hold, cut from its snapshot.
  std::vector<BlobSource> blobs;
  for (size_t j = 0; j < parts_.size(); ++j) {
    const PartitionHome& h = (*homes_)[j];
    const size_t param_bytes = static_cast<size_t>(2 * parts_[j].params);
    size_t at = 0;
    for (int v = 0; v < homes_->versions(); ++v, at += param_bytes) {
      blobs.push_back({.name = "param16 " + names_[j] + " #" + std::to_string(v),
                       .tier = std::string(core::to_string(h.policy.param16)),
                       .content = snapshots[j].subspan(at, param_bytes)});
    }
    blobs.push_back({.name = "states " + names_[j],
                     .tier = std::string(core::to_string(h.policy.optimizer_states)),
                     .content = snapshots[j].subspan(at)});
  }
  nlohmann::json meta = {{"step", state.step},
                         {"plan", options_.plan_name},
                         {"model", plan_.model},
                         {"seed", options_.seed},
                         {"plan_crc32c", plan_digest_},
                         {"corpus_crc32c", corpus_digest_},
                         {"partitions", names_},
                         {"param16_versions", homes_->versions()},
                         {"optimizer_state_precision", std::string(core::to_string(plan_.policy.optimizer_state_precision))},
                         {"loss_scale", state.scaler.scale},
                         {"good_steps", state.scaler.good_steps},
                         {"hysteresis_left", state.scaler.hysteresis_left},
                         {"skipped_steps", state.skipped}};
  try {
    const auto dir =
        save_checkpoint(*options_.checkpoint_root, checkpoint_name(state.step), meta.dump(), blobs);
    return dir.string();
  } catch (const CheckpointWriteError& e) {
    // Say "intact" only of a checkpoint that exists (issue 12).
    const auto previous = find_latest(*options_.checkpoint_root);
    const std::string kept = previous && *previous
                                 ? "the previous one (" + (*previous)->string() + ") is intact"
                                 : "and there is no earlier checkpoint";
    return core::fail({{}, "checkpoint not written, " + kept + ": " + e.what(), ""});
  }
}

// Resuming fp32 moments as bf16 ones (or back) would read the states with
// another layout: refused, before the blob sizes (which differ too) are
// compared, with the precisions named. A checkpoint without the key was
// written before bf16 states existed: fp32.
core::Result<void> Trainer::same_state_precision(const std::string& metadata_json,
                                                 const std::filesystem::path& dir) const {
  const std::string ours(core::to_string(plan_.policy.optimizer_state_precision));
  std::string theirs = "fp32";
  const nlohmann::json meta = nlohmann::json::parse(metadata_json, nullptr, false);
  if (meta.is_object() && meta.contains("optimizer_state_precision")) {
    const nlohmann::json& saved = meta["optimizer_state_precision"];
    theirs = saved.is_string() ? saved.get<std::string>() : saved.dump();
  }
  if (theirs == ours) return {};
  return core::fail({{(dir / "manifest.json").string()},
                     "the checkpoint keeps its optimizer states (Adam moments) in " + theirs +
                         ", this run's plan in " + ours,
                     "a plan with optimizer_state_precision: " + theirs + " to resume it"});
}

core::Result<void> Trainer::restore(const std::filesystem::path& dir) {
  auto reader = CheckpointReader::open(dir);
  if (!reader) return std::unexpected(reader.error());
  if (auto same = same_state_precision(reader->metadata_json(), dir); !same) return same;
  std::vector<ExpectedBlob> expected;  // checked before verify() reads every byte
  for (size_t j = 0; j < parts_.size(); ++j) {
    for (int v = 0; v < homes_->versions(); ++v)
      expected.push_back(
          {"param16 " + names_[j] + " #" + std::to_string(v), core::Bytes(2 * parts_[j].params)});
    expected.push_back({"states " + names_[j], core::Bytes((*homes_)[j].state_bytes())});
  }
  if (auto e = reader->expect_blobs(expected); !e) return e;
  if (auto v = reader->verify(); !v) return v;
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(reader->metadata_json());
  } catch (const nlohmann::json::exception& e) {
    return core::fail({{(dir / "manifest.json").string()}, std::string("bad metadata: ") + e.what(), ""});
  }
  if (core::Diagnostics d = identity_problems(meta, dir, plan_.model); !d.empty()) return std::unexpected(d);
  const std::string where = (dir / "manifest.json").string();
  // Compared as JSON: a list of other than strings is another plan, not a throw.
  if (!meta.contains("partitions") || meta["partitions"] != nlohmann::json(names_) ||
      meta.value("param16_versions", 0) != homes_->versions() ||
      meta.value("seed", uint64_t{0}) != options_.seed) {
    return core::fail(
        {{where},
         "the checkpoint was made for another plan, model or seed",
         "partitions " + nlohmann::json(names_).dump() + ", seed " + std::to_string(options_.seed)});
  }
  // The plan and the data the checkpoint was trained with: resuming under
  // another plan or on other data would continue a different run.
  for (const auto& [key, digest, what] :
       {std::tuple{"plan_crc32c", plan_digest_, "plan (its profiles or policy differ)"},
        std::tuple{"corpus_crc32c", corpus_digest_, "training data (--data)"}}) {
    const nlohmann::json* saved = meta.contains(key) ? &meta[key] : nullptr;
    if (saved != nullptr && saved->is_number_unsigned() && saved->get<uint32_t>() == digest) continue;
    return core::fail({{where},
                       std::string("the checkpoint was made with another ") + what + ": its " + key + " is " +
                           (saved ? saved->dump() : std::string("missing")) + ", this run's " +
                           std::to_string(digest),
                       "the plan and data the checkpoint was trained with"});
  }
  for (size_t j = 0; j < parts_.size(); ++j) {
    for (int v = 0; v < homes_->versions(); ++v) {
      std::vector<std::byte> bytes(static_cast<size_t>(2 * parts_[j].params));
      if (auto r = reader->read_blob("param16 " + names_[j] + " #" + std::to_string(v), bytes); !r) return r;
      if (auto r = homes_->write_param16(j, static_cast<size_t>(v), bytes); !r) return r;
    }
    std::vector<std::byte> states(static_cast<size_t>((*homes_)[j].state_bytes()));
    if (auto r = reader->read_blob("states " + names_[j], states); !r) return r;
    if (auto r = homes_->write_states(j, states); !r) return r;
  }
  state_.step = meta.value("step", int64_t{0});
  state_.scaler = LossScaler::for_precision(training_.precision, training_.loss_scaling);
  // The loss scaler's state, checked before it is used: a count near
  // INT64_MAX would overflow at the next step, a scale of 0 or inf would
  // make every gradient zero or infinite (found by tests/adversarial).
  const auto count_at = [&](const char* key, int64_t fallback) -> std::optional<int64_t> {
    if (!meta.contains(key)) return fallback;
    const nlohmann::json& v = meta[key];
    if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= (int64_t{1} << 40))
      return v.get<int64_t>();
    return std::nullopt;
  };
  const auto good = count_at("good_steps", 0);
  const auto hysteresis = count_at("hysteresis_left", state_.scaler.hysteresis_left);
  const auto skipped = count_at("skipped_steps", 0);
  const double scale = meta.contains("loss_scale") && meta["loss_scale"].is_number()
                           ? meta["loss_scale"].get<double>()
                           : state_.scaler.scale;
  if (!good || !hysteresis || !skipped || !std::isfinite(scale) || scale <= 0) {
    return core::fail({{where},
                       "metadata: the loss scaler's state (loss_scale, good_steps, hysteresis_left, "
                       "skipped_steps) is out of range",
                       "a finite positive loss_scale and counts from 0 to 2^40, as the trainer saves them"});
  }
  state_.scaler.scale = scale;
  state_.scaler.good_steps = *good;
  state_.scaler.hysteresis_left = static_cast<decltype(state_.scaler.hysteresis_left)>(*hysteresis);
  state_.skipped = *skipped;
  return {};
}

// The run, a schedule of at most steps_per_schedule steps at a time: its
// checkpoints are ops of the schedule they fall in, so the simulator's
// prediction of a schedule is of exactly the ops that ran.
core::Result<void> Trainer::train_steps(TrainingRun& out) {
  const int micros = static_cast<int>(training_.gradient_accumulation);
  const std::unique_ptr<ModelCompute> compute = model_.compute(
      {.batch = training_.micro_batch, .seq = training_.sequence_length},
      [this, micros](int64_t step, int micro, std::span<int32_t> in, std::span<int32_t> target) {
        fill(model::CorpusPart::kTrain, step * micros + micro, in, target);
      },
      plan_.policy.activation_checkpointing ? Activations::kCheckpoint : Activations::kKeep);
  // Lowered with the memory the executor's kernels really hold, so the
  // prediction's peak is of the run's own allocations.
  const core::Workload run_workload =
      executor_workload(workload_, *compute, training_.tokens_per_micro_batch());
  const int64_t per_schedule =
      options_.steps_per_schedule > 0
          ? options_.steps_per_schedule
          : steps_within(plan_.policy, workload_, profile_training_, kOpsPerRunSchedule);
  out.losses.assign(static_cast<size_t>(options_.steps - out.first_step), 0.0);
  while (state_.step < options_.steps && !out.interrupted) {
    if (options_.stop != nullptr && options_.stop->load() != 0) {
      out.interrupted = true;  // between two schedules: the last one's state is whole
      break;
    }
    const int64_t steps = std::min(per_schedule, options_.steps - state_.step);
    if (auto r = run_schedule(*compute, run_workload, steps, out); !r) return r;
  }
  if (out.interrupted) {
    out.losses.resize(static_cast<size_t>(state_.step - out.first_step));
    if (auto r = checkpoint_where_stopped(out); !r) return r;
  }
  return {};
}

// Lowers the next `steps` steps from state_.step, runs them and leaves
// state_ as their last step did (or where a stop ended them). The run's
// first schedule is recorded whole; a later one only for its peaks.
core::Result<void> Trainer::run_schedule(ModelCompute& compute, const core::Workload& run_workload,
                                         int64_t steps, TrainingRun& out) {
  const int64_t first_step = state_.step;
  const bool first_of_run = out.schedules == 0;  // recorded whole, and warned of
  const int micros = static_cast<int>(training_.gradient_accumulation);
  core::LowerOptions lower_options{.steps = static_cast<int>(steps), .buffers = kNoReserves};
  if (options_.checkpoint_root) {
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t global = first_step + s + 1;  // steps done after schedule step s
      const bool every = options_.checkpoint_every > 0 && global % options_.checkpoint_every == 0;
      if (every || global == options_.steps) lower_options.checkpoint_after.push_back(static_cast<int>(s));
    }
  }
  auto schedule = core::lower(plan_.policy, machine_, run_workload, profile_training_, lower_options);
  if (!schedule) return std::unexpected(schedule.error());
  std::optional<core::Timeline> predicted;
  if (options_.predict) {
    predicted = options_.predict(*schedule);
    out.predicted_peak =
        max_peaks(out.predicted_peak.value_or(std::array<core::Bytes, 3>{}), predicted->memory);
    schedule->memory_order = core::memory_order_of(*schedule, *predicted);
    if (const std::vector<std::string> problems = core::validate_memory_order(*schedule); !problems.empty())
      return core::fail({{}, "the predicted memory order cannot be run: " + problems.front() + " (a bug)", ""});
  }
  // Nothing in a later schedule orders its first ops after the last ones
  // of the schedule before, which the simulator predicts from idle lanes.
  if (!first_of_run) {
    if (auto r = all_lanes_wait_for_each_other(backend_); !r) return r;
  }
  auto resident = ResidentBuffers::hold(backend_, *schedule);
  if (!resident) return std::unexpected(resident.error());
  // What the steps allocate beyond the setup, asked before they do: the
  // kernel would otherwise let the run start and kill it partway.
  if (predicted && options_.host_memory_available) {
    if (const std::optional<int64_t> available = options_.host_memory_available()) {
      if (core::Diagnostics d = check_host_memory_peak(*predicted, backend_, *available); !d.empty())
        return std::unexpected(d);
      if (const std::optional<std::string> warning = host_memory_warning(*predicted, backend_, *available);
          warning && first_of_run && options_.on_note)
        options_.on_note("warning: " + *warning);
    }
  }
  // A later schedule's spans are not kept: only the memory it held.
  core::TimelineRecorder unkept(0);
  core::TimelineRecorder& recorder = first_of_run ? recorder_ : unkept;
  recorder.grow(schedule->ops.size());
  const int64_t began_ns = now_ns();
  // Bytes the backend moved per lane, as the progress line reports them:
  // the difference since the previous step finished.
  std::array<int64_t, core::kLaneCount> moved_before{};
  for (core::Lane lane : core::kAllLanes)
    moved_before[static_cast<size_t>(lane)] = backend_.bytes_moved(lane);
  std::unique_ptr<Interpreter> interpreter;
  InterpretOptions io{.first_step = first_step,
                      .time_origin_ns = first_of_run ? origin_ns_ : began_ns,
                      .first_op = 0,
                      .precision = training_.precision,
                      .hyper = {.config = training_.adam, .optimizer = training_.optimizer},
                      .scaler = state_.scaler,
                      .dynamic_scaling = training_.precision == core::Precision::kFp16,
                      .skipped_before = state_.skipped,
                      .accumulation = training_.gradient_accumulation,
                      .max_grad_norm = training_.max_grad_norm,
                      .tied_head = core::tied_head(workload_),
                      .stop = options_.stop,
                      .watchdog = options_.watchdog,
                      .sink = &recorder};
  io.step_done = [&](int64_t step) {
    std::lock_guard lock(report_mutex_);
    StepReport r{.step = step};
    double sum = 0;
    for (int m = 0; m < micros; ++m) sum += compute.loss(step, m);
    r.loss = sum / micros;
    const int64_t now = now_ns();
    r.seconds = static_cast<double>(now - last_step_ns_) * 1e-9;
    last_step_ns_ = now;
    r.tokens_per_second = static_cast<double>(schedule->tokens_per_step) / std::max(r.seconds, 1e-9);
    for (core::Lane lane : core::kAllLanes) {
      const auto l = static_cast<size_t>(lane);
      const int64_t total = backend_.bytes_moved(lane);
      r.bytes[l] = total - moved_before[l];
      moved_before[l] = total;
    }
    r.skipped = interpreter->overflowed(static_cast<int>(step - first_step));
    r.skipped_total = state_.skipped + interpreter->skipped_through(static_cast<int>(step - first_step));
    out.losses[static_cast<size_t>(step - out.first_step)] = r.loss;
    if (options_.on_step) options_.on_step(r);
  };
  io.snapshot = [this](int64_t, size_t j, std::span<std::byte> into) { return snapshot(j, into); };
  io.checkpoint = [&](int64_t step,
                      const std::vector<std::span<const std::byte>>& snapshots) -> core::Result<void> {
    // The run state as this step leaves it: the scaler after its verdict.
    RunState saved{
        .step = step + 1,
        .scaler = interpreter->scaler_after(static_cast<int>(step - first_step)),
        .skipped = state_.skipped + interpreter->skipped_through(static_cast<int>(step - first_step))};
    auto dir = save(saved, snapshots);
    if (!dir) return std::unexpected(dir.error());
    std::lock_guard lock(report_mutex_);
    out.checkpoints.push_back(*dir);
    checkpointed_step_ = saved.step;
    if (options_.on_note) options_.on_note("checkpoint written: " + *dir);
    return {};
  };
  interpreter = std::make_unique<Interpreter>(*schedule, backend_, *homes_, compute, io);
  const size_t samples_before = recorder.timeline().memory.size();
  auto ran = interpreter->run();
  if (!ran) return ran;
  // A stopped run's ops that never ran have no spans to replay over: its
  // samples stay as the host told them.
  if (interpreter->retimed() && !interpreter->stopped()) retime_memory(recorder, *schedule, samples_before);
  out.peak = max_peaks(out.peak, recorder.timeline().memory);
  out.replayed_steps += interpreter->replayed_steps();
  int last = schedule->steps - 1;
  if (const std::optional<Interpreter::Stopped> stopped = interpreter->stopped()) {
    out.interrupted = true;
    last = stopped->after_step;
    if (!stopped->consistent) {
      return core::fail(
          {{}, "stopped mid-update: the state is not that of any one step, no checkpoint written", ""});
    }
  }
  state_.scaler = last >= 0 ? interpreter->scaler_after(last) : state_.scaler;
  state_.skipped += last >= 0 ? interpreter->skipped_through(last) : 0;
  state_.step = first_step + last + 1;
  ++out.schedules;
  if (first_of_run) {
    out.schedule = std::move(*schedule);
    out.schedule_seconds = static_cast<double>(now_ns() - began_ns) * 1e-9;
  }
  return {};
}

// A stopped run's last good state, saved as a checkpoint ends it (every
// partition read from where it rests), unless a checkpoint op saved it.
core::Result<void> Trainer::checkpoint_where_stopped(TrainingRun& out) {
  if (!options_.checkpoint_root || state_.step == out.first_step || checkpointed_step_ == state_.step)
    return {};
  std::vector<std::vector<std::byte>> copies(parts_.size());
  std::vector<std::span<const std::byte>> views;
  for (size_t j = 0; j < parts_.size(); ++j) {
    copies[j].resize(static_cast<size_t>((2 * homes_->versions() + 12) * parts_[j].params));
    if (auto r = snapshot(j, copies[j]); !r) return r;
    views.emplace_back(copies[j]);
  }
  auto dir = save(state_, views);
  if (!dir) return std::unexpected(dir.error());
  out.checkpoints.push_back(*dir);
  if (options_.on_note) options_.on_note("checkpoint written: " + *dir);
  return {};
}

// Every layer's fp32 master weights, gathered from the partitions' homes.
core::Result<std::vector<std::vector<float>>> Trainer::master_weights() {
  std::vector<std::vector<float>> layers(static_cast<size_t>(model_.layer_count()));
  for (int l = 0; l < model_.layer_count(); ++l)
    layers[static_cast<size_t>(l)].resize(static_cast<size_t>(model_.layer_param_count(l)));
  for (size_t j = 0; j < parts_.size(); ++j) {
    auto states = homes_->read_states(j);
    if (!states) return std::unexpected(states.error());
    const size_t n = static_cast<size_t>(parts_[j].params);
    std::span<const float> master(reinterpret_cast<const float*>(states->data()), n);
    std::copy(master.begin(), master.end(),
              layers[static_cast<size_t>(parts_[j].layer)].begin() +
                  static_cast<std::ptrdiff_t>(parts_[j].first_param));
  }
  return layers;
}

core::Result<double> Trainer::held_out_loss(std::vector<std::vector<float>> layers) {
  // It runs after training, alone, so on every core: on OpenBLAS's one
  // training thread a billion-parameter model's eight batches take minutes.
  // A thread count gives the same bits every run (linear.h).
  struct AllCores {
    int before = model::blas_threads();
    AllCores() { model::set_blas_threads(std::max(1, static_cast<int>(std::thread::hardware_concurrency()))); }
    ~AllCores() { model::set_blas_threads(before); }
  } const all_cores;
  // The master weights, rounded as the device would see them.
  for (std::vector<float>& layer : layers) {
    std::vector<uint16_t> half(layer.size());
    model::to_half(training_.precision, layer, half);
    model::from_half(training_.precision, half, layer);
  }
  const model::MicroBatch mb{.batch = training_.micro_batch, .seq = training_.sequence_length};
  const std::unique_ptr<ModelCompute> compute = model_.compute(mb, {}, Activations::kKeep);
  std::vector<int32_t> in(static_cast<size_t>(mb.tokens())), target(in.size());
  double sum = 0;
  constexpr int kBatches = 8;
  for (int b = 0; b < kBatches; ++b) {
    fill(model::CorpusPart::kHeldOut, b, in, target);
    sum += compute->evaluate(layers, in, target);
  }
  return sum / kBatches;
}

core::Result<TrainingRun> Trainer::run() {
  auto homes = PartitionHomes::allocate(backend_, parts_, names_, plan_.policy);
  if (!homes) return std::unexpected(homes.error());
  homes_.emplace(std::move(*homes));
  if (options_.resume) {
    if (auto r = restore(*options_.resume); !r) return std::unexpected(r.error());
  } else if (auto r = initialise(); !r) {
    return std::unexpected(r.error());
  }
  TrainingRun out;
  out.first_step = state_.step;
  out.unigram_entropy = corpus_.train_unigram_entropy();
  origin_ns_ = now_ns();
  last_step_ns_ = origin_ns_;
  if (auto r = train_steps(out); !r) return std::unexpected(r.error());
  out.seconds = static_cast<double>(now_ns() - origin_ns_) * 1e-9;
  // The steps' buffers, kept by the backend for reuse, are not needed
  // again: the evaluation below allocates beside the homes alone. (A plan
  // whose activations filled the host had the evaluation's on top, and the
  // kernel killed the run after its last step.)
  backend_.give_back_kept();
  out.timeline = recorder_.take();
  auto weights = master_weights();
  if (!weights) return std::unexpected(weights.error());
  if (options_.export_weights) {
    if (auto r = model::save_hf_weights(*options_.export_weights, workload_, *weights); !r)
      return std::unexpected(r.error());
  }
  auto held_out = held_out_loss(std::move(*weights));
  if (!held_out) return std::unexpected(held_out.error());
  out.held_out_loss = *held_out;
  return out;
}

}  // namespace

core::Diagnostics check_runnable(const core::PlanFile& plan, const core::MachineSpec& machine,
                                 const core::ModelSpec& model_spec, const core::TrainingSpec& training) {
  core::Diagnostics problems;
  if (machine.gpu_count != 1) {
    problems.push_back({{},
                        "machine: the plan is for " + std::to_string(machine.gpu_count) + " GPUs (" + machine.name +
                            ") but the executor runs one rank",
                        "a plan for a single-GPU machine, e.g. workstation-24gb-1nvme"});
  }
  const core::Workload workload(model_spec, core::effective_training(training, plan.policy).sequence_length);
  if (auto model = make_trained_model(workload); !model) {
    problems.insert(problems.end(), model.error().begin(), model.error().end());
  }
  // The models' kernels compute a layer at once (LayerCompute), so a plan
  // that gathers a layer in pieces cannot run here; say so before anything
  // is allocated rather than run other ops than the schedule's.
  for (const core::Layer& l : workload.layers()) {
    const size_t pieces = core::gather_pieces(l, plan.policy.gather_params).size();
    if (pieces < 2) continue;
    problems.push_back({{},
                        "policy.gather_params: " + std::to_string(plan.policy.gather_params) + " gathers " + l.name +
                            " in " + std::to_string(pieces) + " pieces, but the executor computes whole layers only",
                        "gather_params: 0 (whole layers), or a plan whose gather size holds every layer"});
    break;
  }
  if (auto schedule = core::lower(plan.policy, machine, workload, training, {.steps = 1}); !schedule) {
    problems.insert(problems.end(), schedule.error().begin(), schedule.error().end());
  }
  core::locate_in_plan(problems, plan.places);
  return problems;
}

int64_t steps_per_run_schedule(const core::PlanFile& plan, const core::ModelSpec& model_spec,
                               const core::TrainingSpec& training, int64_t ops) {
  const core::Workload workload(model_spec, core::effective_training(training, plan.policy).sequence_length);
  return steps_within(plan.policy, workload, training, ops);
}

core::Result<std::vector<std::vector<float>>> load_initial_weights(const std::filesystem::path& path,
                                                                   const core::PlanFile& plan,
                                                                   const core::ModelSpec& model_spec,
                                                                   const core::TrainingSpec& training) {
  const core::Workload workload(model_spec, core::effective_training(training, plan.policy).sequence_length);
  return model::load_hf_weights(path, workload);
}

core::Diagnostics check_export(const core::PlanFile& plan, const core::ModelSpec& model_spec,
                               const core::TrainingSpec& training) {
  const core::Workload workload(model_spec, core::effective_training(training, plan.policy).sequence_length);
  auto r = model::hf_weights_supported(workload);
  return r ? core::Diagnostics{} : r.error();
}

core::Result<TrainingRun> train(const core::PlanFile& plan, const core::MachineSpec& machine,
                                const core::ModelSpec& model_spec, const core::TrainingSpec& training,
                                Backend& backend, const TrainerOptions& options) {
  if (core::Diagnostics d = check_runnable(plan, machine, model_spec, training); !d.empty())
    return std::unexpected(d);
  const core::TrainingSpec effective = core::effective_training(training, plan.policy);
  const core::Workload workload(model_spec, effective.sequence_length);
  if (const std::optional<int64_t> available =
          options.host_memory_available ? options.host_memory_available() : std::nullopt) {
    // Before anything is allocated.
    auto one_step =
        core::lower(plan.policy, machine, workload, training, {.steps = 1, .buffers = kNoReserves});
    if (!one_step) return std::unexpected(one_step.error());
    if (core::Diagnostics d = check_host_memory(*one_step, backend, *available); !d.empty())
      return std::unexpected(d);
  }
  auto model = make_trained_model(workload);
  if (!model) return std::unexpected(model.error());
  const model::CorpusOptions corpus_options{.seq = effective.sequence_length};
  auto corpus = options.data.empty() ? model::ByteCorpus::from_text(model::synthetic_text({}),
                                                                    "generated text (4 MiB)", corpus_options)
                                     : model::ByteCorpus::load(options.data, corpus_options);
  if (!corpus) return std::unexpected(corpus.error());
  if (options.steps < 1) return core::fail({{}, "--steps must be at least 1", ""});
  if (const auto& w = options.initial_weights) {
    if (options.resume) return core::fail({{}, "--init-from and --resume both given", "one of them"});
    bool fits = w->size() == workload.layers().size();
    for (size_t l = 0; fits && l < w->size(); ++l) {
      fits = (*w)[l].size() == static_cast<size_t>(workload.layers()[l].param_count());
    }
    if (!fits)
      return core::fail({{}, "the initial weights do not have the model's layers", "load_initial_weights"});
  }
  if (options.export_weights) {
    if (auto r = model::hf_weights_supported(workload); !r) return std::unexpected(r.error());
  }
  Trainer trainer(plan, machine, training, workload, **model, *corpus, backend, options,
                  options.initial_weights ? &*options.initial_weights : nullptr);
  return trainer.run();
}

}  // namespace stowage::executor
