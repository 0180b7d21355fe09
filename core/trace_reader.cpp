#include "core/trace_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>

#include "core/json_depth.h"
#include "core/text_file.h"

namespace stowage::core {
namespace {

using nlohmann::json;

std::optional<Lane> lane_named(std::string_view s) {
  for (Lane lane : kAllLanes) {
    if (to_string(lane) == s) return lane;
  }
  return std::nullopt;
}

std::optional<OpKind> kind_named(std::string_view s) {
  for (int k = 0; k < kOpKindCount; ++k) {
    if (to_string(static_cast<OpKind>(k)) == s) return static_cast<OpKind>(k);
  }
  return std::nullopt;
}

std::optional<TensorClass> class_named(std::string_view s) {
  for (TensorClass c : kAllTensorClasses) {
    if (to_string(c) == s) return c;
  }
  return std::nullopt;
}

// Microseconds with three decimals (docs/formats/trace.md) to whole ns.
SimTime nanos(const json& us) { return static_cast<SimTime>(std::llround(us.get<double>() * 1000.0)); }

// A time in µs that converts to int64 ns: finite and within ±4e15 µs (126
// years; a start plus a duration still fits). `ts: 1e308` overflowed the conversion (issue 12).
bool usable_time(const json& v, bool non_negative) {
  if (!v.is_number()) return false;
  const double us = v.get<double>();
  return std::isfinite(us) && std::abs(us) < 4e15 && (!non_negative || us >= 0);
}

// The number at `key` when it is one that T holds exactly, else `fallback`:
// a count given as 1e308, -1 for an unsigned field or 3.5 for an id is not
// converted (that conversion overflowed, issue 12).
template <class T>
T number_or(const json& args, const char* key, T fallback) {
  const auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return fallback;
  if constexpr (std::is_floating_point_v<T>) {
    const double v = it->get<double>();
    return std::isfinite(v) ? static_cast<T>(v) : fallback;
  } else {
    if (it->is_number_unsigned()) {
      const auto v = it->get<uint64_t>();
      return v <= static_cast<uint64_t>(std::numeric_limits<T>::max()) ? static_cast<T>(v) : fallback;
    }
    if (!it->is_number_integer()) return fallback;
    const auto v = it->get<int64_t>();
    return v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                   v <= static_cast<int64_t>(std::numeric_limits<T>::max())
               ? static_cast<T>(v)
               : fallback;
  }
}

// The string at `key`, or "" when it is absent or not a string (nlohmann's
// value() throws for a number there, issue 12: exit 70).
std::string text_or_empty(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Slot of a thread named "nvme.read #3" (2), or of "nvme.read" (0).
int slot_of(const std::string& thread_name) {
  const auto hash = thread_name.rfind(" #");
  if (hash == std::string::npos) return 0;
  try {
    return std::max(0, std::stoi(thread_name.substr(hash + 2)) - 1);
  } catch (const std::exception&) {
    return 0;
  }
}

struct Reader {
  const std::string& file;
  Diagnostics problems;
  std::map<int64_t, int> slot_by_tid;
  std::vector<std::optional<std::pair<Op, OpSpan>>> ops;

  void bad(size_t index, const std::string& what, const std::string& expected) {
    problems.push_back({{file, 0, 0}, "traceEvents[" + std::to_string(index) + "]: " + what, expected});
  }

  void op_event(size_t index, const json& e) {
    const json& args = e.contains("args") && e["args"].is_object() ? e["args"] : json::object();
    const auto id = number_or<int64_t>(args, "id", -1);
    const std::optional<Lane> lane = e.contains("cat") && e["cat"].is_string()
                                         ? lane_named(e["cat"].get<std::string>()) : std::nullopt;
    const std::optional<OpKind> kind = args.contains("kind") && args["kind"].is_string()
                                           ? kind_named(args["kind"].get<std::string>()) : std::nullopt;
    if (id < 0 || id > 100'000'000 || !lane || !kind || !e.contains("ts") || !usable_time(e["ts"], false) ||
        !e.contains("dur") || !usable_time(e["dur"], true)) {
      bad(index, "an op without a usable id, kind, lane (cat), ts or dur",
          "a Stowage op event: args.id >= 0, args.kind, cat a lane name, ts and dur in microseconds below 4e15, "
          "dur not negative");
      return;
    }
    Op op{.id = static_cast<OpId>(id), .kind = *kind, .lane = *lane};
    op.name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
    op.partition = number_or<int>(args, "partition", -1);
    op.layer = number_or<int>(args, "layer", -1);
    op.step = number_or<int>(args, "step", 0);
    op.micro_step = number_or<int>(args, "micro_step", 0);
    if (args.contains("tensor_class") && args["tensor_class"].is_string())
      op.tensor_class = class_named(args["tensor_class"].get<std::string>());
    op.bytes = Bytes(number_or<int64_t>(args, "bytes", 0));
    op.flops = Flops(number_or<double>(args, "flops", 0));
    op.params = number_or<int64_t>(args, "params", 0);
    if (args.contains("deps") && args["deps"].is_array()) {
      for (const json& d : args["deps"]) {
        if (d.is_number_integer()) op.deps.push_back(d.get<OpId>());
      }
    }
    const SimTime start = nanos(e["ts"]);
    const int64_t tid = number_or<int64_t>(e, "tid", 0);
    const auto slot = slot_by_tid.find(tid);
    const OpSpan span{.start = start, .end = start + nanos(e["dur"]),
                      .slot = slot == slot_by_tid.end() ? 0 : slot->second};
    if (ops.size() <= static_cast<size_t>(id)) ops.resize(static_cast<size_t>(id) + 1);
    if (ops[static_cast<size_t>(id)]) {
      bad(index, "op id " + std::to_string(id) + " given twice", "each op id once");
      return;
    }
    ops[static_cast<size_t>(id)] = std::pair{std::move(op), span};
  }
};

}  // namespace

Result<RecordedTrace> parse_recorded_trace(std::string_view text, const std::string& file) {
  if (std::optional<Diagnostic> deep = check_json_depth(text, file)) return fail(*deep);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    return fail({{file, 0, 0}, std::string("not JSON: ") + e.what(), "a Chrome trace JSON object"});
  }
  if (!root.is_object() || !root.contains("traceEvents") || !root["traceEvents"].is_array()) {
    return fail({{file, 0, 0}, "no traceEvents list", "a Chrome trace: {\"traceEvents\": [...]}"});
  }
  RecordedTrace trace;
  if (root.contains("otherData") && root["otherData"].is_object()) {
    const json& other = root["otherData"];
    if (other.contains("title") && other["title"].is_string()) trace.title = other["title"].get<std::string>();
    if (other.contains("source") && other["source"].is_string()) trace.source = other["source"].get<std::string>();
    trace.schedule.ranks = std::max(1, number_or<int>(other, "ranks", 1));
    trace.schedule.steps = std::max(1, number_or<int>(other, "steps", 1));
    trace.schedule.tokens_per_step = number_or<int64_t>(other, "tokens_per_step", 0);
  }
  Reader reader{.file = file, .problems = {}, .slot_by_tid = {}, .ops = {}};
  const json& events = root["traceEvents"];
  for (const json& e : events) {  // thread names first: op events refer to them
    if (e.is_object() && text_or_empty(e, "ph") == "M" && text_or_empty(e, "name") == "thread_name" &&
        e.contains("tid") && e["tid"].is_number_integer() && e.contains("args") && e["args"].is_object()) {
      reader.slot_by_tid[number_or<int64_t>(e, "tid", 0)] = slot_of(text_or_empty(e["args"], "name"));
    }
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (e.is_object() && text_or_empty(e, "ph") == "X" && number_or<int64_t>(e, "pid", 0) == 1) reader.op_event(i, e);
  }
  for (size_t id = 0; id < reader.ops.size(); ++id) {
    if (!reader.ops[id]) reader.problems.push_back({{file, 0, 0}, "op id " + std::to_string(id) + " is missing",
                                                    "ops numbered 0..n-1, as Stowage writes them"});
  }
  if (reader.ops.empty()) reader.problems.push_back({{file, 0, 0}, "no ops", "op events (\"ph\":\"X\") on pid 1"});
  if (!reader.problems.empty()) return std::unexpected(reader.problems);
  for (auto& entry : reader.ops) {
    auto& [op, span] = *entry;
    for (OpId d : op.deps) {
      // A schedule lists each op after those it waits for: a dependency on
      // a later op (a cycle, or one out of order) stalled the simulation
      // of the trace, "internal error" (issue 12).
      if (d < 0 || d >= op.id) {
        return fail({{file, 0, 0},
                     "op " + std::to_string(op.id) + " depends on op " + std::to_string(d) +
                         (d >= 0 && static_cast<size_t>(d) < reader.ops.size() ? ", which is not an earlier op"
                                                                                : ", which the trace lacks"),
                     "dependencies on earlier ops of the trace, as a Stowage schedule lists them"});
      }
    }
    int& slots = trace.schedule.lane_slots[static_cast<size_t>(op.lane)];
    slots = std::max(slots, span.slot + 1);
    trace.schedule.ops.push_back(std::move(op));
    trace.timeline.spans.push_back(span);
  }
  return trace;
}

Result<RecordedTrace> load_recorded_trace(const std::filesystem::path& path) {
  Result<std::string> text = read_input_file(path, InputKind::kTrace);
  if (!text) return std::unexpected(text.error());
  return parse_recorded_trace(*text, path.string());
}

}  // namespace stowage::core
