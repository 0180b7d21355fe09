// The trace walker's one pass over a JSON document (core/trace_events.h):
// simdjson On-Demand walks it once, forward: fields are taken in file order
// and dispatched by key, so otherData and traceEvents may come in either
// order and an event's keys in any. Values nobody reads are skipped by
// simdjson without recursion; containers among them are walked here first,
// level by level, so that the depth limit holds for them too. The document
// is the whole text, or one piece of it (core/trace_event_pieces.h).
// Internal to the walker.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/trace_event_handoff.h"
#include "core/trace_events.h"

namespace stowage::core::trace_walk {

namespace od = simdjson::ondemand;
using simdjson::error_code;

static_assert(kTracePadding >= simdjson::SIMDJSON_PADDING);

// Where the document being iterated lies in the trace: the text itself, or
// (the walk in pieces, core/trace_event_pieces.h) a copy of part of it with
// a few bytes added around it.
struct Document {
  const char* begin = nullptr;  // its first byte
  ptrdiff_t shift = 0;          // a byte at p is the text's byte (p - begin) + shift
  bool copied = false;          // views of it are mapped back to the text; unescaped strings are kept
};

struct Walk {
  std::string_view text;  // the whole trace
  const std::string& file;
  TraceEventVisitor& visitor;
  TraceEventHandoff& handoff;  // events reach the visitor through it
  int max_depth;
  Document doc{.begin = text.data()};
  LineCounter lines{text};
  std::optional<Diagnostic> failure;  // the first problem; the walk stops there
  TraceEvent event;                   // reused: its vectors keep their capacity
  bool unwanted = false;              // the event's phase is one the visitor skips
  // Visitor calls (events, headers and device lists, in file order): the first `suppress`
  // are not made, an earlier attempt over the same text having made them.
  size_t suppress = 0, delivered = 0;
  // False where failures only mean "walk the whole text instead" (the walk
  // in pieces): their line and column, which cost a count of the lines
  // before them, are never shown.
  bool locate_failures = true;
  // Unescaped strings of copied documents, whose parsers are reused: kept
  // here, so that events' views last until walk_trace() returns.
  std::deque<std::string> kept;
  // When set, the traceEvents array whose '[' is at text offset
  // `events_at` is walked by this instead of events() (the walk in pieces).
  std::function<bool()> events_in_pieces;
  size_t events_at = std::string_view::npos;
  // When set, events are kept here instead of handed to the visitor: a
  // walk ahead (core/trace_event_pieces.cpp), whose events wait until every
  // piece before its own has been walked.
  TraceEventRun* ahead = nullptr;

  size_t offset_of(simdjson::simdjson_result<const char*> where) const {
    const char* at = nullptr;
    if (std::move(where).get(at) != simdjson::SUCCESS) return text.size();
    return offset_of(at);
  }
  size_t offset_of(const char* at) const {
    if (at == nullptr) return text.size();
    const ptrdiff_t offset = (at - doc.begin) + doc.shift;
    return static_cast<size_t>(std::clamp<ptrdiff_t>(offset, 0, static_cast<ptrdiff_t>(text.size())));
  }

  // A view of the document's own bytes as the same bytes of the text.
  [[nodiscard]] std::string_view in_text(std::string_view view) const {
    if (!doc.copied || view.empty()) return view;
    return {text.data() + ((view.data() - doc.begin) + doc.shift), view.size()};
  }

  // A view of the parser's buffer, made to last the walk.
  [[nodiscard]] std::string_view lasting(std::string_view unescaped) {
    return doc.copied ? std::string_view(kept.emplace_back(unescaped)) : unescaped;
  }

  bool deliver_event() {
    if (ahead != nullptr) {
      ahead->add(event);
      return true;
    }
    if (suppress > 0) {
      --suppress;
      return true;
    }
    ++delivered;
    return handoff.add(event);
  }

  void deliver_header(const TraceHeader& header) {
    if (suppress > 0) {
      --suppress;
      return;
    }
    ++delivered;
    handoff.drain();  // the visitor's thread is idle: events before the header stay before it
    visitor.header(header);
  }

  void deliver_devices(const std::vector<std::string>& names) {
    if (suppress > 0) {
      --suppress;
      return;
    }
    ++delivered;
    handoff.drain();  // as a header: events before it stay before it
    visitor.devices(names);
  }

  bool fail_at(size_t offset, std::string what, std::string expected) {
    if (failure) return false;
    const auto [line, column] = locate_failures ? lines.at(offset) : std::pair(0, 0);
    failure = Diagnostic{{file, line, column}, std::move(what), std::move(expected)};
    return false;
  }

  template <class Located>
  bool fail_json(error_code error, Located& where) {
    return fail_at(offset_of(where.current_location()),
                   std::string("not JSON: ") + simdjson::error_message(error), "Chrome Trace Event JSON");
  }

  // A field's key as written, viewing the text itself when it has no
  // escapes (every key Stowage writes); an escaped key is unescaped.
  bool key_of(od::field& field, std::string_view& key) {
    const char* const raw = field.key().raw();
    for (const char* c = raw;; ++c) {
      if (*c == '"') {
        key = in_text(std::string_view(raw, static_cast<size_t>(c - raw)));
        return true;
      }
      if (*c == '\\') {
        if (field.unescaped_key().get(key) != simdjson::SUCCESS) return false;
        key = lasting(key);
        return true;
      }
    }
  }

  bool too_deep(od::value& v) {
    return fail_at(offset_of(v.current_location()),
                   "JSON nested deeper than " + std::to_string(max_depth) + " levels",
                   "at most " + std::to_string(max_depth) + " levels of '[' and '{'");
  }

  // A value nobody reads, at nesting level `depth` if it is a container.
  bool skip(od::value v, int depth) {
    od::json_type type{};
    if (const error_code e = v.type().get(type)) return fail_json(e, v);
    if (type != od::json_type::object && type != od::json_type::array) return true;
    if (depth > max_depth) return too_deep(v);
    if (type == od::json_type::array) {
      od::array array;
      if (const error_code e = v.get_array().get(array)) return fail_json(e, v);
      for (auto element : array) {
        od::value inner;
        if (const error_code e = element.get(inner)) return fail_json(e, v);
        if (!skip(inner, depth + 1)) return false;
      }
      return true;
    }
    od::object object;
    if (const error_code e = v.get_object().get(object)) return fail_json(e, v);
    for (auto field : object) {
      od::value inner;
      if (const error_code e = field.value().get(inner)) return fail_json(e, v);
      if (!skip(inner, depth + 1)) return false;
    }
    return true;
  }

  // The fields of `v`, an object at level `depth`, each to on_field(key,
  // value); false when the walk must stop. A non-object is skipped.
  template <class OnField>
  bool fields(od::value v, int depth, OnField&& on_field) {
    od::object object;
    if (depth > max_depth) return too_deep(v);
    if (const error_code e = v.get_object().get(object)) return fail_json(e, v);
    for (auto result : object) {
      od::field field;
      if (const error_code e = std::move(result).get(field)) return fail_json(e, v);
      std::string_view key;
      if (!key_of(field, key)) return fail_json(simdjson::STRING_ERROR, v);
      if (!on_field(key, field.value(), depth + 1)) return false;
    }
    return true;
  }

  bool is(od::value& v, od::json_type wanted, bool& out) {
    od::json_type type{};
    if (const error_code e = v.type().get(type)) return fail_json(e, v);
    out = type == wanted;
    return true;
  }

  // A string value into `out`; a value of another type is skipped. The
  // common case (a string without escapes, a number of the wanted kind) is
  // inlined into the field loops; the rest, out of line, reads the value
  // afresh (a failed get leaves it unread).
  [[gnu::always_inline]] bool string(od::value v, int depth, std::string_view& out) {
    // As with keys: the text itself when it holds no escape. The token is
    // peeked, not consumed; the walk moves past it.
    std::string_view token = v.raw_json_token();
    if (token.empty() || token.front() != '"') return skip(v, depth);
    while (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' || token.back() == '\r')
      token.remove_suffix(1);
    if (token.size() >= 2 && token.back() == '"' && token.find('\\') == std::string_view::npos) {
      out = in_text(token.substr(1, token.size() - 2));
      return true;
    }
    if (const error_code e = v.get_string().get(out)) return fail_json(e, v);
    out = lasting(out);
    return true;
  }

  [[gnu::always_inline]] bool real(od::value v, int depth, std::optional<double>& out) {
    if (double d = 0; v.get_double().get(d) == simdjson::SUCCESS) {
      out = d;
      return true;
    }
    return real_slowly(v, depth, out);
  }

  [[gnu::noinline]] bool real_slowly(od::value v, int depth, std::optional<double>& out) {
    bool yes = false;
    if (!is(v, od::json_type::number, yes)) return false;
    if (!yes) return skip(v, depth);
    double d = 0;
    if (const error_code e = v.get_double().get(d)) return fail_json(e, v);
    out = d;
    return true;
  }

  // An array's strings, copied into `out`; elements of another type, and a
  // value that is not an array, are skipped.
  bool strings(od::value v, int depth, std::vector<std::string>& out) {
    bool array = false;
    if (!is(v, od::json_type::array, array)) return false;
    if (!array) return skip(v, depth);
    if (depth > max_depth) return too_deep(v);
    od::array elements;
    if (const error_code e = v.get_array().get(elements)) return fail_json(e, v);
    for (auto element : elements) {
      od::value item;
      if (const error_code e = element.get(item)) return fail_json(e, v);
      std::string_view value;
      bool is_string = false;
      if (!is(item, od::json_type::string, is_string)) return false;
      if (!is_string) {
        if (!skip(item, depth + 1)) return false;
        continue;
      }
      if (!string(item, depth + 1, value)) return false;
      out.emplace_back(value);
    }
    return true;
  }

  [[gnu::always_inline]] bool integer(od::value v, int depth, std::optional<int64_t>& out) {
    if (int64_t i = 0; v.get_int64().get(i) == simdjson::SUCCESS) {
      out = i;
      return true;
    }
    return integer_slowly(v, depth, out);
  }

  [[gnu::noinline]] bool integer_slowly(od::value v, int depth, std::optional<int64_t>& out) {
    bool yes = false;
    if (!is(v, od::json_type::number, yes)) return false;
    if (!yes) return skip(v, depth);
    od::number n;
    if (const error_code e = v.get_number().get(n)) return fail_json(e, v);
    if (n.is_int64()) {
      out = n.get_int64();
    } else {
      const double d = n.as_double();  // a real, or an integer past int64
      constexpr double kLimit = 9.2e18;
      out = std::isfinite(d) && std::fabs(d) < kLimit ? std::optional(static_cast<int64_t>(d)) : std::nullopt;
    }
    return true;
  }

  bool deps(od::value v, int depth) {
    bool yes = false;
    if (!is(v, od::json_type::array, yes)) return false;
    if (!yes) return skip(v, depth);
    if (depth > max_depth) return too_deep(v);
    event.has_deps = true;
    od::array array;
    if (const error_code e = v.get_array().get(array)) return fail_json(e, v);
    for (auto element : array) {
      od::value d;
      if (const error_code e = element.get(d)) return fail_json(e, v);
      od::number_type type{};
      bool number = false;
      if (!is(d, od::json_type::number, number)) return false;
      if (!number) {
        if (!skip(d, depth + 1)) return false;
        continue;
      }
      if (const error_code e = d.get_number_type().get(type)) return fail_json(e, d);
      if (type == od::number_type::signed_integer) {
        int64_t id = 0;
        if (const error_code e = d.get_int64().get(id)) return fail_json(e, d);
        event.deps.push_back(id);
      }
    }
    return true;
  }

  bool arg(std::string_view key, od::value v, int depth) {
    TraceEvent& e = event;
    if (key == "id") return integer(v, depth, e.id);
    if (key == "kind") return string(v, depth, e.kind);
    if (key == "partition") return integer(v, depth, e.partition);
    if (key == "layer") return integer(v, depth, e.layer);
    if (key == "step") return integer(v, depth, e.step);
    if (key == "micro_step") return integer(v, depth, e.micro_step);
    if (key == "tensor_class") return string(v, depth, e.tensor_class);
    if (key == "bytes") return integer(v, depth, e.bytes);
    if (key == "flops") return real(v, depth, e.flops);
    if (key == "params") return integer(v, depth, e.params);
    if (key == "deps") return deps(v, depth);
    if (key == "name") return string(v, depth, e.arg_name);
    if (key == "sort_index") return integer(v, depth, e.sort_index);
    std::optional<int64_t> other;
    if (!integer(v, depth, other)) return false;
    if (other) e.other_args.emplace_back(key, *other);
    return true;
  }

  void clear_args() {
    TraceEvent& e = event;
    e.id = e.partition = e.layer = e.step = e.micro_step = e.bytes = e.params = e.sort_index = std::nullopt;
    e.flops = std::nullopt;
    e.kind = e.tensor_class = e.arg_name = {};
    e.has_deps = false;
    e.deps.clear();
    e.other_args.clear();
  }

  bool event_field(std::string_view key, od::value v, int depth) {
    TraceEvent& e = event;
    if (unwanted) return skip(v, depth);
    if (key == "ph") {
      if (!string(v, depth, e.ph)) return false;
      unwanted = !visitor.wants_phase(e.ph);
      return true;
    }
    if (key == "ts") return real(v, depth, e.ts);
    if (key == "dur") return real(v, depth, e.dur);
    if (key == "pid") return integer(v, depth, e.pid);
    if (key == "tid") return integer(v, depth, e.tid);
    if (key == "name") return string(v, depth, e.name);
    if (key == "cat") return string(v, depth, e.cat);
    if (key == "args") {
      clear_args();  // a later "args" replaces an earlier one
      bool object = false;
      if (!is(v, od::json_type::object, object)) return false;
      if (!object) return skip(v, depth);
      return fields(v, depth, [this](std::string_view k, od::value a, int d) { return arg(k, a, d); });
    }
    return skip(v, depth);
  }

  bool one_event(od::value v, size_t index) {
    TraceEvent& e = event;
    e.index = index;
    e.offset = offset_of(v.current_location());
    e.lines = &lines;
    e.ph = e.name = e.cat = {};
    e.ts = e.dur = std::nullopt;
    e.pid = e.tid = std::nullopt;
    clear_args();
    unwanted = false;
    bool object = false;
    if (!is(v, od::json_type::object, object)) return false;
    e.is_object = object;
    if (!object) {
      if (!skip(v, 3)) return false;
    } else if (!fields(v, 3,
                       [this](std::string_view k, od::value f, int d) { return event_field(k, f, d); })) {
      return false;
    }
    return unwanted || deliver_event();
  }

  bool events(od::value v) {
    if (2 > max_depth) return too_deep(v);
    od::array array;
    if (const error_code e = v.get_array().get(array)) return fail_json(e, v);
    size_t index = 0;
    for (auto element : array) {
      od::value item;
      if (const error_code e = element.get(item)) return fail_json(e, v);
      if (!one_event(item, index++)) return false;
    }
    return true;
  }

  bool other_data(od::value v) {
    TraceHeader header;
    std::string_view format, title, source, falls_behind, machine, gpu, backend, device;
    const bool ok = fields(v, 2, [&](std::string_view key, od::value f, int d) {
      if (key == "format") return string(f, d, format);
      if (key == "title") return string(f, d, title);
      if (key == "source") return string(f, d, source);
      if (key == "ranks") return integer(f, d, header.ranks);
      if (key == "steps") return integer(f, d, header.steps);
      if (key == "tokens_per_step") return integer(f, d, header.tokens_per_step);
      if (key == "steady_step_ns") return integer(f, d, header.steady_step_ns);
      if (key == "falls_behind") return string(f, d, falls_behind);
      if (key == "warnings") return strings(f, d, header.warnings);
      if (key == "machine") return string(f, d, machine);
      if (key == "gpu") return string(f, d, gpu);
      if (key == "device_names") return strings(f, d, header.origin.device_names);
      if (key == "backend") return string(f, d, backend);
      if (key == "device") return string(f, d, device);
      return skip(f, d);
    });
    if (!ok) return false;
    header.format = format, header.title = title, header.source = source, header.falls_behind = falls_behind;
    header.origin.machine = machine, header.origin.gpu = gpu;
    header.origin.backend = backend, header.origin.device = device;
    deliver_header(header);
    return true;
  }

  // A PyTorch profiler trace's deviceProperties: each element's "name", in
  // order (elements without one, or not objects, passed over).
  bool device_properties(od::value v) {
    bool array = false;
    if (!is(v, od::json_type::array, array)) return false;
    if (!array) return skip(v, 2);
    if (2 > max_depth) return too_deep(v);
    od::array elements;
    if (const error_code e = v.get_array().get(elements)) return fail_json(e, v);
    std::vector<std::string> names;
    for (auto element : elements) {
      od::value item;
      if (const error_code e = element.get(item)) return fail_json(e, v);
      bool object = false;
      if (!is(item, od::json_type::object, object)) return false;
      if (!object) {
        if (!skip(item, 3)) return false;
        continue;
      }
      std::string_view name;
      const bool ok = fields(item, 3, [&](std::string_view key, od::value f, int d) {
        return key == "name" ? string(f, d, name) : skip(f, d);
      });
      if (!ok) return false;
      if (!name.empty()) names.emplace_back(name);
    }
    deliver_devices(names);
    return true;
  }

  // The root object's fields; `seen_events` says whether traceEvents was an array.
  bool root(od::document& root_document, bool& seen_events) {
    od::object object;
    if (const error_code e = root_document.get_object().get(object)) {
      if (e == simdjson::INCORRECT_TYPE) return fail_at(0, "no 'traceEvents' array", "a Chrome trace object");
      return fail_json(e, root_document);
    }
    if (1 > max_depth)
      return fail_at(0, "JSON nested deeper than " + std::to_string(max_depth) + " levels", "");
    for (auto result : object) {
      od::field field;
      if (const error_code e = std::move(result).get(field)) return fail_json(e, root_document);
      std::string_view key;
      if (!key_of(field, key)) return fail_json(simdjson::STRING_ERROR, root_document);
      od::value v = field.value();
      bool ok = true;
      if (key == "traceEvents") {
        bool array = false;
        if (!is(v, od::json_type::array, array)) return false;
        if (array && events_in_pieces && offset_of(v.current_location()) == events_at) {
          ok = events_in_pieces();
        } else {
          ok = array ? events(v) : skip(v, 2);
        }
        seen_events = seen_events || array;
      } else if (key == "deviceProperties") {
        ok = device_properties(v);
      } else if (key == "otherData") {
        bool object_value = false;
        if (!is(v, od::json_type::object, object_value)) return false;
        ok = object_value ? other_data(v) : skip(v, 2);
      } else {
        ok = skip(v, 2);
      }
      if (!ok) return false;
    }
    return true;
  }
};

}  // namespace stowage::core::trace_walk
