// The GUI's data model of one timeline: tracks (one per lane and concurrent
// slot, grouped by rank), ops on them with their arguments and
// dependencies, and memory per tier over time. GUI-free: built from a trace
// file (trace_loader.h) or from a schedule and its timeline
// (trace_from_timeline.h), and read by the painters, the LOD pass and tests.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/schedule.h"
#include "core/tensor_class.h"
#include "core/timeline.h"
#include "core/trace_origin.h"
#include "core/units.h"

namespace stowage::gui {

using core::SimTime;

// What an op does, for colour: the seven kinds the timeline legend names.
enum class OpCategory : uint8_t { kCompute, kH2d, kD2h, kNvmeRead, kNvmeWrite, kOptimizer, kCommunication };
inline constexpr int kOpCategoryCount = 7;
[[nodiscard]] std::string_view to_string(OpCategory category);
// The category of an op of `kind` on `lane` (an optimizer on the GPU is
// still an optimizer; a collective on any lane is communication).
[[nodiscard]] OpCategory category_of(core::OpKind kind, core::Lane lane);

// A string kept in TraceModel's text arena: a million op names cost one
// buffer, not a million allocations. Read it with TraceModel::text().
struct TextRef {
  uint32_t offset = 0;  // bytes into the arena
  uint32_t size = 0;
};

inline constexpr size_t kMaxTextBytes = 0xffff'ffff;  // what a TextRef can address

struct TraceOp {
  int64_t id = 0;     // the op's id in the schedule (trace args.id)
  int32_t track = 0;  // index into TraceModel::tracks
  OpCategory category = OpCategory::kCompute;
  core::OpKind kind = core::OpKind::kForward;
  core::Lane lane = core::Lane::kGpuCompute;
  SimTime start = 0;  // ns since the start of the schedule
  SimTime end = 0;    // ns; end >= start
  TextRef name;       // "fwd layers.3 s0 m0": TraceModel::text(op.name)
  int partition = -1;
  int layer = -1;
  int step = 0;
  int micro_step = 0;
  std::optional<core::TensorClass> tensor_class;  // what a transfer moves
  core::Bytes bytes;
  core::Flops flops;
  [[nodiscard]] SimTime duration() const { return end - start; }
};

struct Track {
  std::string name;  // "nvme.read #2"
  int rank = 0;      // data-parallel rank it belongs to
  core::Lane lane = core::Lane::kGpuCompute;
  std::vector<int32_t> ops;  // indices into TraceModel::ops, by start time
};

struct MemoryPoint {
  SimTime time = 0;
  core::Bytes bytes;  // in use from `time` on, per rank
};

// What holds a tier's bytes over time, by class (tensor classes and the
// buffers that are none: docs/formats/trace.md, "classes in gpu memory").
// Each sample gives every class's bytes from its time on.
class ClassMemory {
 public:
  struct Share {
    std::string_view name;  // "adam_m"
    core::Bytes bytes;
  };
  // Starts a sample at `time` (samples come in time order); add() fills it.
  void begin_sample(SimTime time);
  void add(std::string_view name, core::Bytes bytes);
  // The last sample at or before `time`, classes with bytes only, largest
  // first (ties by name); empty before the first sample or with none.
  [[nodiscard]] std::vector<Share> at(SimTime time) const;
  [[nodiscard]] bool empty() const { return times_.empty(); }
  [[nodiscard]] size_t size() const { return times_.size(); }

 private:
  struct Value {
    uint16_t name = 0;  // into names_
    core::Bytes bytes;
  };
  std::vector<std::string> names_;
  std::vector<SimTime> times_;
  std::vector<uint32_t> first_;  // sample k's values are values_[first_[k], first_[k + 1])
  std::vector<Value> values_;
};

struct TraceInfo {
  std::string file;    // where it was loaded from; empty when built in memory
  std::string title;   // "predicted: llama-2-13b on workstation-24gb-1nvme"
  std::string source;  // "predicted" or "measured"
  int ranks = 1;
  int steps = 1;
  // A predicted trace's step as the simulator gave it (otherData), which
  // is longer than its last steps measure when a lane falls behind.
  std::optional<SimTime> steady_step;
  std::optional<core::Lane> falls_behind;
  // A predicted trace's warnings (otherData.warnings): what its figures
  // rest on that no profile said, shown above the timeline.
  std::vector<std::string> warnings;
  // Where its times come from (otherData.machine ... .device): the machine
  // a prediction priced, the device a measurement ran on; on a PyTorch
  // profiler trace, the GPU its deviceProperties name first.
  core::TraceOrigin origin;
  // A PyTorch profiler trace (calibration/kineto_trace.h): drawn as it is,
  // but its ops carry no Stowage ids, so none is matched to a prediction's.
  bool pytorch_profiler = false;
};

// Ops and tracks are immutable after finish(); indices are stable.
class TraceModel {
 public:
  TraceInfo info;
  std::vector<TraceOp> ops;
  std::vector<Track> tracks;                           // in display order
  std::array<std::vector<MemoryPoint>, 3> memory;      // by core::Tier, in time order
  std::array<std::optional<core::Bytes>, 3> capacity;  // by core::Tier, per rank; absent when unknown
  std::array<ClassMemory, 3> class_memory;             // by core::Tier; empty when the trace has none

  // Keeps `text` in the model's arena; the reference stays valid when the
  // model is moved or copied.
  [[nodiscard]] TextRef add_text(std::string_view text);
  // Appends a whole arena at once (the fast trace reader's per-chunk names);
  // returns the offset its first byte lands at.
  [[nodiscard]] uint32_t append_texts(std::string_view arena);
  [[nodiscard]] std::string_view text(TextRef ref) const;
  // Bytes the arena holds.
  [[nodiscard]] size_t text_bytes() const { return text_.size(); }

  // Sets op i's dependencies as op ids (as the trace lists them); ids that
  // name no op are dropped by finish().
  void set_deps(int32_t op, std::span<const int64_t> dep_ids);
  void set_deps(int32_t op, std::initializer_list<int64_t> dep_ids) {
    set_deps(op, std::span<const int64_t>(dep_ids.begin(), dep_ids.size()));
  }
  // Room for `count` more dependencies (a reader that knows how many).
  void reserve_deps(size_t count) { pending_deps_.reserve(pending_deps_.size() + count); }
  // Sorts each track by start, resolves dependency ids to indices and
  // builds the reverse edges. Call once after filling ops, tracks and deps.
  void finish();

  [[nodiscard]] std::span<const int32_t> deps(int32_t op) const;       // what op waits on
  [[nodiscard]] std::span<const int32_t> consumers(int32_t op) const;  // what waits on op
  [[nodiscard]] std::optional<int32_t> index_of_id(int64_t id) const;
  // [first start, last end or memory sample]; {0, 0} when empty.
  [[nodiscard]] SimTime begin_time() const { return begin_; }
  [[nodiscard]] SimTime end_time() const { return end_; }
  [[nodiscard]] int rank_count() const;

 private:
  struct PendingDep {
    int32_t op;
    int64_t dep_id;
  };
  std::string text_;                             // names, back to back
  void index_ids();

  std::vector<PendingDep> pending_deps_;         // until finish()
  std::vector<int32_t> dep_offset_, dep_index_;  // CSR: deps of op i
  std::vector<int32_t> con_offset_, con_index_;  // CSR: consumers of op i
  std::vector<int32_t> by_id_;                   // op indices by id, when ids are not dense
  std::vector<int32_t> dense_;                   // index of id dense_base_ + k, -1 when absent
  int64_t dense_base_ = 0;
  SimTime begin_ = 0, end_ = 0;
};

// The lane named by a trace thread ("nvme.read #2" -> nvme.read), or by an
// event's `cat`; nullopt for a name that is no lane.
[[nodiscard]] std::optional<core::Lane> lane_from_name(std::string_view name);
[[nodiscard]] std::optional<core::OpKind> op_kind_from_name(std::string_view name);
[[nodiscard]] std::optional<core::TensorClass> tensor_class_from_name(std::string_view name);

}  // namespace stowage::gui
