// One pass over the events: metadata names ranks and tracks, complete
// events become ops, counters become memory samples. Flow events are
// skipped: each op's `args.deps` already lists what it waits on.
#include "gui/trace_loader.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/profile_catalog.h"

namespace stowage::gui {
namespace {

using nlohmann::json;
constexpr size_t kMaxProblems = 20;
constexpr std::string_view kFormat = "stowage/trace/v1";

struct ThreadKey {
  int64_t pid = 0, tid = 0;
  auto operator<=>(const ThreadKey&) const = default;
};

struct ThreadInfo {
  std::string name;
  int64_t sort_index = 0;
  std::vector<int32_t> ops;
};

struct Reader {
  std::string file;
  TraceModel model;
  core::Diagnostics problems;
  std::map<int64_t, std::string> process_names;
  std::map<ThreadKey, ThreadInfo> threads;

  void problem(size_t event, std::string what, std::string expected = {}) {
    if (problems.size() >= kMaxProblems) return;
    problems.push_back({.where = {.file = file},
                        .what = "traceEvents[" + std::to_string(event) + "]: " + std::move(what),
                        .expected = std::move(expected)});
  }
};

// Line and column (1-based) of byte offset `byte` in `text`.
std::pair<int, int> line_column(const std::string& text, size_t byte) {
  byte = std::min(byte, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < byte; ++i) {
    if (text[i] == '\n') ++line, line_start = i + 1;
  }
  return {line, static_cast<int>(byte - line_start) + 1};
}

// nlohmann's message without its "[json.exception...] parse error at ...:" prefix.
std::string parse_message(const std::string& what) {
  const size_t column = what.find("column ");
  const size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

SimTime to_ns(double micros) {
  return static_cast<SimTime>(std::llround(micros * 1000.0));
}

template <class T>
T number_or(const json& object, const char* key, T fallback) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return fallback;
  return it->get<T>();
}

std::string string_or(const json& object, const char* key, std::string fallback = {}) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

void read_metadata(Reader& r, const json& e) {
  const std::string what = string_or(e, "name");
  const json args = e.value("args", json::object());
  const int64_t pid = number_or<int64_t>(e, "pid", 0);
  if (what == "process_name") r.process_names[pid] = string_or(args, "name");
  if (what == "thread_name") r.threads[{pid, number_or<int64_t>(e, "tid", 0)}].name = string_or(args, "name");
  if (what == "thread_sort_index") {
    r.threads[{pid, number_or<int64_t>(e, "tid", 0)}].sort_index = number_or<int64_t>(args, "sort_index", 0);
  }
}

std::vector<int64_t> dep_ids(const json& args) {
  std::vector<int64_t> ids;
  const auto it = args.find("deps");
  if (it == args.end() || !it->is_array()) return ids;
  for (const json& d : *it) {
    if (d.is_number_integer()) ids.push_back(d.get<int64_t>());
  }
  return ids;
}

void read_op(Reader& r, const json& e, size_t index) {
  const auto ts = e.find("ts");
  const auto dur = e.find("dur");
  if (ts == e.end() || !ts->is_number() || dur == e.end() || !dur->is_number()) {
    return r.problem(index, "complete event without numeric 'ts' and 'dur'", "times in microseconds");
  }
  const json args = e.value("args", json::object());
  TraceOp op;
  op.start = to_ns(ts->get<double>());
  op.end = std::max(op.start, op.start + to_ns(dur->get<double>()));
  op.name = string_or(e, "name");
  op.id = number_or<int64_t>(args, "id", static_cast<int64_t>(r.model.ops.size()));
  op.lane = lane_from_name(string_or(e, "cat")).value_or(core::Lane::kGpuCompute);
  op.kind = op_kind_from_name(string_or(args, "kind")).value_or(core::OpKind::kForward);
  op.category = category_of(op.kind, op.lane);
  op.partition = number_or<int>(args, "partition", -1);
  op.layer = number_or<int>(args, "layer", -1);
  op.step = number_or<int>(args, "step", 0);
  op.micro_step = number_or<int>(args, "micro_step", 0);
  op.tensor_class = tensor_class_from_name(string_or(args, "tensor_class"));
  op.bytes = core::Bytes(number_or<int64_t>(args, "bytes", 0));
  op.flops = core::Flops(number_or<double>(args, "flops", 0));
  const auto i = static_cast<int32_t>(r.model.ops.size());
  r.model.ops.push_back(std::move(op));
  r.model.set_deps(i, dep_ids(args));
  r.threads[{number_or<int64_t>(e, "pid", 0), number_or<int64_t>(e, "tid", 0)}].ops.push_back(i);
}

void read_counter(Reader& r, const json& e, size_t index) {
  const std::string name = string_or(e, "name");
  const std::string tier_name = name.substr(0, name.find(' '));
  for (const core::Tier tier : core::kAllTiers) {
    if (core::to_string(tier) != tier_name) continue;
    const json args = e.value("args", json::object());
    const auto ts = e.find("ts");
    if (ts == e.end() || !ts->is_number()) return r.problem(index, "counter without numeric 'ts'");
    r.model.memory[static_cast<size_t>(tier)].push_back(
        {.time = to_ns(ts->get<double>()), .bytes = core::Bytes(number_or<int64_t>(args, "bytes", 0))});
  }
}

// The rank a process shows: "rank 3" is rank 3; other processes with ops
// are numbered after the named ranks in pid order.
std::map<int64_t, int> ranks_of(const Reader& r) {
  std::map<int64_t, int> ranks;
  int next = 0;
  for (const auto& [pid, name] : r.process_names) {
    if (name.starts_with("rank "))
      ranks[pid] = std::atoi(name.c_str() + 5), next = std::max(next, ranks[pid] + 1);
  }
  for (const auto& [key, thread] : r.threads) {
    if (!thread.ops.empty() && !ranks.contains(key.pid)) ranks[key.pid] = next++;
  }
  return ranks;
}

void build_tracks(Reader& r) {
  const std::map<int64_t, int> ranks = ranks_of(r);
  std::vector<std::pair<ThreadKey, ThreadInfo*>> order;
  for (auto& [key, thread] : r.threads) {
    if (!thread.ops.empty()) order.emplace_back(key, &thread);
  }
  std::ranges::stable_sort(order, {}, [&](const auto& t) {
    return std::tuple(ranks.at(t.first.pid), t.second->sort_index, t.first.tid);
  });
  for (auto& [key, thread] : order) {
    Track track{.name = thread->name, .rank = ranks.at(key.pid), .ops = std::move(thread->ops)};
    const TraceOp& first = r.model.ops[static_cast<size_t>(track.ops.front())];
    track.lane = lane_from_name(track.name).value_or(first.lane);
    if (track.name.empty()) track.name = std::string(core::to_string(first.lane));
    for (const int32_t i : track.ops)
      r.model.ops[static_cast<size_t>(i)].track = static_cast<int32_t>(r.model.tracks.size());
    r.model.tracks.push_back(std::move(track));
  }
}

void read_header(Reader& r, const json& root) {
  const json other = root.value("otherData", json::object());
  if (!other.is_object()) return;
  if (const std::string format = string_or(other, "format"); !format.empty() && format != kFormat) {
    r.problems.push_back({.where = {.file = r.file},
                          .what = "otherData.format: unknown format '" + format + "'",
                          .expected = "one of: " + std::string(kFormat)});
  }
  r.model.info.title = string_or(other, "title");
  r.model.info.source = string_or(other, "source");
  r.model.info.ranks = number_or<int>(other, "ranks", 1);
  r.model.info.steps = number_or<int>(other, "steps", 1);
}

void read_events(Reader& r, const json& events) {
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object()) {
      r.problem(i, "event is not an object");
      continue;
    }
    const std::string phase = string_or(e, "ph");
    if (phase == "M") read_metadata(r, e);
    if (phase == "X") read_op(r, e, i);
    if (phase == "C") read_counter(r, e, i);
  }
}

}  // namespace

core::Result<TraceModel> parse_trace(const std::string& text, const std::string& file) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte == 0 ? 0 : e.byte - 1);
    return core::fail({.where = {.file = file, .line = line, .column = column},
                       .what = parse_message(e.what()),
                       .expected = "Chrome Trace Event JSON"});
  }
  Reader r{.file = file};
  const auto events = root.is_object() ? root.find("traceEvents") : root.end();
  if (!root.is_object() || events == root.end() || !events->is_array()) {
    return core::fail(
        {.where = {.file = file}, .what = "no 'traceEvents' array", .expected = "a Chrome trace object"});
  }
  read_header(r, root);
  read_events(r, *events);
  if (!r.problems.empty()) return std::unexpected(std::move(r.problems));
  build_tracks(r);
  for (auto& series : r.model.memory) std::ranges::stable_sort(series, {}, &MemoryPoint::time);
  r.model.info.file = file;
  r.model.finish();
  return std::move(r.model);
}

core::Result<TraceModel> load_trace(const std::filesystem::path& path) {
  core::Result<std::string> text = core::read_text_file(path);
  if (!text) return std::unexpected(text.error());
  return parse_trace(*text, path.string());
}

}  // namespace stowage::gui
