#include "core/lower.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <queue>

#include "core/compute_work.h"
#include "core/gather_pieces.h"
#include "core/tied_head.h"

namespace stowage::core {
namespace {

// Issue order: ops are created in whatever order is convenient and carry a
// key saying where a careful runtime would issue them; a priority
// topological sort then yields the issue order the lanes follow.
struct Key {
  int step, micro, phase, index, sub;
  [[nodiscard]] int64_t value() const {
    return ((((static_cast<int64_t>(step) * 4096 + micro) * 2 + phase) * 65536 + index) * 32) + sub;
  }
};

// Positions within one layer's slot of a pass, in issue order.
enum Sub : int {
  kSubReadParams = 0, kSubUpload, kSubGather, kSubRecompute, kSubCompute, kSubReduce, kSubOffload,
  kSubReadStates, kSubOptimizer, kSubWriteStates, kSubPublish, kSubGatherUpdate,
};

constexpr int kForwardPhase = 0;
constexpr int kBackwardPhase = 1;

std::string make_tag(int step, int micro) { return " s" + std::to_string(step) + " m" + std::to_string(micro); }

// Elements [begin, end) of `total` elements' share of `whole` bytes: the
// slices of consecutive ranges add up to `whole` exactly.
Bytes slice(Bytes whole, int64_t total, int64_t begin, int64_t end) {
  auto upto = [&](int64_t k) {
    if (k >= total) return whole.count();
    return static_cast<int64_t>(static_cast<long double>(whole.count()) * static_cast<long double>(k) /
                                static_cast<long double>(total));
  };
  return Bytes(upto(end) - upto(begin));
}

class Lowering {
 public:
  Lowering(const Policy& p, const MachineSpec& m, const Workload& w, const TrainingSpec& t, const LowerOptions& o)
      : policy_(p), machine_(m), workload_(w), training_(effective_training(t, p)), options_(o),
        partitions_(partitions_of(w, p.sub_group_params)), ranks_(m.gpu_count) {
    // Sizes and names looked up for every op, computed once.
    for (const Layer& l : w.layers()) {
      layer_params_.push_back(l.param_count());
      pieces_.push_back(gather_pieces(l, p.gather_params));
      std::vector<std::string>& names = unit_names_.emplace_back();
      for (const GatherPiece& piece : pieces_.back()) names.push_back(range_name(l, piece.first_param, piece.params));
    }
    for (const Partition& part : partitions_) partition_names_.push_back(partition_name(w, part));
    // Roughly ten ops per partition and gathered piece per micro-step.
    size_t units = 0;
    for (const auto& pieces : pieces_) units += pieces.size();
    const size_t estimate = 10 * (partitions_.size() + units) *
                            static_cast<size_t>(o.steps * std::max<int64_t>(1, training_.gradient_accumulation));
    ops_.reserve(estimate);
    keys_.reserve(estimate);
  }

  Result<Schedule> run();

 private:
  // Sizes per rank.
  // Each staging buffer holds the largest partition's share of param16.
  [[nodiscard]] Bytes staging_buffer_size() const {
    if (policy_.staging_buffer_size.count() > 0) return policy_.staging_buffer_size;
    int64_t largest = 0;
    for (const Partition& p : partitions_) largest = std::max(largest, p.params);
    return Bytes(2 * largest / grad_ranks());
  }
  [[nodiscard]] int last_micro() const { return static_cast<int>(training_.gradient_accumulation) - 1; }
  [[nodiscard]] int param_ranks() const { return policy_.stage == ZeroStage::k3 ? ranks_ : 1; }
  [[nodiscard]] int state_ranks() const { return policy_.stage >= ZeroStage::k1 ? ranks_ : 1; }
  [[nodiscard]] int grad_ranks() const { return policy_.stage >= ZeroStage::k2 ? ranks_ : 1; }
  [[nodiscard]] Bytes layer_param16(int layer) const { return Bytes(2 * layer_params_[static_cast<size_t>(layer)]); }
  [[nodiscard]] const PartitionPolicy& pp(int j) const { return policy_.partitions[static_cast<size_t>(j)]; }
  [[nodiscard]] int64_t state_params(int j) const { return partitions_[static_cast<size_t>(j)].params / state_ranks(); }
  // master32 + adam_m + adam_v of partition j's shard, at the policy's state precision.
  [[nodiscard]] Bytes state_bytes(int j) const {
    return Bytes(state_bytes_per_param(policy_.optimizer_state_precision) * state_params(j));
  }
  [[nodiscard]] Bytes param_shard(int j) const {
    return Bytes(2 * partitions_[static_cast<size_t>(j)].params / param_ranks());
  }
  [[nodiscard]] Bytes grad_shard(int j) const {
    return Bytes(2 * partitions_[static_cast<size_t>(j)].params / grad_ranks());
  }
  [[nodiscard]] const std::string& pname(int j) const { return partition_names_[static_cast<size_t>(j)]; }
  // Buffers a prefetch of depth d cycles through: depth 0 (no prefetch)
  // still needs the one buffer the fetch in use fills, as depth 1 does.
  [[nodiscard]] int h2d_buffers() const { return std::max(1, policy_.h2d_prefetch_depth); }
  [[nodiscard]] int nvme_buffers() const { return std::max(1, policy_.nvme_prefetch_depth); }

  OpId add(Op op, Key key) {
    op.id = static_cast<OpId>(ops_.size());
    ops_.push_back(std::move(op));
    keys_.push_back(key.value());
    return ops_.back().id;
  }

  // Device scratch an op holds from its start to its end (an executor's
  // fp32 workspaces): allocated and freed by the op itself.
  static void hold_scratch(Op& op, Bytes bytes) {
    if (bytes.count() == 0) return;
    op.allocs.push_back({Tier::kGpu, bytes, "scratch " + op.name});
    op.frees.push_back({Tier::kGpu, bytes, "scratch " + op.name});
  }
  void resident_memory(Schedule& s) const;
  void lower_step(int step);
  void forward(int step, int micro);
  void backward(int step, int micro);
  // Whom a fetch of a layer's param16 serves: that layer's own compute, or
  // the tied LM head of the final layer reading the embedding's table.
  enum class FetchFor { kOwnLayer, kTiedHead };
  // Brings piece `piece` of a layer's param16 onto the GPU for one use;
  // returns the ops the compute must wait for and adds the bytes the
  // compute frees.
  std::vector<OpId> fetch_params(int step, int micro, int phase, int index, int layer, size_t piece, Op& compute,
                                 std::vector<OpId> recycle, FetchFor use = FetchFor::kOwnLayer);
  // With tied embeddings the final layer's head multiplies by the embedding
  // layer's token table: the final layer's forward and backward fetch the
  // embedding's pieces that hold it, for themselves, and add their waits.
  void fetch_tied_table(int step, int micro, int phase, int index, int layer, Op& compute,
                        const std::vector<OpId>& recycle, std::vector<OpId>& waits);
  OpId recompute_pieces(int step, int micro, int l, std::vector<OpId> waits, std::vector<OpId>& units);
  void reduce_and_offload(int step, int micro, int index, int layer, size_t piece, OpId backward_op);
  // A piece's name: its layer's when the layer is one piece, else
  // "layers.3[first+params]".
  // Built once in the constructor: the search lowers thousands of
  // schedules, and building names op by op was 13 % of its time (perf).
  [[nodiscard]] const std::string& unit_name(int layer, size_t piece) const {
    return unit_names_[static_cast<size_t>(layer)][piece];
  }
  // " s2 m0": the step and micro-step every op name ends with, each built
  // once.
  [[nodiscard]] const std::string& tag(int step, int micro) const {
    const size_t per_step = static_cast<size_t>(std::max<int64_t>(1, training_.gradient_accumulation));
    const size_t i = static_cast<size_t>(step) * per_step + static_cast<size_t>(micro);
    if (i >= tags_.size()) {
      for (size_t k = tags_.size(); k <= i; ++k)
        tags_.push_back(make_tag(static_cast<int>(k / per_step), static_cast<int>(k % per_step)));
    }
    return tags_[i];
  }
  // A piece's share of a quantity its layer has (bytes touched, FLOPs),
  // by parameters; the shares of a layer's pieces add up to it exactly.
  [[nodiscard]] Bytes piece_share(int layer, size_t piece, Bytes total) const {
    const GatherPiece& p = pieces_[static_cast<size_t>(layer)][piece];
    return slice(total, layer_params_[static_cast<size_t>(layer)], p.first_param, p.first_param + p.params);
  }
  [[nodiscard]] double piece_share(int layer, size_t piece, double total) const {
    const GatherPiece& p = pieces_[static_cast<size_t>(layer)][piece];
    return total * static_cast<double>(p.params) / static_cast<double>(layer_params_[static_cast<size_t>(layer)]);
  }
  // The step's gradient verdict (overflow, norm), when training needs one:
  // fp16 skips overflowing steps and clipping scales by the global norm,
  // so no optimizer op may start before every gradient is in.
  [[nodiscard]] bool checks_gradients() const {
    return training_.precision == Precision::kFp16 || training_.max_grad_norm > 0;
  }
  OpId gradient_check(int step, int layer_count);
  // Speculative updates: optimizers do not wait for the verdict; an accept
  // op after it releases their rollback copies (or replays the step).
  [[nodiscard]] bool speculative() const { return policy_.speculative_update && checks_gradients(); }
  void accept_updates(int step, int layer_count, OpId verdict);
  struct Speculation {
    int partition;
    std::vector<OpId> effects;  // the optimizer op, its publish and its state write
    MemoryEffect copy;          // the rollback copy the optimizer allocated
    MemoryEffect grads;         // the gradients a replay reads again
  };
  std::vector<Speculation> speculations_;  // of the step under construction
  void optimizer_chain(int step, int j, int index, std::optional<OpId> verdict);
  Result<Schedule> finish();

  const Policy& policy_;
  const MachineSpec& machine_;
  const Workload& workload_;
  const TrainingSpec training_;  // as the policy runs it (effective_training)
  const LowerOptions& options_;
  // Named data (Op::reads and writes) exist for validation only; a planner
  // lowering thousands of unvalidated variants skips building them.
  const bool keep_data_ = options_.validate;
  std::vector<Partition> partitions_;
  int ranks_;
  std::vector<int64_t> layer_params_;         // by layer
  std::vector<std::vector<GatherPiece>> pieces_;  // by layer: what one fetch gathers
  std::vector<std::string> partition_names_;  // by partition: "layers.3" or "layers.3[0+300000]"
  std::vector<std::vector<std::string>> unit_names_;  // by layer and piece: unit_name
  mutable std::vector<std::string> tags_;              // by step * accumulation + micro: tag

  std::vector<Op> ops_;
  std::vector<int64_t> keys_;
  // The op that last made partition j's param16 current on its resting tier
  // (or on the GPU), by step that may use it: param_ready_[step][j].
  std::map<int, std::vector<std::optional<OpId>>> param_ready_;
  // The optimizer that last read partition j's host gradient buffer, per
  // buffer. A delayed update double-buffers host gradients (by step parity),
  // since step t+1's offloads run while step t's optimizer still reads.
  std::array<std::vector<std::optional<OpId>>, 2> grads_consumed_;
  [[nodiscard]] size_t grad_buffer(int step) const { return policy_.delayed_update ? static_cast<size_t>(step % 2) : 0; }
  std::vector<std::optional<OpId>> last_compute_of_layer_;  // in the pass under construction
  std::vector<OpId> compute_order_;  // compute ops of the current pass, in order
  std::vector<OpId> optimizer_order_;  // optimizer ops of the current step, in order
  std::vector<std::vector<OpId>> grad_ready_;  // per partition: ops producing its gradients this step
  std::vector<std::vector<OpId>> verdict_inputs_;    // the same, kept for the step's gradient check
  std::vector<std::optional<OpId>> last_optimizer_;  // the latest optimizer op of each partition
  std::vector<OpId> offloads_;  // gradient offloads of the backward pass under construction
  std::vector<std::optional<OpId>> last_state_write_;  // NVMe write that last stored j's states
  std::optional<OpId> last_verdict_;                   // the previous step's gradient check
  // Checkpoints: per partition, the ops of its latest update (what a
  // snapshot waits for); the step whose checkpoint is being taken, and the
  // snapshots taken of it so far.
  std::vector<std::vector<OpId>> updates_;
  std::optional<int> pending_checkpoint_;
  std::vector<OpId> snapshots_;
  OpId snapshot(int j, std::optional<OpId> verdict, Key key);
  void commit_checkpoint();
};

void Lowering::resident_memory(Schedule& s) const {
  s.resident = {};
  std::array<Bytes, 3> params{}, states{};
  // A delayed update keeps two versions of the 16-bit parameters: the one
  // the step computes with and the one the previous step's update writes.
  const int versions = policy_.delayed_update ? 2 : 1;
  for (int j = 0; j < static_cast<int>(partitions_.size()); ++j) {
    params[static_cast<size_t>(pp(j).param16)] += param_shard(j) * versions;
    states[static_cast<size_t>(pp(j).optimizer_states)] += state_bytes(j);
  }
  auto put = [&](Tier t, Bytes b, std::string what) {
    if (b.count() <= 0) return;
    s.resident[static_cast<size_t>(t)] += b;
    s.resident_items.push_back({t, b, std::move(what)});
  };
  for (Tier t : kAllTiers) {
    put(t, params[static_cast<size_t>(t)], std::string(kParamsAtRest));
    put(t, states[static_cast<size_t>(t)], std::string(kStatesAtRest));
  }
  put(Tier::kGpu, options_.buffers.gpu_reserve, "runtime reserve");
  // Pinned staging buffers for PCIe transfers, when anything crosses it.
  const bool crosses = std::any_of(policy_.partitions.begin(), policy_.partitions.end(), [](const PartitionPolicy& p) {
    return p.param16 != Tier::kGpu || p.optimizer != OptimizerDevice::kGpu;
  });
  if (crosses) put(Tier::kCpu, staging_buffer_size() * std::max(1, policy_.staging_buffers), "pinned staging buffers");
  put(Tier::kCpu, options_.buffers.host_reserve / ranks_, "host reserve");
  s.capacity = {machine_.gpu.memory, machine_.host.dram / ranks_, machine_.total_nvme_capacity() / ranks_};
}

void Lowering::fetch_tied_table(int step, int micro, int phase, int index, int layer, Op& compute,
                                const std::vector<OpId>& recycle, std::vector<OpId>& waits) {
  const std::optional<TiedHead> tied = tied_head(workload_);
  if (!tied || tied->layer != layer) return;
  const int64_t table = workload_.model().vocab * workload_.model().d_model;  // the first params of the embedding
  const std::vector<GatherPiece>& pieces = pieces_[static_cast<size_t>(tied->source)];
  for (size_t k = 0; k < pieces.size() && pieces[k].first_param < table; ++k) {
    const std::vector<OpId> more =
        fetch_params(step, micro, phase, index, tied->source, k, compute, recycle, FetchFor::kTiedHead);
    waits.insert(waits.end(), more.begin(), more.end());
  }
}

std::vector<OpId> Lowering::fetch_params(int step, int micro, int phase, int index, int layer, size_t piece,
                                         Op& compute, std::vector<OpId> recycle, FetchFor use) {
  std::vector<OpId> waits;
  const GatherPiece& range = pieces_[static_cast<size_t>(layer)][piece];
  const bool for_head = use == FetchFor::kTiedHead;
  const std::string what = "param16 " + unit_name(layer, piece) + (for_head ? " for the tied head" : "");
  const int prefetch_index = std::max(0, index - policy_.h2d_prefetch_depth);
  for (int j = 0; j < static_cast<int>(partitions_.size()); ++j) {
    const Partition& part = partitions_[static_cast<size_t>(j)];
    if (part.layer != layer) continue;
    const int64_t begin = std::max(part.first_param, range.first_param);
    const int64_t end = std::min(part.first_param + part.params, range.first_param + range.params);
    if (begin >= end) continue;
    // This piece's share of the partition's shard, exact over the pieces.
    const Bytes shard = slice(param_shard(j), part.params, begin - part.first_param, end - part.first_param);
    const std::optional<OpId> ready = param_ready_[step][static_cast<size_t>(j)];
    const std::string current = keep_data_ ? "param16 " + pname(j) + " v" + std::to_string(step) : std::string();
    if (pp(j).param16 == Tier::kGpu) {
      if (ready) waits.push_back(*ready);
      if (keep_data_) compute.reads.push_back(current + " gpu");
      continue;
    }
    std::vector<OpId> deps = recycle;
    if (ready) deps.push_back(*ready);
    std::string source = keep_data_ ? current + (pp(j).param16 == Tier::kCpu ? " cpu" : " nvme") : std::string();
    // A layer gathered in pieces is fetched piece by piece for each use,
    // and the tied head fetches the embedding for itself: each such copy is
    // named for the op that uses it.
    const std::string copy =
        pieces_[static_cast<size_t>(layer)].size() == 1 && !for_head ? "" : " for " + compute.name;
    if (pp(j).param16 == Tier::kNvme) {
      Op read{.kind = OpKind::kReadParams, .lane = Lane::kNvmeRead, .name = "read " + what + tag(step, micro),
              .partition = j, .layer = layer, .step = step, .micro_step = micro,
              .tensor_class = TensorClass::kParam16, .bytes = shard, .deps = deps,
              .allocs = {{Tier::kCpu, shard, "staged " + what}}};
      if (keep_data_) {
        read.reads = {source};
        read.writes = {current + " staged" + copy};
        source = current + " staged" + copy;
      }
      deps = {add(std::move(read), {step, micro, phase, prefetch_index, kSubReadParams})};
    }
    Op upload{.kind = OpKind::kUploadParams, .lane = Lane::kPcieH2d, .name = "h2d " + what + tag(step, micro),
              .partition = j, .layer = layer, .step = step, .micro_step = micro,
              .tensor_class = TensorClass::kParam16, .bytes = shard, .deps = deps,
              .allocs = {{Tier::kGpu, shard, "fetched " + what}}};
    if (keep_data_) {
      upload.reads = {source};
      upload.writes = {current + " gpu" + copy};
    }
    if (pp(j).param16 == Tier::kNvme) upload.frees.push_back({Tier::kCpu, shard, "staged " + what});
    waits.push_back(add(std::move(upload), {step, micro, phase, prefetch_index, kSubUpload}));
    compute.frees.push_back({Tier::kGpu, shard, "fetched " + what});
    if (keep_data_) compute.reads.push_back(current + " gpu" + copy);
  }
  if (policy_.stage == ZeroStage::k3 && ranks_ > 1) {
    // Every rank holds 1/ranks of the piece; the rest arrives by all-gather.
    const Bytes full(2 * range.params);
    const Bytes rest = full - full / ranks_;
    Op gather{.kind = OpKind::kAllGather, .lane = Lane::kGpuComm, .name = "gather " + what + tag(step, micro),
              .layer = layer, .step = step, .micro_step = micro, .tensor_class = TensorClass::kParam16,
              .bytes = rest, .deps = waits, .allocs = {{Tier::kGpu, rest, "gathered " + what}}};
    for (OpId r : recycle) gather.deps.push_back(r);
    waits = {add(std::move(gather), {step, micro, phase, prefetch_index, kSubGather})};
    compute.frees.push_back({Tier::kGpu, rest, "gathered " + what});
  }
  return waits;
}

void Lowering::forward(int step, int micro) {
  const std::vector<Layer>& layers = workload_.layers();
  const int64_t tokens = training_.tokens_per_micro_batch();
  compute_order_.clear();
  std::string previous;  // the data the last unit wrote
  for (int l = 0; l < static_cast<int>(layers.size()); ++l) {
    const Layer& layer = layers[static_cast<size_t>(l)];
    const ComputeFootprint footprint = workload_.footprint(static_cast<size_t>(l), tokens);
    const Bytes saved = policy_.activation_checkpointing ? footprint.checkpointed : footprint.saved;
    const ComputeWork work = compute_work(OpKind::kForward, layer, footprint, tokens,
                                          policy_.activation_checkpointing, layer_param16(l));
    const size_t count = pieces_[static_cast<size_t>(l)].size();
    for (size_t k = 0; k < count; ++k) {
      // A layer gathered in pieces keeps its saved activations from its
      // first piece's forward; each piece's op touches its parameters and
      // its share of those activations and does its share of the FLOPs.
      const int u = static_cast<int>(compute_order_.size());
      Op fwd{.kind = OpKind::kForward, .lane = Lane::kGpuCompute,
             .name = "fwd " + unit_name(l, k) + tag(step, micro), .layer = l, .step = step, .micro_step = micro,
             .bytes = piece_share(l, k, work.bytes), .flops = Flops(piece_share(l, k, work.flops.count()))};
      if (k == 0 && saved.count() > 0)
        fwd.allocs.push_back({Tier::kGpu, saved, "activations " + layer.name + tag(step, micro)});
      hold_scratch(fwd, footprint.forward_scratch);
      std::vector<OpId> recycle;
      const int back = u - h2d_buffers();
      if (back >= 0) recycle.push_back(compute_order_[static_cast<size_t>(back)]);
      fwd.deps = fetch_params(step, micro, kForwardPhase, u, l, k, fwd, recycle);
      if (k + 1 == count) fetch_tied_table(step, micro, kForwardPhase, u, l, fwd, recycle, fwd.deps);
      if (!compute_order_.empty()) fwd.deps.push_back(compute_order_.back());
      if (keep_data_) {
        if (!previous.empty()) fwd.reads.push_back(previous);
        previous = "act " + unit_name(l, k) + tag(step, micro);
        fwd.writes.push_back(previous);
      }
      compute_order_.push_back(add(std::move(fwd), {step, micro, kForwardPhase, u, kSubCompute}));
    }
  }
}

// A layer's recompute, piece by piece in forward order, when it is
// gathered in pieces: each piece fetches its parameters again and releases
// them, for the backward fetches them once more (ZeRO-3 does the same).
// Returns the last recompute op. `units` are the pass's compute ops that
// release fetched parameters, in order (their positions are fetch indices).
OpId Lowering::recompute_pieces(int step, int micro, int l, std::vector<OpId> waits, std::vector<OpId>& units) {
  const Layer& layer = workload_.layers()[static_cast<size_t>(l)];
  const ComputeFootprint footprint = workload_.footprint(static_cast<size_t>(l), training_.tokens_per_micro_batch());
  const Bytes saved = policy_.activation_checkpointing ? footprint.checkpointed : footprint.saved;
  const Bytes full = footprint.saved;
  const ComputeWork work = compute_work(OpKind::kRecompute, layer, footprint, training_.tokens_per_micro_batch(),
                                        policy_.activation_checkpointing, layer_param16(l));
  const std::string name = layer.name + tag(step, micro);
  std::optional<OpId> last;
  for (size_t k = 0; k < pieces_[static_cast<size_t>(l)].size(); ++k) {
    const int u = static_cast<int>(units.size());
    Op again{.kind = OpKind::kRecompute, .lane = Lane::kGpuCompute, .name = "recompute " + unit_name(l, k) + tag(step, micro),
             .layer = l, .step = step, .micro_step = micro, .bytes = piece_share(l, k, work.bytes),
             .flops = Flops(piece_share(l, k, work.flops.count()))};
    if (k == 0) again.allocs.push_back({Tier::kGpu, full - saved, "recomputed " + name});
    hold_scratch(again, footprint.forward_scratch);
    std::vector<OpId> recycle;
    if (u - h2d_buffers() >= 0) recycle.push_back(units[static_cast<size_t>(u - h2d_buffers())]);
    again.deps = fetch_params(step, micro, kBackwardPhase, u, l, k, again, recycle);
    again.deps.insert(again.deps.end(), waits.begin(), waits.end());
    if (last) again.deps.push_back(*last);
    if (keep_data_) {
      again.reads.push_back("act " + unit_name(l, 0) + tag(step, micro));
      again.writes = {"recomputed " + unit_name(l, k) + tag(step, micro)};
    }
    last = add(std::move(again), {step, micro, kBackwardPhase, u, kSubRecompute});
    units.push_back(*last);
  }
  return *last;
}

void Lowering::backward(int step, int micro) {
  const std::vector<Layer>& layers = workload_.layers();
  const int n = static_cast<int>(layers.size());
  const int64_t tokens = training_.tokens_per_micro_batch();
  const bool is_last_micro = micro == last_micro();
  // The pass's compute ops that release fetched parameters, in order: the
  // k-th fetch reuses the buffer the (k - buffers)-th one's user released.
  std::vector<OpId> units;
  std::optional<OpId> last_compute;  // the pass's latest compute op
  std::vector<std::pair<int, int>> deferred;  // (partition, index) whose optimizer waits for the verdict
  offloads_.clear();
  std::string grad_in;  // the data the last backward wrote for the unit below it
  for (int l = n - 1; l >= 0; --l) {
    const Layer& layer = layers[static_cast<size_t>(l)];
    const std::string name = layer.name + tag(step, micro);
    const bool recompute = policy_.activation_checkpointing && layer.kind == LayerKind::kBlock;
    const ComputeFootprint footprint = workload_.footprint(static_cast<size_t>(l), tokens);
    const ComputeWork backward = compute_work(OpKind::kBackward, layer, footprint, tokens,
                                              policy_.activation_checkpointing, layer_param16(l));
    const ComputeWork again_work = compute_work(OpKind::kRecompute, layer, footprint, tokens,
                                                policy_.activation_checkpointing, layer_param16(l));
    const Bytes saved = policy_.activation_checkpointing ? footprint.checkpointed : footprint.saved;
    const Bytes full = footprint.saved;
    const size_t count = pieces_[static_cast<size_t>(l)].size();
    const bool whole = count == 1;
    // Gathered in pieces, the recompute fetches for itself (see recompute_pieces).
    if (recompute && !whole) {
      std::vector<OpId> waits = {last_compute ? *last_compute : compute_order_.back()};
      if (units.empty() && training_.precision == Precision::kFp16 && last_verdict_) waits.push_back(*last_verdict_);
      last_compute = recompute_pieces(step, micro, l, waits, units);
    }
    for (size_t k = count; k-- > 0;) {
      const int index = static_cast<int>(units.size());
      Op bwd{.kind = OpKind::kBackward, .lane = Lane::kGpuCompute, .name = "bwd " + unit_name(l, k) + tag(step, micro),
             .layer = l, .step = step, .micro_step = micro,
             .bytes = piece_share(l, k, backward.bytes), .flops = Flops(piece_share(l, k, backward.flops.count()))};
      std::vector<OpId> recycle;
      if (index - h2d_buffers() >= 0) recycle.push_back(units[static_cast<size_t>(index - h2d_buffers())]);
      // fetch_params adds the param16 reads and the frees of fetched copies.
      std::vector<OpId> waits = fetch_params(step, micro, kBackwardPhase, index, l, k, bwd, recycle);
      if (k + 1 == count) fetch_tied_table(step, micro, kBackwardPhase, index, l, bwd, recycle, waits);
      waits.push_back(last_compute ? *last_compute : compute_order_.back());
      // Gradients leave through a bounded set of staging buffers: backward
      // waits for the offload `staging_buffers` units back to drain.
      const size_t drained = static_cast<size_t>(std::max(1, policy_.staging_buffers));
      if (offloads_.size() >= drained) waits.push_back(offloads_[offloads_.size() - drained]);
      if (recompute && whole) {
        // A whole layer's recompute uses the backward's fetch, which the
        // backward releases.
        Op again{.kind = OpKind::kRecompute, .lane = Lane::kGpuCompute, .name = "recompute " + name, .layer = l,
                 .step = step, .micro_step = micro, .bytes = again_work.bytes, .flops = again_work.flops,
                 .deps = waits, .allocs = {{Tier::kGpu, full - saved, "recomputed " + name}},
                 .reads = bwd.reads};
        if (keep_data_) {
          again.writes = {"recomputed " + name};
          again.reads.push_back("act " + name);
        }
        hold_scratch(again, footprint.forward_scratch);
        waits = {add(std::move(again), {step, micro, kBackwardPhase, index, kSubRecompute})};
      }
      if (recompute && k == 0) bwd.frees.push_back({Tier::kGpu, full - saved, "recomputed " + name});
      if (recompute && keep_data_) bwd.reads.push_back("recomputed " + unit_name(l, k) + tag(step, micro));
      // fp16: the loss scale of this step follows from the previous step's
      // overflow verdict, so its backward cannot start before that check.
      if (index == 0 && training_.precision == Precision::kFp16 && last_verdict_)
        waits.push_back(*last_verdict_);
      bwd.deps = std::move(waits);
      if (keep_data_) {
        bwd.reads.push_back("act " + unit_name(l, k) + tag(step, micro));
        if (!grad_in.empty()) bwd.reads.push_back(grad_in);
        grad_in = "grad-in " + unit_name(l, k) + tag(step, micro);
        bwd.writes = {grad_in, "grad16 " + unit_name(l, k) + tag(step, micro)};
      }
      if (k == 0 && saved.count() > 0) bwd.frees.push_back({Tier::kGpu, saved, "activations " + name});
      const Bytes grads(2 * pieces_[static_cast<size_t>(l)][k].params);
      bwd.allocs.push_back({Tier::kGpu, grads, "grad16 " + unit_name(l, k) + tag(step, micro)});
      hold_scratch(bwd, footprint.backward_scratch);
      const OpId b = add(std::move(bwd), {step, micro, kBackwardPhase, index, kSubCompute});
      units.push_back(b);
      last_compute = b;
      reduce_and_offload(step, micro, index, l, k, b);
    }
    if (!is_last_micro) continue;
    const int index = static_cast<int>(units.size()) - 1;
    for (int j = 0; j < static_cast<int>(partitions_.size()); ++j) {
      if (partitions_[static_cast<size_t>(j)].layer != l) continue;
      verdict_inputs_[static_cast<size_t>(j)] = grad_ready_[static_cast<size_t>(j)];
      if (checks_gradients() && !speculative())
        deferred.emplace_back(j, index);
      else
        optimizer_chain(step, j, index, std::nullopt);
    }
  }
  if (!is_last_micro || !checks_gradients()) return;
  const int unit_count = static_cast<int>(units.size());
  const OpId verdict = gradient_check(step, unit_count);
  last_verdict_ = verdict;
  if (speculative()) {
    accept_updates(step, unit_count, verdict);
    return;
  }
  for (const auto& [j, index] : deferred) optimizer_chain(step, j, index, verdict);
}

// The speculative updates of `step` are accepted (or replayed) once the
// verdict is known and every one of them has landed; whatever reads the
// step's parameters or states next waits for that instead of the update.
void Lowering::accept_updates(int step, int layer_count, OpId verdict) {
  Op accept{.kind = OpKind::kAcceptUpdate,
            .lane = Lane::kCpuOptim,
            .name = "accept updates s" + std::to_string(step),
            .step = step,
            .micro_step = last_micro(),
            .deps = {verdict}};
  if (keep_data_) accept.reads.push_back("gradient verdict s" + std::to_string(step));
  for (const Speculation& x : speculations_) {
    accept.deps.insert(accept.deps.end(), x.effects.begin(), x.effects.end());
    accept.frees.push_back(x.copy);
    accept.frees.push_back(x.grads);
  }
  const OpId id = add(std::move(accept), {step, last_micro(), kBackwardPhase, layer_count, kSubPublish});
  const int next = policy_.delayed_update ? step + 2 : step + 1;
  for (const Speculation& x : speculations_) {
    const auto j = static_cast<size_t>(x.partition);
    param_ready_[next][j] = id;
    last_optimizer_[j] = id;
    if (pp(x.partition).optimizer_states == Tier::kNvme) last_state_write_[j] = id;
    if (pp(x.partition).gradients == Tier::kCpu) grads_consumed_[grad_buffer(step)][j] = id;
    updates_[j] = {id};
  }
  speculations_.clear();
}

OpId Lowering::gradient_check(int step, int layer_count) {
  struct Side {
    std::vector<OpId> deps;
    Bytes bytes;
    int64_t params = 0;
  };
  std::array<Side, 2> side;  // [0]: device gradients, [1]: host gradients
  for (int j = 0; j < static_cast<int>(partitions_.size()); ++j) {
    Side& x = side[pp(j).gradients == Tier::kGpu ? 0 : 1];
    const std::vector<OpId>& ready = verdict_inputs_[static_cast<size_t>(j)];
    x.deps.insert(x.deps.end(), ready.begin(), ready.end());
    x.bytes += grad_shard(j);
    x.params += grad_shard(j).count() / 2;
  }
  // Each check reads every 16-bit gradient once (a square and an add per
  // element). Across ranks the partial norms would meet in an all-reduce of
  // one number, too small to schedule.
  const std::string tail = " s" + std::to_string(step);
  std::optional<OpId> verdict;
  for (size_t k = 0; k < side.size(); ++k) {
    if (side[k].params == 0) continue;
    const bool host = k == 1;
    Op check{.kind = OpKind::kGradCheck,
             .lane = host ? Lane::kCpuOptim : Lane::kGpuCompute,
             .name = std::string(host ? "check grads cpu" : "check grads gpu") + tail,
             .step = step,
             .micro_step = last_micro(),
             .tensor_class = TensorClass::kGrad16,
             .bytes = side[k].bytes,
             .flops = Flops(2.0 * static_cast<double>(side[k].params)),
             .params = side[k].params,
             .deps = side[k].deps};
    if (verdict) check.deps.push_back(*verdict);
    if (keep_data_) {
      if (verdict) check.reads.push_back("gradient verdict gpu" + tail);
      check.writes.push_back(std::string(host ? "gradient verdict" : "gradient verdict gpu") + tail);
    }
    verdict = add(std::move(check),
                  {step, last_micro(), kBackwardPhase, layer_count, host ? kSubOptimizer : kSubCompute});
  }
  if (keep_data_) ops_[static_cast<size_t>(*verdict)].writes.back() = "gradient verdict" + tail;
  return *verdict;
}

void Lowering::reduce_and_offload(int step, int micro, int index, int layer, size_t piece, OpId backward_op) {
  const GatherPiece& range = pieces_[static_cast<size_t>(layer)][piece];
  const std::string name = unit_name(layer, piece) + tag(step, micro);
  const Bytes full(2 * range.params);
  std::vector<OpId> ready = {backward_op};
  std::string grads = "grad16 " + name;
  if (ranks_ > 1) {
    const bool scatter = policy_.stage >= ZeroStage::k2;
    const Bytes moved = scatter ? full - full / ranks_ : (full - full / ranks_) * 2;  // ring all-reduce moves twice
    Op reduce{.kind = scatter ? OpKind::kReduceScatter : OpKind::kAllReduce, .lane = Lane::kGpuComm,
              .name = (scatter ? "reduce-scatter " : "all-reduce ") + grads, .layer = layer, .step = step,
              .micro_step = micro, .tensor_class = TensorClass::kGrad16, .bytes = moved, .deps = ready};
    if (keep_data_) {
      reduce.reads = {grads};
      reduce.writes = {grads + " reduced"};
    }
    if (scatter) reduce.frees.push_back({Tier::kGpu, full - full / ranks_, grads});
    ready = {add(std::move(reduce), {step, micro, kBackwardPhase, index, kSubReduce})};
    grads += " reduced";
  }
  for (int j = 0; j < static_cast<int>(partitions_.size()); ++j) {
    const Partition& part = partitions_[static_cast<size_t>(j)];
    if (part.layer != layer) continue;
    const int64_t begin = std::max(part.first_param, range.first_param);
    const int64_t end = std::min(part.first_param + part.params, range.first_param + range.params);
    if (begin >= end) continue;
    // This piece's share of the partition's gradient shard, exact over the pieces.
    const Bytes shard = slice(grad_shard(j), part.params, begin - part.first_param, end - part.first_param);
    std::vector<OpId>& produced = grad_ready_[static_cast<size_t>(j)];
    if (pp(j).gradients == Tier::kGpu) {
      // The first micro-step's gradients become the accumulation buffer the
      // GPU optimizer frees; later ones are added into it and released.
      if (micro > 0) ops_[static_cast<size_t>(ready.back())].frees.push_back({Tier::kGpu, shard, grads});
      produced.insert(produced.end(), ready.begin(), ready.end());
      continue;
    }
    // Gradients to the host: the first micro-step allocates the host buffer,
    // later ones accumulate into it.
    Op offload{.kind = OpKind::kOffloadGrads, .lane = Lane::kPcieD2h,
               .name = "d2h grad16 " + (pieces_[static_cast<size_t>(layer)].size() == 1 ? pname(j) : unit_name(layer, piece)) +
                       tag(step, micro),
               .partition = j, .layer = layer, .step = step, .micro_step = micro,
               .tensor_class = TensorClass::kGrad16, .bytes = shard, .deps = ready,
               .frees = {{Tier::kGpu, shard, "grad16 " + name}}};
    if (keep_data_) {
      offload.reads = {grads};
      offload.writes = {"grad16 " + pname(j) + " cpu s" + std::to_string(step)};
    }
    if (micro == 0) {
      offload.allocs.push_back({Tier::kCpu, shard, "grad16 " + pname(j) + " cpu"});
    } else {
      // Later micro-steps land beside the host accumulator and are added in.
      const MemoryEffect landing{Tier::kCpu, shard, "grad16 " + pname(j) + " landing"};
      offload.allocs.push_back(landing);
      offload.frees.push_back(landing);
    }
    if (const auto& last = grads_consumed_[grad_buffer(step)][static_cast<size_t>(j)]) offload.deps.push_back(*last);
    produced.push_back(add(std::move(offload), {step, micro, kBackwardPhase, index, kSubOffload}));
    offloads_.push_back(produced.back());
  }
}

void Lowering::optimizer_chain(int step, int j, int index, std::optional<OpId> verdict) {
  const PartitionPolicy& p = pp(j);
  const std::string name = pname(j) + " s" + std::to_string(step);
  const int64_t params = state_params(j);
  const Bytes states = state_bytes(j);
  const Tier host = Tier::kCpu;
  std::vector<OpId> deps = grad_ready_[static_cast<size_t>(j)];
  grad_ready_[static_cast<size_t>(j)].clear();
  if (verdict) deps.push_back(*verdict);
  // A checkpoint of the previous step copies this partition just before
  // this update overwrites it.
  if (pending_checkpoint_ && *pending_checkpoint_ == step - 1)
    deps.push_back(snapshot(j, verdict, {step, last_micro(), kBackwardPhase, index, kSubReadStates}));
  // Step t's update reads the states step t-1's update wrote.
  if (const auto& previous = last_optimizer_[static_cast<size_t>(j)]) deps.push_back(*previous);
  const std::string states_name = "states " + pname(j);
  std::string states_at = states_name + " v" + std::to_string(step) + " " + std::string(to_string(p.optimizer_states));
  if (p.optimizer_states == Tier::kNvme) {
    // Reads run ahead of the optimizer by the prefetch depth; the buffer they
    // fill is the one the optimizer `depth` partitions earlier releases.
    Op read{.kind = OpKind::kReadStates, .lane = Lane::kNvmeRead, .name = "read states " + name, .partition = j,
            .layer = partitions_[static_cast<size_t>(j)].layer, .step = step, .tensor_class = TensorClass::kMaster32,
            .bytes = states, .allocs = {{host, states, states_name + " staged"}}, .reads = {states_at},
            .writes = {states_name + " staged s" + std::to_string(step)}};
    if (last_state_write_[static_cast<size_t>(j)]) read.deps.push_back(*last_state_write_[static_cast<size_t>(j)]);
    const int k = static_cast<int>(optimizer_order_.size());
    if (k - nvme_buffers() >= 0)
      read.deps.push_back(optimizer_order_[static_cast<size_t>(k - nvme_buffers())]);
    const int ahead = std::max(0, index - policy_.nvme_prefetch_depth);
    deps.push_back(add(std::move(read), {step, last_micro(), kBackwardPhase, ahead, kSubReadStates}));
    states_at = states_name + " staged s" + std::to_string(step);
  }
  const bool on_cpu = p.optimizer == OptimizerDevice::kCpu;
  Op opt{.kind = OpKind::kOptimizer, .lane = on_cpu ? Lane::kCpuOptim : Lane::kGpuCompute, .name = "adam " + name,
         .partition = j, .layer = partitions_[static_cast<size_t>(j)].layer, .step = step,
         .micro_step = last_micro(),
         // Adam reads master, m, v and the gradient and writes master, m, v and
         // the 16-bit copy: 12 + 2 read, 12 + 2 written per parameter (8 + 2
         // with bf16 moments; core/tensor_class.h).
         .bytes = Bytes(adam_bytes_per_param(policy_.optimizer_state_precision) * params),
         .flops = Flops(12.0 * static_cast<double>(params)), .params = params,
         .deps = deps, .reads = {states_at}};
  if (verdict && keep_data_) opt.reads.push_back("gradient verdict s" + std::to_string(step));
  const MemoryEffect grads = p.gradients == Tier::kCpu
                                 ? MemoryEffect{Tier::kCpu, grad_shard(j), "grad16 " + pname(j) + " cpu"}
                                 : MemoryEffect{Tier::kGpu, grad_shard(j), "grad16 " + pname(j)};
  if (p.gradients == Tier::kCpu) opt.reads.push_back("grad16 " + pname(j) + " cpu s" + std::to_string(step));
  // A speculative update copies the states it is about to overwrite, where
  // it updates them, and leaves its gradients for a replay.
  const MemoryEffect copy{on_cpu ? Tier::kCpu : Tier::kGpu, states, std::string(kRollbackCopy) + pname(j)};
  if (speculative())
    opt.allocs.push_back(copy);
  else
    opt.frees.push_back(grads);
  // Updated 16-bit parameters that do not land where they rest wait in a
  // buffer for the op that publishes them: a CPU optimizer's in host
  // memory (for the GPU, or NVMe); a GPU optimizer's on the GPU, for a
  // d2h copy to their CPU home or to a host buffer bound for NVMe.
  const bool gpu_update_leaves = !on_cpu && p.param16 != Tier::kGpu;
  const bool staged_update = p.param16 == Tier::kNvme || (on_cpu && p.param16 == Tier::kGpu);
  const MemoryEffect updated{host, Bytes(2 * params), "updated param16 " + pname(j)};
  const MemoryEffect updated_on_gpu{Tier::kGpu, Bytes(2 * params), "updated param16 " + pname(j) + " on gpu"};
  if (gpu_update_leaves)
    opt.allocs.push_back(updated_on_gpu);
  else if (staged_update)
    opt.allocs.push_back(updated);
  const int micro = last_micro();
  const OpId o = add(std::move(opt), {step, micro, kBackwardPhase, index, kSubOptimizer});
  optimizer_order_.push_back(o);
  last_optimizer_[static_cast<size_t>(j)] = o;
  if (p.gradients == Tier::kCpu) grads_consumed_[grad_buffer(step)][static_cast<size_t>(j)] = o;
  if (speculative()) speculations_.push_back({.partition = j, .effects = {o}, .copy = copy, .grads = grads});
  if (p.optimizer_states == Tier::kNvme) {
    Op write{.kind = OpKind::kWriteStates, .lane = Lane::kNvmeWrite, .name = "write states " + name, .partition = j,
             .layer = partitions_[static_cast<size_t>(j)].layer, .step = step, .tensor_class = TensorClass::kMaster32,
             .bytes = states, .deps = {o}, .frees = {{host, states, states_name + " staged"}},
             .writes = {states_name + " v" + std::to_string(step + 1) + " nvme"}};
    last_state_write_[static_cast<size_t>(j)] = add(std::move(write), {step, micro, kBackwardPhase, index, kSubWriteStates});
  } else {
    ops_[static_cast<size_t>(o)].writes.push_back(states_name + " v" + std::to_string(step + 1) + " " +
                                                  std::string(to_string(p.optimizer_states)));
  }
  // Publish the updated 16-bit parameters where they rest.
  const int next = policy_.delayed_update ? step + 2 : step + 1;
  const std::string fresh = "param16 " + pname(j) + " v" + std::to_string(next);
  OpId publish = o;
  if (gpu_update_leaves) {
    Op down{.kind = OpKind::kOffloadParams,
            .lane = Lane::kPcieD2h,
            .name = "d2h updated param16 " + name,
            .partition = j,
            .layer = partitions_[static_cast<size_t>(j)].layer,
            .step = step,
            .micro_step = micro,
            .tensor_class = TensorClass::kParam16,
            .bytes = Bytes(2 * params),
            .deps = {o},
            .frees = {updated_on_gpu}};
    if (p.param16 == Tier::kNvme) down.allocs.push_back(updated);
    if (keep_data_) down.writes = {fresh + (p.param16 == Tier::kNvme ? " staged" : " cpu")};
    publish = add(std::move(down), {step, micro, kBackwardPhase, index, kSubPublish});
  }
  if (on_cpu && p.param16 == Tier::kGpu) {
    Op upload{.kind = OpKind::kUploadParams,
              .lane = Lane::kPcieH2d,
              .name = "h2d updated param16 " + name,
              .partition = j,
              .layer = partitions_[static_cast<size_t>(j)].layer,
              .step = step,
              .micro_step = micro,
              .tensor_class = TensorClass::kParam16,
              .bytes = Bytes(2 * params),
              .deps = {o},
              .frees = {updated},
              .writes = {fresh + " gpu"}};
    publish = add(std::move(upload), {step, micro, kBackwardPhase, index, kSubPublish});
  } else if (p.param16 == Tier::kNvme) {
    Op write{.kind = OpKind::kWriteParams,
             .lane = Lane::kNvmeWrite,
             .name = "write param16 " + name,
             .partition = j,
             .layer = partitions_[static_cast<size_t>(j)].layer,
             .step = step,
             .tensor_class = TensorClass::kParam16,
             .bytes = param_shard(j),
             .deps = {publish},
             .frees = {updated},
             .writes = {fresh + " nvme"}};
    publish = add(std::move(write), {step, micro, kBackwardPhase, index, kSubPublish});
  } else if (!gpu_update_leaves) {
    ops_[static_cast<size_t>(o)].writes.push_back(fresh + " " + std::string(to_string(p.param16)));
  }
  if (state_ranks() > 1 && policy_.stage < ZeroStage::k3 && p.param16 == Tier::kGpu) {
    // Stages 1 and 2 keep a full replica: each rank updated its 1/ranks.
    const Bytes full(2 * partitions_[static_cast<size_t>(j)].params);
    Op gather{.kind = OpKind::kAllGather, .lane = Lane::kGpuComm, .name = "gather updated param16 " + name,
              .partition = j, .layer = partitions_[static_cast<size_t>(j)].layer, .step = step,
              .tensor_class = TensorClass::kParam16, .bytes = full - full / ranks_, .deps = {publish}};
    publish = add(std::move(gather), {step, micro, kBackwardPhase, index, kSubGatherUpdate});
  }
  auto& ready = param_ready_[next];
  if (ready.empty()) ready.resize(partitions_.size());
  ready[static_cast<size_t>(j)] = publish;
  if (speculative()) {
    speculations_.back().effects.push_back(publish);
    if (p.optimizer_states == Tier::kNvme)
      speculations_.back().effects.push_back(*last_state_write_[static_cast<size_t>(j)]);
  }
  // The previous step's publish too: under a delayed update it wrote the
  // other parameter version a snapshot copies, possibly on another slot.
  std::vector<OpId>& updates = updates_[static_cast<size_t>(j)];
  updates = updates.empty() ? std::vector<OpId>{publish} : std::vector<OpId>{publish, updates.front()};
  if (p.optimizer_states == Tier::kNvme) updates.push_back(*last_state_write_[static_cast<size_t>(j)]);
}

// A checkpoint after step k: one snapshot op per partition copies its state
// (param16 versions, master32, adam_m, adam_v) to host memory once step k's
// update of it has landed, placed on cpu.optim just before step k+1's
// optimizer of that partition (which waits for it, and for nothing else of
// the checkpoint), so training runs on; after the last snapshot a commit op
// writes them all to the checkpoint folder and frees them. A snapshot also
// waits for step k+1's gradient check, which comes first on that lane.
OpId Lowering::snapshot(int j, std::optional<OpId> verdict, Key key) {
  const int step = *pending_checkpoint_;
  const int versions = policy_.delayed_update ? 2 : 1;
  const Bytes bytes = param_shard(j) * versions + state_bytes(j);
  Op copy{.kind = OpKind::kCheckpoint,
          .lane = Lane::kCpuOptim,
          .name = "snapshot " + pname(j) + " s" + std::to_string(step),
          .partition = j,
          .layer = partitions_[static_cast<size_t>(j)].layer,
          .step = step,
          .micro_step = last_micro(),
          .bytes = bytes,
          .deps = updates_[static_cast<size_t>(j)],
          .allocs = {{Tier::kCpu, bytes, "checkpoint snapshot " + pname(j)}}};
  if (verdict) copy.deps.push_back(*verdict);
  snapshots_.push_back(add(std::move(copy), key));
  return snapshots_.back();
}

void Lowering::commit_checkpoint() {
  const int step = *pending_checkpoint_;
  if (snapshots_.size() < partitions_.size()) {
    // The checkpoint after the schedule's last step: no later update to
    // wait for, so the snapshots follow the last step's updates.
    for (int j = 0; j < static_cast<int>(partitions_.size()); ++j)
      snapshot(j, std::nullopt, {step + 1, 0, kBackwardPhase, 65535, kSubReadStates});
  }
  Op commit{.kind = OpKind::kCheckpoint,
            .lane = Lane::kCpuOptim,
            .name = "checkpoint s" + std::to_string(step),
            .step = step,
            .micro_step = last_micro(),
            .deps = snapshots_};
  for (OpId id : snapshots_) commit.frees.push_back(ops_[static_cast<size_t>(id)].allocs.front());
  add(std::move(commit), {step + 1, last_micro(), kBackwardPhase, 65535, kSubGatherUpdate});
  snapshots_.clear();
  pending_checkpoint_.reset();
}

void Lowering::lower_step(int step) {
  optimizer_order_.clear();
  for (int micro = 0; micro <= last_micro(); ++micro) {
    forward(step, micro);
    backward(step, micro);
  }
  if (pending_checkpoint_) commit_checkpoint();  // the previous step's: every snapshot is taken
  const std::vector<int>& after = options_.checkpoint_after;
  if (std::find(after.begin(), after.end(), step) != after.end()) pending_checkpoint_ = step;
}

Result<Schedule> Lowering::run() {
  // Each message starts with the plan field at fault, so that a caller
  // holding the plan file gives it a line and column (locate_in_plan).
  if (policy_.partitions.size() != partitions_.size()) {
    return fail({{}, "policy.partitions: the policy has " + std::to_string(policy_.partitions.size()) +
                         " partitions but " + workload_.model().name + " splits into " +
                         std::to_string(partitions_.size()),
                 "one partition policy per layer or sub-group"});
  }
  for (size_t i = 0; i < policy_.partitions.size(); ++i) {
    const PartitionPolicy& p = policy_.partitions[i];
    const std::string field = "policy.partitions[" + std::to_string(i) + "].";
    const bool nvme = p.param16 == Tier::kNvme || p.optimizer_states == Tier::kNvme;
    if (nvme && machine_.nvme_count == 0) {
      return fail({{}, field + (p.param16 == Tier::kNvme ? "param16" : "optimizer_states") +
                           ": the policy puts data on NVMe but " + machine_.name + " has no NVMe drives",
                   "a machine with nvme_count > 0, or no NVMe tier"});
    }
    if (p.optimizer == OptimizerDevice::kGpu && (p.optimizer_states != Tier::kGpu || p.gradients != Tier::kGpu)) {
      return fail({{}, field + "optimizer: a GPU optimizer needs its states and gradients on the GPU",
                   "optimizer: cpu, or optimizer_states and gradients on gpu"});
    }
    // Lowering has no gradient swap to NVMe: such gradients would be
    // allocated in CPU RAM and never freed (issue 11).
    if (p.gradients == Tier::kNvme) {
      return fail({{}, field + "gradients: gradients on NVMe are not supported", "gradients: gpu or cpu"});
    }
  }
  for (auto& buffer : grads_consumed_) buffer.assign(partitions_.size(), std::nullopt);
  last_state_write_.assign(partitions_.size(), std::nullopt);
  last_optimizer_.assign(partitions_.size(), std::nullopt);
  updates_.assign(partitions_.size(), {});
  grad_ready_.assign(partitions_.size(), {});
  verdict_inputs_.assign(partitions_.size(), {});
  param_ready_[0].resize(partitions_.size());
  param_ready_[1].resize(partitions_.size());
  for (int step = 0; step < options_.steps; ++step) {
    if (param_ready_[step].empty()) param_ready_[step].resize(partitions_.size());
    lower_step(step);
  }
  if (pending_checkpoint_) commit_checkpoint();
  return finish();
}

Result<Schedule> Lowering::finish() {
  // Priority topological sort: Kahn's algorithm taking the smallest key.
  const size_t n = ops_.size();
  std::vector<std::vector<OpId>> users(n);
  std::vector<int> pending(n, 0);
  for (const Op& op : ops_) {
    for (OpId d : op.deps) {
      users[static_cast<size_t>(d)].push_back(op.id);
      ++pending[static_cast<size_t>(op.id)];
    }
  }
  using Entry = std::pair<int64_t, OpId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push({keys_[i], static_cast<OpId>(i)});
  }
  std::vector<OpId> order;
  order.reserve(n);
  while (!ready.empty()) {
    const OpId id = ready.top().second;
    ready.pop();
    order.push_back(id);
    for (OpId u : users[static_cast<size_t>(id)]) {
      if (--pending[static_cast<size_t>(u)] == 0) ready.push({keys_[static_cast<size_t>(u)], u});
    }
  }
  if (order.size() != n) return fail({{}, "lowering produced a dependency cycle (a bug in stowage)", ""});
  std::vector<OpId> renumber(n);
  for (size_t i = 0; i < n; ++i) renumber[static_cast<size_t>(order[i])] = static_cast<OpId>(i);
  Schedule s;
  s.ops.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Op& op = s.ops.emplace_back(std::move(ops_[static_cast<size_t>(order[i])]));
    op.id = static_cast<OpId>(i);
    for (OpId& d : op.deps) d = renumber[static_cast<size_t>(d)];
    std::sort(op.deps.begin(), op.deps.end());
    op.deps.erase(std::unique(op.deps.begin(), op.deps.end()), op.deps.end());
  }
  s.steps = options_.steps;
  s.bf16 = training_.precision == Precision::kBf16;
  s.pinned = policy_.pinned_memory;
  // NVMe queues keep as many reads (and writes) in flight as the prefetch depth.
  s.lane_slots[static_cast<size_t>(Lane::kNvmeRead)] = std::max(1, policy_.nvme_prefetch_depth);
  s.lane_slots[static_cast<size_t>(Lane::kNvmeWrite)] = std::max(1, policy_.nvme_prefetch_depth);
  s.ranks = ranks_;
  s.tokens_per_step = training_.tokens_per_micro_batch() * training_.gradient_accumulation * ranks_;
  s.model_flops_per_step = workload_.model_flops_per_token() * static_cast<double>(s.tokens_per_step);
  resident_memory(s);
  for (int j = 0; j < static_cast<int>(partitions_.size()); ++j) {
    s.initial_data.push_back("param16 " + pname(j) + " v0 " + std::string(to_string(pp(j).param16)));
    s.initial_data.push_back("states " + pname(j) + " v0 " + std::string(to_string(pp(j).optimizer_states)));
    if (policy_.delayed_update) {
      s.initial_data.push_back("param16 " + pname(j) + " v1 " + std::string(to_string(pp(j).param16)));
    }
  }
  std::vector<std::string> problems = options_.validate ? validate(s) : std::vector<std::string>{};
  if (!problems.empty()) {
    Diagnostics d;
    for (std::string& p : problems) d.push_back({{}, "invalid schedule (a bug in stowage): " + std::move(p), ""});
    return std::unexpected(d);
  }
  return s;
}

}  // namespace

namespace {

// Micro-steps a Key can order (its micro field is 4096 wide), and the ops a
// schedule may hold: each op is a few hundred bytes with its name and
// effects, so 20 million is several GB. Past either, lowering is refused
// with the field at fault instead of failing to allocate (issue 12: a plan
// with gradient_accumulation: 1000000 ended in "internal error:
// std::bad_alloc").
constexpr int64_t kMaxMicroSteps = 4096;

// The ops the lowering reserves for one step: each factor is bounded
// (micro-steps by kMaxMicroSteps), so products with a step count fit in 64 bits.
int64_t ops_per_step_estimate(const Policy& policy, const Workload& workload, int64_t micro) {
  const auto partitions = static_cast<int64_t>(partitions_of(workload, policy.sub_group_params).size());
  int64_t layers = 0;  // gathered pieces: one per layer unless gathered by parameter
  for (const Layer& l : workload.layers())
    layers += static_cast<int64_t>(gather_pieces(l, policy.gather_params).size());
  return 10 * (partitions + layers) * micro;
}

int64_t micro_steps(const Policy& policy, const TrainingSpec& training) {
  return std::max<int64_t>(1, effective_training(training, policy).gradient_accumulation);
}

std::optional<Diagnostic> too_big(const Policy& policy, const Workload& workload, const TrainingSpec& training,
                                  const LowerOptions& options) {
  const int64_t micro = micro_steps(policy, training);
  const std::string field = policy.gradient_accumulation > 0 ? "policy.gradient_accumulation: "
                                                             : "the training profile's gradient_accumulation: ";
  if (micro > kMaxMicroSteps) {
    return Diagnostic{{}, field + std::to_string(micro) + " micro-steps per step",
                      "at most " + std::to_string(kMaxMicroSteps) + " (a larger micro_batch instead)"};
  }
  const int64_t steps = std::max<int64_t>(1, options.steps);
  const int64_t ops = ops_per_step_estimate(policy, workload, micro) * steps;
  if (ops > kMaxScheduleOps) {
    return Diagnostic{{}, field + std::to_string(micro) + " micro-steps per step over " + std::to_string(steps) +
                              " steps make about " + std::to_string(ops) + " ops",
                      "a schedule of at most " + std::to_string(kMaxScheduleOps) +
                          " ops: fewer micro-steps or steps"};
  }
  return std::nullopt;
}

}  // namespace

int64_t max_steps_in_one_schedule(const Policy& policy, const Workload& workload,
                                  const TrainingSpec& training, int64_t ops) {
  const int64_t micro = micro_steps(policy, training);
  if (micro > kMaxMicroSteps) return 0;
  return std::min(ops, kMaxScheduleOps) / ops_per_step_estimate(policy, workload, micro);
}

Result<Schedule> lower(const Policy& policy, const MachineSpec& machine, const Workload& workload,
                       const TrainingSpec& training, const LowerOptions& options) {
  if (std::optional<Diagnostic> d = too_big(policy, workload, training, options)) return fail(std::move(*d));
  return Lowering(policy, machine, workload, training, options).run();
}

}  // namespace stowage::core
