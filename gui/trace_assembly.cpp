#include "gui/trace_assembly.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>
#include <utility>

namespace stowage::gui {
namespace {

constexpr std::string_view kFormat = "stowage/trace/v1";

// The rank a process shows: "rank 3" is rank 3; other processes with ops
// are numbered after the named ranks in pid order.
std::map<int64_t, int> ranks_of(const TraceAssembly& a) {
  std::map<int64_t, int> ranks;
  int next = 0;
  for (const auto& [pid, name] : a.process_names) {
    if (name.starts_with("rank "))
      ranks[pid] = std::atoi(name.c_str() + 5), next = std::max(next, ranks[pid] + 1);
  }
  for (const auto& [key, thread] : a.threads) {
    if (!thread.ops.empty() && !ranks.contains(key.pid)) ranks[key.pid] = next++;
  }
  return ranks;
}

void build_tracks(TraceAssembly& a) {
  const std::map<int64_t, int> ranks = ranks_of(a);
  std::vector<std::pair<ThreadKey, ThreadInfo*>> order;
  for (auto& [key, thread] : a.threads) {
    if (!thread.ops.empty()) order.emplace_back(key, &thread);
  }
  std::ranges::stable_sort(order, {}, [&](const auto& t) {
    return std::tuple(ranks.at(t.first.pid), t.second->sort_index, t.first.tid);
  });
  for (auto& [key, thread] : order) {
    Track track{.name = thread->name, .rank = ranks.at(key.pid), .ops = std::move(thread->ops)};
    const TraceOp& first = a.model.ops[static_cast<size_t>(track.ops.front())];
    track.lane = lane_from_name(track.name).value_or(first.lane);
    if (track.name.empty()) track.name = std::string(core::to_string(first.lane));
    for (const int32_t i : track.ops)
      a.model.ops[static_cast<size_t>(i)].track = static_cast<int32_t>(a.model.tracks.size());
    a.model.tracks.push_back(std::move(track));
  }
}

}  // namespace

SimTime micros_to_ns(double micros) {
  return static_cast<SimTime>(std::llround(micros * 1000.0));
}

std::optional<core::Tier> tier_of_counter(std::string_view name) {
  for (const core::Tier tier : core::kAllTiers) {
    if (name == std::string(core::to_string(tier)) + " memory") return tier;
  }
  return std::nullopt;
}

std::optional<core::Tier> tier_of_class_counter(std::string_view name) {
  constexpr std::string_view kPrefix = "classes in ";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  return tier_of_counter(name.substr(kPrefix.size()));
}

void read_class_sample(TraceAssembly& a, core::Tier tier, SimTime at,
                       std::span<const std::pair<std::string_view, int64_t>> values) {
  ClassMemory& m = a.model.class_memory[static_cast<size_t>(tier)];
  m.begin_sample(at);
  for (const auto& [name, bytes] : values) m.add(name, core::Bytes(bytes));
}

void TraceAssembly::problem(size_t event, std::string what, std::string expected, int line) {
  if (problems.size() >= kMaxTraceProblems) return;
  problems.push_back({.where = {.file = file, .line = line},
                      .what = "traceEvents[" + std::to_string(event) + "]: " + std::move(what),
                      .expected = std::move(expected)});
}

void read_header(TraceAssembly& a, const core::TraceHeader& other) {
  if (!other.format.empty() && other.format != kFormat) {
    a.problems.push_back({.where = {.file = a.file},
                          .what = "otherData.format: unknown format '" + other.format + "'",
                          .expected = "one of: " + std::string(kFormat)});
  }
  a.model.info.title = other.title;
  a.model.info.source = other.source;
  a.model.info.ranks = static_cast<int>(other.ranks.value_or(1));
  a.model.info.steps = static_cast<int>(other.steps.value_or(1));
  if (other.steady_step_ns && *other.steady_step_ns > 0) a.model.info.steady_step = *other.steady_step_ns;
  a.model.info.falls_behind = lane_from_name(other.falls_behind);
  a.model.info.warnings = other.warnings;
  a.model.info.origin = other.origin;
}

core::Result<TraceModel> finish_assembly(TraceAssembly&& a) {
  if (!a.problems.empty()) return std::unexpected(std::move(a.problems));
  build_tracks(a);
  for (auto& series : a.model.memory) {
    if (!std::ranges::is_sorted(series, {}, &MemoryPoint::time))
      std::ranges::stable_sort(series, {}, &MemoryPoint::time);
  }
  a.model.info.file = a.file;
  a.model.finish();
  return std::move(a.model);
}

}  // namespace stowage::gui
