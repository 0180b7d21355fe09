// Layout: `<header>` lines, the line `"traceEvents":[`, event lines (each
// but the last ending in a comma, blank lines allowed), and the line `]}`.
// The header is parsed by nlohmann (it is small); each event line by
// JsonScanner. A line the scanner rejects is parsed alone by nlohmann: if
// that fails too the file is bad and its message, line and column are the
// diagnostic; if it succeeds the line is valid JSON this reader does not
// handle, and the exact reader takes the whole file.
#include "gui/trace_line_reader.h"

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "gui/json_scanner.h"
#include "gui/trace_assembly.h"

namespace stowage::gui {
namespace {

using nlohmann::json;

constexpr std::string_view kEventsLine = "\"traceEvents\":[";
constexpr size_t kHeaderSearch = size_t{1} << 20;  // bytes searched for kEventsLine

struct Layout {
  json root;                // the header, with an empty traceEvents
  std::string_view events;  // the event lines, each ending in '\n'
  int first_line = 0;       // 1-based line of events' first byte
};

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  s = trim_right(s);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::optional<Layout> find_layout(std::string_view text) {
  Layout layout;
  size_t pos = 0, events_begin = std::string_view::npos;
  for (int line = 1; pos < text.size() && pos < kHeaderSearch; ++line) {
    const size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) return std::nullopt;
    if (trim_right(text.substr(pos, end - pos)) == kEventsLine) {
      events_begin = end + 1;
      layout.first_line = line + 1;
      break;
    }
    pos = end + 1;
  }
  if (events_begin == std::string_view::npos) return std::nullopt;
  const size_t last = text.find_last_not_of(" \t\r\n");
  if (last == std::string_view::npos || last < events_begin) return std::nullopt;
  const size_t newline = text.rfind('\n', last);
  const size_t close = newline == std::string_view::npos ? 0 : newline + 1;
  if (close < events_begin || trim(text.substr(close, last + 1 - close)) != "]}") return std::nullopt;
  layout.events = text.substr(events_begin, close - events_begin);
  try {
    layout.root = json::parse(std::string(text.substr(0, pos)) + "\"traceEvents\":[]}");
  } catch (const json::exception&) {
    return std::nullopt;  // the exact reader words the error
  }
  if (!layout.root.is_object()) return std::nullopt;
  return layout;
}

// ---- one event line ----

struct Fields {
  JsonValue ph, pid, tid, name, cat, ts, dur;
  // args, when it is an object
  JsonValue id, kind, partition, layer, step, micro_step, tensor_class, bytes, flops, deps, arg_name,
      sort_index;
};

// Where an args key's value goes; nullptr for keys the reader ignores.
// By length first: this runs for every key of every line.
JsonValue* arg_slot(Fields& f, std::string_view key) {
  switch (key.size()) {
    case 2:
      return key == "id" ? &f.id : nullptr;
    case 4:
      if (key == "kind") return &f.kind;
      if (key == "step") return &f.step;
      if (key == "deps") return &f.deps;
      return key == "name" ? &f.arg_name : nullptr;
    case 5:
      if (key == "bytes") return &f.bytes;
      if (key == "flops") return &f.flops;
      return key == "layer" ? &f.layer : nullptr;
    case 9:
      return key == "partition" ? &f.partition : nullptr;
    case 10:
      if (key == "micro_step") return &f.micro_step;
      return key == "sort_index" ? &f.sort_index : nullptr;
    case 12:
      return key == "tensor_class" ? &f.tensor_class : nullptr;
    default:
      return nullptr;
  }
}

JsonValue* event_slot(Fields& f, std::string_view key) {
  switch (key.size()) {
    case 2:
      if (key == "ph") return &f.ph;
      return key == "ts" ? &f.ts : nullptr;
    case 3:
      if (key == "pid") return &f.pid;
      if (key == "tid") return &f.tid;
      if (key == "cat") return &f.cat;
      return key == "dur" ? &f.dur : nullptr;
    case 4:
      return key == "name" ? &f.name : nullptr;
    default:
      return nullptr;
  }
}

// The last name looked up and what it meant: lanes, kinds and tensor
// classes repeat from line to line, so most lookups are one comparison.
template <class T, std::optional<T> (*kLookup)(std::string_view)>
class NameCache {
 public:
  std::optional<T> operator()(std::string_view name) {
    if (!known_ || name != last_) known_ = true, last_ = name, value_ = kLookup(name);
    return value_;
  }

 private:
  bool known_ = false;
  std::string last_;
  std::optional<T> value_;
};

// False on a grammar error or an escaped key (which could name a field).
bool scan_event(std::string_view line, Fields& f) {
  JsonScanner sc(line);
  const auto args_field = [&f](const JsonValue& key, JsonScanner& s, int depth) {
    if (!key.plain) return false;
    JsonValue ignored;
    JsonValue* slot = arg_slot(f, key.text);
    return s.value(slot != nullptr ? *slot : ignored, depth);
  };
  const auto event_field = [&](const JsonValue& key, JsonScanner& s, int depth) {
    if (!key.plain) return false;
    if (key.text == "args") {
      // A later "args" replaces an earlier one, as in nlohmann.
      f = Fields{
          .ph = f.ph, .pid = f.pid, .tid = f.tid, .name = f.name, .cat = f.cat, .ts = f.ts, .dur = f.dur};
      if (s.next_is('{')) return s.object(depth, args_field);
      JsonValue ignored;
      return s.value(ignored, depth);
    }
    JsonValue ignored;
    JsonValue* slot = event_slot(f, key.text);
    return s.value(slot != nullptr ? *slot : ignored, depth);
  };
  return sc.next_is('{') && sc.object(0, event_field) && sc.at_end();
}

// ---- one chunk of lines ----

struct Metadata {
  enum class What : uint8_t { kProcessName, kThreadName, kThreadSortIndex } what;
  ThreadKey key;
  std::string name;
  int64_t sort_index = 0;
};

struct Problem {
  size_t event = 0;  // within the chunk
  int line = 0;      // within the chunk, 0-based
  std::string what, expected;
};

// Where the chunk stopped: a bad line (with the parser's diagnostic), or a
// line this reader leaves to the exact one.
struct Stop {
  int line = 0;  // within the chunk, 0-based
  std::optional<core::Diagnostic> syntax;
};

struct Chunk {
  NameCache<core::Lane, lane_from_name> lane;
  NameCache<core::OpKind, op_kind_from_name> kind;
  NameCache<core::TensorClass, tensor_class_from_name> tensor_class;
  std::vector<TraceOp> ops;
  std::vector<ThreadKey> op_thread;  // by op
  std::vector<uint32_t> dep_end;     // op i's deps are dep_ids[dep_end[i - 1], dep_end[i])
  std::vector<int64_t> dep_ids;
  std::vector<uint32_t> ops_without_id;  // they take their index in the model as id
  std::string names;
  std::vector<Metadata> metadata;
  std::array<std::vector<MemoryPoint>, 3> memory;
  std::vector<Problem> problems;
  std::optional<Stop> stop;
  size_t events = 0;
  int lines = 0;
  bool last_has_comma = false;
};

enum class Outcome { kOk, kUnsupported };

// number_or(): the fallback when absent or no number; kUnsupported when a
// number this reader does not convert exactly as nlohmann would.
template <class T>
Outcome number_or(const JsonValue& v, T fallback, T& out) {
  if (v.type != JsonType::kNumber) return out = fallback, Outcome::kOk;
  if constexpr (std::is_floating_point_v<T>) {
    const std::optional<double> d = json_double(v);
    if (!d) return Outcome::kUnsupported;
    out = static_cast<T>(*d);
  } else {
    const std::optional<int64_t> i = json_int64(v);
    if (!i) return Outcome::kUnsupported;
    out = static_cast<T>(*i);
  }
  return Outcome::kOk;
}

// A time in microseconds to nanoseconds: "2.000" exactly, as integers, when
// it has at most three decimals and is small enough that the exact reader's
// llround(double * 1000) gives the same; otherwise as that does.
std::optional<SimTime> time_of(const JsonValue& v) {
  const std::string_view t = v.text;
  const size_t dot = t.find('.');
  const size_t fraction = dot == std::string_view::npos ? 0 : t.size() - dot - 1;
  if (t.find_first_of("eE") == std::string_view::npos && fraction <= 3 && t.size() <= 16) {
    SimTime ns = 0;
    for (const char c : t) {
      if (c >= '0' && c <= '9') ns = ns * 10 + (c - '0');
    }
    for (size_t k = fraction; k < 3; ++k) ns *= 10;
    if (ns < (SimTime{1} << 50)) return t.front() == '-' ? -ns : ns;
  }
  const std::optional<double> d = json_double(v);
  if (!d) return std::nullopt;
  return micros_to_ns(*d);
}

std::string string_or_empty(const JsonValue& v) {
  return json_string_value(v).value_or(std::string());
}

// A string field's value as string_or() gives it: "" when absent or no
// string. Escaped strings are decoded into a buffer per thread.
std::string_view text_of(const JsonValue& v) {
  if (v.type != JsonType::kString) return {};
  if (v.plain) return v.text;
  thread_local std::string decoded;
  decoded = string_or_empty(v);
  return decoded;
}

// `what` of a plain string without a copy; "" for anything else that is no
// plain string (escaped strings are decoded).
bool string_is(const JsonValue& v, std::string_view what) {
  if (v.type != JsonType::kString) return what.empty();
  if (v.plain) return v.text == what;
  return json_string_value(v) == std::string(what);
}

Outcome read_metadata(Chunk& c, const Fields& f) {
  ThreadKey key;
  if (number_or<int64_t>(f.pid, 0, key.pid) != Outcome::kOk) return Outcome::kUnsupported;
  if (number_or<int64_t>(f.tid, 0, key.tid) != Outcome::kOk) return Outcome::kUnsupported;
  Metadata m{.what = Metadata::What::kProcessName, .key = key};
  if (string_is(f.name, "process_name")) {
    m.name = string_or_empty(f.arg_name);
  } else if (string_is(f.name, "thread_name")) {
    m.what = Metadata::What::kThreadName, m.name = string_or_empty(f.arg_name);
  } else if (string_is(f.name, "thread_sort_index")) {
    m.what = Metadata::What::kThreadSortIndex;
    if (number_or<int64_t>(f.sort_index, 0, m.sort_index) != Outcome::kOk) return Outcome::kUnsupported;
  } else {
    return Outcome::kOk;
  }
  c.metadata.push_back(std::move(m));
  return Outcome::kOk;
}

Outcome read_deps(Chunk& c, const Fields& f) {
  if (f.deps.type == JsonType::kArray) {
    JsonScanner sc(f.deps.text);
    bool exact = true;
    sc.array(0, [&](const JsonValue& d) {
      if (d.type != JsonType::kNumber || !d.integer) return;
      const std::optional<int64_t> id = json_int64(d);
      if (id) c.dep_ids.push_back(*id);
      exact = exact && id.has_value();
    });
    if (!exact) return Outcome::kUnsupported;
  }
  c.dep_end.push_back(static_cast<uint32_t>(c.dep_ids.size()));
  return Outcome::kOk;
}

Outcome read_op(Chunk& c, const Fields& f, int line) {
  const std::optional<SimTime> start = f.ts.type == JsonType::kNumber ? time_of(f.ts) : std::nullopt;
  const std::optional<SimTime> dur = f.dur.type == JsonType::kNumber ? time_of(f.dur) : std::nullopt;
  if (f.ts.type != JsonType::kNumber || f.dur.type != JsonType::kNumber) {
    c.problems.push_back({.event = c.events,
                          .line = line,
                          .what = "complete event without numeric 'ts' and 'dur'",
                          .expected = "times in microseconds"});
    return Outcome::kOk;
  }
  if (!start || !dur) return Outcome::kUnsupported;
  TraceOp op{.start = *start, .end = std::max(*start, *start + *dur)};
  const size_t name_at = c.names.size();
  if (f.name.type == JsonType::kString && f.name.plain) {
    c.names.append(f.name.text);
  } else {
    c.names += string_or_empty(f.name);
  }
  op.name = {.offset = static_cast<uint32_t>(name_at),
             .size = static_cast<uint32_t>(c.names.size() - name_at)};
  if (f.id.type != JsonType::kNumber) c.ops_without_id.push_back(static_cast<uint32_t>(c.ops.size()));
  double flops = 0;
  int64_t bytes = 0;
  ThreadKey thread;
  if (number_or<int64_t>(f.id, 0, op.id) != Outcome::kOk ||
      number_or<int>(f.partition, -1, op.partition) != Outcome::kOk ||
      number_or<int>(f.layer, -1, op.layer) != Outcome::kOk ||
      number_or<int>(f.step, 0, op.step) != Outcome::kOk ||
      number_or<int>(f.micro_step, 0, op.micro_step) != Outcome::kOk ||
      number_or<int64_t>(f.bytes, 0, bytes) != Outcome::kOk ||
      number_or<double>(f.flops, 0, flops) != Outcome::kOk ||
      number_or<int64_t>(f.pid, 0, thread.pid) != Outcome::kOk ||
      number_or<int64_t>(f.tid, 0, thread.tid) != Outcome::kOk || read_deps(c, f) != Outcome::kOk) {
    return Outcome::kUnsupported;
  }
  op.lane = c.lane(text_of(f.cat)).value_or(core::Lane::kGpuCompute);
  op.kind = c.kind(text_of(f.kind)).value_or(core::OpKind::kForward);
  op.category = category_of(op.kind, op.lane);
  op.tensor_class = c.tensor_class(text_of(f.tensor_class));
  op.bytes = core::Bytes(bytes);
  op.flops = core::Flops(flops);
  c.ops.push_back(op);
  c.op_thread.push_back(thread);
  return Outcome::kOk;
}

Outcome read_counter(Chunk& c, const Fields& f, int line) {
  const std::optional<core::Tier> tier = tier_of_counter(text_of(f.name));
  if (!tier) return Outcome::kOk;
  if (f.ts.type != JsonType::kNumber) {
    c.problems.push_back({.event = c.events, .line = line, .what = "counter without numeric 'ts'"});
    return Outcome::kOk;
  }
  const std::optional<SimTime> at = time_of(f.ts);
  int64_t bytes = 0;
  if (!at || number_or<int64_t>(f.bytes, 0, bytes) != Outcome::kOk) return Outcome::kUnsupported;
  c.memory[static_cast<size_t>(*tier)].push_back({.time = *at, .bytes = core::Bytes(bytes)});
  return Outcome::kOk;
}

// Why the scanner refused `line`: nlohmann's diagnostic when the line is no
// JSON, else nothing (valid JSON this reader leaves to the exact one).
std::optional<core::Diagnostic> syntax_error(std::string_view line) {
  try {
    const json parsed = json::parse(line.begin(), line.end());
  } catch (const json::parse_error& e) {
    return core::Diagnostic{.where = {.column = static_cast<int>(std::max<size_t>(e.byte, 1))},
                            .what = json_parse_message(e.what()),
                            .expected = "Chrome Trace Event JSON"};
  }
  return std::nullopt;
}

// One non-blank event line; false to stop the chunk (c.stop says why).
bool read_line(Chunk& c, std::string_view line, int line_index) {
  Fields f;
  Outcome outcome = Outcome::kOk;
  if (!scan_event(line, f)) {
    c.stop = Stop{.line = line_index, .syntax = syntax_error(line)};
    return false;
  }
  if (f.ph.type == JsonType::kString && f.ph.plain && f.ph.text.size() == 1) {
    switch (f.ph.text[0]) {
      case 'M':
        outcome = read_metadata(c, f);
        break;
      case 'X':
        outcome = read_op(c, f, line_index);
        break;
      case 'C':
        outcome = read_counter(c, f, line_index);
        break;
      default:
        break;
    }
  } else if (f.ph.type == JsonType::kString && !f.ph.plain) {
    outcome = Outcome::kUnsupported;
  }
  if (outcome == Outcome::kUnsupported) {
    c.stop = Stop{.line = line_index};
    return false;
  }
  ++c.events;
  return true;
}

Chunk read_chunk(std::string_view text) {
  Chunk c;
  c.ops.reserve(text.size() / 400);
  c.op_thread.reserve(text.size() / 400);
  c.dep_end.reserve(text.size() / 400);
  bool any_event = false;
  for (size_t pos = 0; pos < text.size(); ++c.lines) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim_right(text.substr(pos, end - pos));
    pos = end + 1;
    if (trim(line).empty()) continue;
    const bool comma = line.back() == ',';
    if (comma) line = trim_right(line.substr(0, line.size() - 1));
    // An event after one without a comma: the exact reader words that.
    if (any_event && !c.last_has_comma) {
      c.stop = Stop{.line = c.lines};
      break;
    }
    any_event = true;
    c.last_has_comma = comma;
    if (!read_line(c, line, c.lines)) break;
  }
  return c;
}

// Splits `events` into about `parts` pieces of whole lines.
std::vector<std::string_view> split_lines(std::string_view events, size_t parts) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  for (size_t k = 1; k <= parts && begin < events.size(); ++k) {
    size_t end = k == parts ? events.size() : std::max(begin, events.size() * k / parts);
    if (end < events.size()) {
      end = events.find('\n', end);
      end = end == std::string_view::npos ? events.size() : end + 1;
    }
    out.push_back(events.substr(begin, end - begin));
    begin = end;
  }
  return out;
}

std::vector<Chunk> read_chunks(std::string_view events, const LineReaderOptions& options) {
  const size_t threads =
      options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  const size_t pieces_wanted = events.size() / std::max<size_t>(options.min_chunk_bytes, 1);
  const std::vector<std::string_view> pieces =
      split_lines(events, std::clamp<size_t>(pieces_wanted, 1, threads));
  std::vector<Chunk> chunks(pieces.size());
  {
    std::vector<std::jthread> workers;
    for (size_t k = 1; k < pieces.size(); ++k)
      workers.emplace_back([&chunks, &pieces, k] { chunks[k] = read_chunk(pieces[k]); });
    if (!pieces.empty()) chunks[0] = read_chunk(pieces[0]);
  }
  return chunks;
}

// ---- joining the chunks ----

void apply(TraceAssembly& a, const Metadata& m) {
  switch (m.what) {
    case Metadata::What::kProcessName:
      a.process_names[m.key.pid] = m.name;
      break;
    case Metadata::What::kThreadName:
      a.threads[m.key].name = m.name;
      break;
    case Metadata::What::kThreadSortIndex:
      a.threads[m.key].sort_index = m.sort_index;
      break;
  }
}

void join(TraceAssembly& a, Chunk& c) {
  const auto base = static_cast<int32_t>(a.model.ops.size());
  const uint32_t name_base = a.model.append_texts(c.names);
  c.names = {};
  std::vector<int32_t>* thread_ops = nullptr;
  std::optional<ThreadKey> last_key;
  for (size_t i = 0; i < c.ops.size(); ++i) {
    TraceOp& op = c.ops[i];
    op.name.offset += name_base;
    const int32_t index = base + static_cast<int32_t>(i);
    const size_t first = i == 0 ? 0 : c.dep_end[i - 1];
    a.model.set_deps(index, std::span<const int64_t>(c.dep_ids).subspan(first, c.dep_end[i] - first));
    if (!last_key || *last_key != c.op_thread[i]) {
      last_key = c.op_thread[i];
      thread_ops = &a.threads[*last_key].ops;
    }
    thread_ops->push_back(index);
  }
  for (const uint32_t i : c.ops_without_id) c.ops[i].id = base + static_cast<int64_t>(i);
  a.model.ops.insert(a.model.ops.end(), c.ops.begin(), c.ops.end());
  c.ops = {};
  for (const Metadata& m : c.metadata) apply(a, m);
  for (size_t t = 0; t < c.memory.size(); ++t)
    a.model.memory[t].insert(a.model.memory[t].end(), c.memory[t].begin(), c.memory[t].end());
}

// The first place the chunks stopped, as a diagnostic, or nullopt when the
// exact reader should take the file; also checks the commas between chunks.
std::optional<std::optional<core::Diagnostic>> first_stop(const std::vector<Chunk>& chunks,
                                                          const Layout& layout, const std::string& file) {
  int line = layout.first_line;
  for (size_t k = 0; k < chunks.size(); ++k) {
    const Chunk& c = chunks[k];
    if (c.stop) {
      if (!c.stop->syntax) return std::optional<core::Diagnostic>();
      core::Diagnostic d = *c.stop->syntax;
      d.where.file = file;
      d.where.line = line + c.stop->line;
      return std::optional(d);
    }
    const bool later_events = std::any_of(chunks.begin() + static_cast<std::ptrdiff_t>(k) + 1, chunks.end(),
                                          [](const Chunk& next) { return next.events > 0 || next.stop; });
    if (c.events > 0 && c.last_has_comma != later_events) return std::optional<core::Diagnostic>();
    line += c.lines;
  }
  return std::nullopt;
}

void report_problems(TraceAssembly& a, const std::vector<Chunk>& chunks, int first_line) {
  size_t event = 0;
  int line = first_line;
  for (const Chunk& c : chunks) {
    for (const Problem& p : c.problems) a.problem(event + p.event, p.what, p.expected, line + p.line);
    event += c.events;
    line += c.lines;
  }
}

}  // namespace

std::optional<core::Result<TraceModel>> read_trace_lines(std::string_view text, const std::string& file,
                                                         const LineReaderOptions& options) {
  std::optional<Layout> layout = find_layout(text);
  if (!layout) return std::nullopt;
  std::vector<Chunk> chunks = read_chunks(layout->events, options);
  if (const auto stop = first_stop(chunks, *layout, file)) {
    if (!*stop) return std::nullopt;
    return core::fail(**stop);
  }
  TraceAssembly a{.file = file};
  read_header(a, layout->root);
  report_problems(a, chunks, layout->first_line);
  if (!a.problems.empty()) return finish_assembly(std::move(a));
  size_t ops = 0, names = 0, deps = 0;
  for (const Chunk& c : chunks) ops += c.ops.size(), names += c.names.size(), deps += c.dep_ids.size();
  if (names > kMaxTextBytes || ops > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return core::fail({.where = {.file = file},
                       .what = "too large: " + std::to_string(ops) + " ops with " + std::to_string(names) +
                               " bytes of names",
                       .expected = "under 2^31 ops and 4 GiB of names"});
  }
  a.model.ops.reserve(ops);
  a.model.reserve_deps(deps);
  for (Chunk& c : chunks) join(a, c);
  return finish_assembly(std::move(a));
}

}  // namespace stowage::gui
