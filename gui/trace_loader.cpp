// The exact reader: one JSON parse, then one pass over the events:
// metadata names ranks and tracks, complete events become ops, counters
// become memory samples. Flow events are skipped: each op's `args.deps`
// already lists what it waits on. The line reader (trace_line_reader.h)
// gives the same model faster for Stowage's own layout.
#include "gui/trace_loader.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "gui/mapped_file.h"
#include "gui/trace_assembly.h"
#include "gui/trace_line_reader.h"

namespace stowage::gui {
namespace {

using nlohmann::json;

// Line and column (1-based) of byte offset `byte` in `text`.
std::pair<int, int> line_column(std::string_view text, size_t byte) {
  byte = std::min(byte, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < byte; ++i) {
    if (text[i] == '\n') ++line, line_start = i + 1;
  }
  return {line, static_cast<int>(byte - line_start) + 1};
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

void read_metadata(TraceAssembly& a, const json& e) {
  const std::string what = string_or(e, "name");
  const json args = e.value("args", json::object());
  const int64_t pid = number_or<int64_t>(e, "pid", 0);
  if (what == "process_name") a.process_names[pid] = string_or(args, "name");
  if (what == "thread_name") a.threads[{pid, number_or<int64_t>(e, "tid", 0)}].name = string_or(args, "name");
  if (what == "thread_sort_index") {
    a.threads[{pid, number_or<int64_t>(e, "tid", 0)}].sort_index = number_or<int64_t>(args, "sort_index", 0);
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

void read_op(TraceAssembly& a, const json& e, size_t index) {
  const auto ts = e.find("ts");
  const auto dur = e.find("dur");
  if (ts == e.end() || !ts->is_number() || dur == e.end() || !dur->is_number()) {
    return a.problem(index, "complete event without numeric 'ts' and 'dur'", "times in microseconds");
  }
  const json args = e.value("args", json::object());
  TraceOp op;
  op.start = micros_to_ns(ts->get<double>());
  op.end = std::max(op.start, op.start + micros_to_ns(dur->get<double>()));
  op.name = a.model.add_text(string_or(e, "name"));
  op.id = number_or<int64_t>(args, "id", static_cast<int64_t>(a.model.ops.size()));
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
  const auto i = static_cast<int32_t>(a.model.ops.size());
  a.model.ops.push_back(op);
  const std::vector<int64_t> deps = dep_ids(args);
  a.model.set_deps(i, deps);
  a.threads[{number_or<int64_t>(e, "pid", 0), number_or<int64_t>(e, "tid", 0)}].ops.push_back(i);
}

void read_counter(TraceAssembly& a, const json& e, size_t index) {
  const std::optional<core::Tier> tier = tier_of_counter(string_or(e, "name"));
  if (!tier) return;
  const json args = e.value("args", json::object());
  const auto ts = e.find("ts");
  if (ts == e.end() || !ts->is_number()) return a.problem(index, "counter without numeric 'ts'");
  a.model.memory[static_cast<size_t>(*tier)].push_back(
      {.time = micros_to_ns(ts->get<double>()), .bytes = core::Bytes(number_or<int64_t>(args, "bytes", 0))});
}

void read_events(TraceAssembly& a, const json& events) {
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object()) {
      a.problem(i, "event is not an object");
      continue;
    }
    const std::string phase = string_or(e, "ph");
    if (phase == "M") read_metadata(a, e);
    if (phase == "X") read_op(a, e, i);
    if (phase == "C") read_counter(a, e, i);
  }
}

core::Result<TraceModel> parse_json(std::string_view text, const std::string& file) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte == 0 ? 0 : e.byte - 1);
    return core::fail({.where = {.file = file, .line = line, .column = column},
                       .what = json_parse_message(e.what()),
                       .expected = "Chrome Trace Event JSON"});
  }
  TraceAssembly a{.file = file};
  const auto events = root.is_object() ? root.find("traceEvents") : root.end();
  if (!root.is_object() || events == root.end() || !events->is_array()) {
    return core::fail(
        {.where = {.file = file}, .what = "no 'traceEvents' array", .expected = "a Chrome trace object"});
  }
  read_header(a, root);
  read_events(a, *events);
  return finish_assembly(std::move(a));
}

}  // namespace

core::Result<TraceModel> parse_trace(std::string_view text, const std::string& file, TraceReader reader) {
  if (reader == TraceReader::kJson) return parse_json(text, file);
  std::optional<core::Result<TraceModel>> fast = read_trace_lines(text, file);
  if (fast) return std::move(*fast);
  if (reader == TraceReader::kLines) {
    return core::fail({.where = {.file = file},
                       .what = "not in Stowage's one-event-per-line layout, or a line the line reader does "
                               "not handle",
                       .expected = "a trace written by core/chrome_trace.cpp"});
  }
  return parse_json(text, file);
}

core::Result<TraceModel> load_trace(const std::filesystem::path& path, TraceReader reader) {
  core::Result<MappedFile> file = MappedFile::open(path);
  if (!file) return std::unexpected(file.error());
  return parse_trace(file->text(), path.string(), reader);
}

}  // namespace stowage::gui
