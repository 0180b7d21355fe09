// Dependencies are kept as two compressed adjacency lists (deps and their
// reverse), so a million-op model costs a few flat arrays, not a million
// small vectors.
#include "gui/trace_model.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace stowage::gui {
namespace {

// A compressed adjacency list from (from, to) edges: offset[i]..offset[i+1]
// index the targets of node i, in the order the edges came.
void compress(size_t nodes, const std::vector<std::pair<int32_t, int32_t>>& edges,
              std::vector<int32_t>& offset, std::vector<int32_t>& index) {
  offset.assign(nodes + 1, 0);
  for (const auto& [from, to] : edges) ++offset[static_cast<size_t>(from) + 1];
  for (size_t i = 0; i < nodes; ++i) offset[i + 1] += offset[i];
  index.assign(edges.size(), 0);
  std::vector<int32_t> next(offset.begin(), offset.end() - 1);
  for (const auto& [from, to] : edges) index[static_cast<size_t>(next[static_cast<size_t>(from)]++)] = to;
}

std::span<const int32_t> row(const std::vector<int32_t>& offset, const std::vector<int32_t>& index,
                             int32_t i) {
  if (i < 0 || static_cast<size_t>(i) + 1 >= offset.size()) return {};
  const auto first = static_cast<size_t>(offset[static_cast<size_t>(i)]);
  const auto last = static_cast<size_t>(offset[static_cast<size_t>(i) + 1]);
  return std::span<const int32_t>(index).subspan(first, last - first);
}

}  // namespace

std::string_view to_string(OpCategory category) {
  switch (category) {
    case OpCategory::kCompute:
      return "compute";
    case OpCategory::kH2d:
      return "H2D";
    case OpCategory::kD2h:
      return "D2H";
    case OpCategory::kNvmeRead:
      return "NVMe read";
    case OpCategory::kNvmeWrite:
      return "NVMe write";
    case OpCategory::kOptimizer:
      return "optimizer";
    case OpCategory::kCommunication:
      return "communication";
  }
  return "";
}

OpCategory category_of(core::OpKind kind, core::Lane lane) {
  using core::OpKind;
  if (kind == OpKind::kOptimizer) return OpCategory::kOptimizer;
  if (kind == OpKind::kAllGather || kind == OpKind::kReduceScatter || kind == OpKind::kAllReduce) {
    return OpCategory::kCommunication;
  }
  switch (lane) {
    case core::Lane::kGpuCompute:
      return OpCategory::kCompute;
    case core::Lane::kPcieH2d:
      return OpCategory::kH2d;
    case core::Lane::kPcieD2h:
      return OpCategory::kD2h;
    case core::Lane::kNvmeRead:
      return OpCategory::kNvmeRead;
    case core::Lane::kNvmeWrite:
      return OpCategory::kNvmeWrite;
    case core::Lane::kCpuOptim:
      return OpCategory::kOptimizer;
    case core::Lane::kGpuComm:
      return OpCategory::kCommunication;
  }
  return OpCategory::kCompute;
}

TextRef TraceModel::add_text(std::string_view text) {
  return {.offset = append_texts(text), .size = static_cast<uint32_t>(text.size())};
}

uint32_t TraceModel::append_texts(std::string_view arena) {
  // A broken invariant, not bad input: the trace reader refuses such a file first.
  if (text_.size() + arena.size() > kMaxTextBytes) throw std::length_error("TraceModel: text arena over 4 GiB");
  const auto offset = static_cast<uint32_t>(text_.size());
  text_.append(arena);
  return offset;
}

std::string_view TraceModel::text(TextRef ref) const {
  if (static_cast<size_t>(ref.offset) + ref.size > text_.size()) return {};
  return std::string_view(text_).substr(ref.offset, ref.size);
}

void TraceModel::set_deps(int32_t op, std::span<const int64_t> dep_ids) {
  for (const int64_t id : dep_ids) pending_deps_.push_back({.op = op, .dep_id = id});
}

// Traces list ops in start order per track and in id order overall, so both
// sorts are usually a check.
void TraceModel::finish() {
  const auto start_of = [&](int32_t i) { return ops[static_cast<size_t>(i)].start; };
  const auto id_of = [&](int32_t i) { return ops[static_cast<size_t>(i)].id; };
  for (Track& track : tracks) {
    if (!std::ranges::is_sorted(track.ops, {}, start_of)) std::ranges::stable_sort(track.ops, {}, start_of);
  }
  by_id_.assign(ops.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i) by_id_[i] = static_cast<int32_t>(i);
  if (!std::ranges::is_sorted(by_id_, {}, id_of)) std::ranges::sort(by_id_, {}, id_of);
  index_ids();

  std::vector<std::pair<int32_t, int32_t>> edges;  // (op, what it waits on)
  edges.reserve(pending_deps_.size());
  for (const PendingDep& d : pending_deps_) {
    if (const std::optional<int32_t> dep = index_of_id(d.dep_id)) edges.emplace_back(d.op, *dep);
  }
  pending_deps_ = {};
  compress(ops.size(), edges, dep_offset_, dep_index_);
  for (auto& [op, dep] : edges) std::swap(op, dep);
  compress(ops.size(), edges, con_offset_, con_index_);

  begin_ = ops.empty() ? 0 : ops.front().start;
  end_ = 0;
  for (const TraceOp& op : ops) {
    begin_ = std::min(begin_, op.start);
    end_ = std::max(end_, op.end);
  }
  for (const auto& series : memory) {
    if (!series.empty()) end_ = std::max(end_, series.back().time);
  }
}

std::span<const int32_t> TraceModel::deps(int32_t op) const {
  return row(dep_offset_, dep_index_, op);
}
std::span<const int32_t> TraceModel::consumers(int32_t op) const {
  return row(con_offset_, con_index_, op);
}

// Schedules number ops 0, 1, 2, ...: then a direct table replaces the
// binary search, which matters when resolving millions of dependencies.
void TraceModel::index_ids() {
  dense_.clear();
  if (by_id_.empty()) return;
  const int64_t first = ops[static_cast<size_t>(by_id_.front())].id;
  const int64_t last = ops[static_cast<size_t>(by_id_.back())].id;
  if (last - first >= 2 * static_cast<int64_t>(ops.size()) + 16) return;
  dense_base_ = first;
  dense_.assign(static_cast<size_t>(last - first) + 1, -1);
  // Backwards, so that of ops sharing an id the first in by_id_ wins, as
  // the binary search finds it.
  for (auto it = by_id_.rbegin(); it != by_id_.rend(); ++it)
    dense_[static_cast<size_t>(ops[static_cast<size_t>(*it)].id - first)] = *it;
  by_id_ = {};
}

std::optional<int32_t> TraceModel::index_of_id(int64_t id) const {
  if (!dense_.empty()) {
    if (id < dense_base_ || id - dense_base_ >= static_cast<int64_t>(dense_.size())) return std::nullopt;
    const int32_t i = dense_[static_cast<size_t>(id - dense_base_)];
    return i < 0 ? std::nullopt : std::optional(i);
  }
  const auto it =
      std::ranges::lower_bound(by_id_, id, {}, [&](int32_t i) { return ops[static_cast<size_t>(i)].id; });
  if (it == by_id_.end() || ops[static_cast<size_t>(*it)].id != id) return std::nullopt;
  return *it;
}

int TraceModel::rank_count() const {
  int ranks = 0;
  for (const Track& track : tracks) ranks = std::max(ranks, track.rank + 1);
  return ranks;
}

std::optional<core::Lane> lane_from_name(std::string_view name) {
  if (const size_t hash = name.find(" #"); hash != std::string_view::npos) name = name.substr(0, hash);
  for (const core::Lane lane : core::kAllLanes) {
    if (core::to_string(lane) == name) return lane;
  }
  return std::nullopt;
}

std::optional<core::OpKind> op_kind_from_name(std::string_view name) {
  for (int k = 0; k < core::kOpKindCount; ++k) {
    const auto kind = static_cast<core::OpKind>(k);
    if (core::to_string(kind) == name) return kind;
  }
  return std::nullopt;
}

std::optional<core::TensorClass> tensor_class_from_name(std::string_view name) {
  for (const core::TensorClass c : core::kAllTensorClasses) {
    if (core::to_string(c) == name) return c;
  }
  return std::nullopt;
}

void ClassMemory::begin_sample(SimTime time) {
  times_.push_back(time);
  first_.push_back(static_cast<uint32_t>(values_.size()));
}

void ClassMemory::add(std::string_view name, core::Bytes bytes) {
  if (times_.empty()) begin_sample(0);
  auto it = std::ranges::find(names_, name);
  if (it == names_.end()) {
    if (names_.size() > std::numeric_limits<uint16_t>::max()) return;  // more classes than any trace names
    names_.emplace_back(name);
    it = names_.end() - 1;
  }
  values_.push_back({.name = static_cast<uint16_t>(it - names_.begin()), .bytes = bytes});
}

std::vector<ClassMemory::Share> ClassMemory::at(SimTime time) const {
  const auto after = std::ranges::upper_bound(times_, time);
  if (after == times_.begin()) return {};
  const auto k = static_cast<size_t>(after - times_.begin()) - 1;
  const size_t end = k + 1 < first_.size() ? first_[k + 1] : values_.size();
  std::vector<Share> shares;
  for (size_t i = first_[k]; i < end; ++i) {
    if (values_[i].bytes.count() > 0) shares.push_back({.name = names_[values_[i].name], .bytes = values_[i].bytes});
  }
  std::ranges::sort(shares, [](const Share& x, const Share& y) {
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.name < y.name;
  });
  return shares;
}

}  // namespace stowage::gui
