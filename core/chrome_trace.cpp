// Chrome Trace Event JSON for a timeline. The text is built by hand rather
// than as a JSON tree: times must print as exact decimals ("1.500"), no
// number may print in scientific notation or depend on the stream's locale,
// and keys keep a fixed order. Only string escaping goes through
// nlohmann::json. One event per line, so two traces diff line by line.
#include "core/chrome_trace.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/memory_by_class.h"

namespace stowage::core {
namespace {

constexpr int kRankPid = 1;    // the lanes of rank 0, one thread per track
constexpr int kMemoryPid = 2;  // one counter per tier
// Track k (from 0) of a process is thread pid * 1000 + k + 1. Perfetto finds
// a thread by tid alone in places, as if tids were unique across processes
// as on Linux, and every process has a main thread whose tid is its pid; so
// no tid may equal a pid or repeat in another process.
constexpr int kTidsPerPid = 1000;

// Transfers move bytes between tiers or ranks; the other lanes compute.
bool is_transfer(Lane lane) {
  switch (lane) {
    case Lane::kPcieH2d:
    case Lane::kPcieD2h:
    case Lane::kNvmeRead:
    case Lane::kNvmeWrite:
    case Lane::kGpuComm: return true;
    case Lane::kGpuCompute:
    case Lane::kCpuOptim: return false;
  }
  return false;
}

// Integer nanoseconds as microseconds with three decimals, exactly:
// 1500 -> "1.500", 1234567 -> "1234.567", -1 -> "-0.001".
std::string micros(SimTime ns) {
  const uint64_t magnitude = ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string fraction = std::to_string(magnitude % 1000);
  fraction.insert(0, 3 - fraction.size(), '0');
  return (ns < 0 ? "-" : "") + std::to_string(magnitude / 1000) + "." + fraction;
}

// The shortest decimal that reads back as `value`, never in scientific
// notation (1e20 -> "100000000000000000000"). JSON has no infinity or NaN:
// those are null.
std::string real(double value) {
  if (!std::isfinite(value)) return "null";
  std::array<char, 400> text;  // the longest fixed-notation double is about 330 characters
  const auto [end, error] =
      std::to_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (error != std::errc()) return "null";
  return std::string(text.data(), end);
}

// A JSON string literal. Bytes that are not UTF-8 become U+FFFD, so an odd
// op name cannot make the file unreadable.
std::string json_string(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// An op as written: its span (end >= start) and the thread it is drawn on.
struct Slice {
  OpSpan span;
  int tid = 0;
};

// One thread of the rank: track `number` of a lane. Track n is slot n;
// numbers past the largest slot hold ops that overlapped others on theirs.
struct Track {
  Lane lane = Lane::kGpuCompute;
  int64_t number = 0;
  int sort_index = 0;  // 1, 2, ... in Lane order, then track number
  int tid = 0;
};

struct Layout {
  std::vector<std::optional<Slice>> slices;  // by op index; empty for an op without a span
  std::vector<Track> tracks;                 // in sort_index order
  SimTime end = 0;                           // when the last op ends or memory last changes
};

std::string track_name(const Track& track) {
  std::string name(to_string(track.lane));
  if (track.number > 0) name += " #" + std::to_string(track.number + 1);
  return name;
}

// Groups the ops of `lane` by track number. An op goes on its slot's track
// while that is free at the op's start, else on the first free track past
// the largest slot. Ops are taken in start order (zero-length ones first),
// so a timeline whose slots never overlap is drawn with its slots as they are.
std::map<int64_t, std::vector<size_t>> place_lane(Lane lane, const Schedule& schedule,
                                                  const std::vector<std::optional<Slice>>& slices) {
  std::vector<size_t> ops;
  int64_t first_extra = 1;
  for (size_t i = 0; i < slices.size(); ++i) {
    if (!slices[i] || schedule.ops[i].lane != lane) continue;
    ops.push_back(i);
    first_extra = std::max(first_extra, int64_t{slices[i]->span.slot} + 1);
  }
  std::ranges::sort(ops, {},
                    [&](size_t i) { return std::tuple(slices[i]->span.start, slices[i]->span.end, i); });

  std::map<int64_t, SimTime> free_from;  // by track number: when its last op ends
  std::map<int64_t, std::vector<size_t>> tracks;
  for (const size_t i : ops) {
    const OpSpan& span = slices[i]->span;
    const auto busy = [&](int64_t number) {
      const auto it = free_from.find(number);
      return it != free_from.end() && it->second > span.start;
    };
    int64_t number = std::max(span.slot, 0);
    if (busy(number)) {
      number = first_extra;
      while (busy(number)) ++number;
    }
    free_from[number] = span.end;
    tracks[number].push_back(i);
  }
  return tracks;
}

Layout lay_out(const Schedule& schedule, const Timeline& timeline) {
  Layout layout;
  layout.slices.resize(schedule.ops.size());
  for (size_t i = 0; i < schedule.ops.size() && i < timeline.spans.size(); ++i) {
    OpSpan span = timeline.spans[i];
    span.end = std::max(span.end, span.start);
    layout.slices[i] = Slice{.span = span};
    layout.end = std::max(layout.end, span.end);
  }
  for (const MemorySample& sample : timeline.memory) layout.end = std::max(layout.end, sample.time);
  for (const Lane lane : kAllLanes) {
    for (const auto& [number, ops] : place_lane(lane, schedule, layout.slices)) {
      const int sort_index = static_cast<int>(layout.tracks.size()) + 1;
      const int tid = kRankPid * kTidsPerPid + sort_index;
      layout.tracks.push_back({.lane = lane, .number = number, .sort_index = sort_index, .tid = tid});
      for (const size_t i : ops) layout.slices[i]->tid = tid;
    }
  }
  return layout;
}

// Events separated by ",\n".
class EventList {
 public:
  explicit EventList(std::ostream& out) : out_(out) {}
  void add(const std::string& event) {
    out_ << (first_ ? "" : ",\n") << event;
    first_ = false;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

// ,"key":["...", ...], or nothing when there are none.
std::string strings_field(std::string_view key, const std::vector<std::string>& texts) {
  if (texts.empty()) return "";
  std::string out = ",\"" + std::string(key) + "\":[";
  for (size_t i = 0; i < texts.size(); ++i) out += (i > 0 ? "," : "") + json_string(texts[i]);
  return out + "]";
}

// ,"machine":"...","gpu":"...","device_names":[...] for a prediction,
// ,"backend":"...","device":"..." for a measurement; each only when set.
std::string origin_fields(const TraceOrigin& origin) {
  std::string out;
  auto text = [&](std::string_view key, const std::string& value) {
    if (!value.empty()) out += ",\"" + std::string(key) + "\":" + json_string(value);
  };
  text("machine", origin.machine);
  text("gpu", origin.gpu);
  out += strings_field("device_names", origin.device_names);
  text("backend", origin.backend);
  text("device", origin.device);
  return out;
}

std::string header(const Schedule& schedule, const TraceOptions& options) {
  const std::string other_data =
      R"({"format":"stowage/trace/v1","title":)" + json_string(options.title) + R"(,"source":)" +
      json_string(options.source) + R"(,"ranks":)" + std::to_string(schedule.ranks) + R"(,"steps":)" +
      std::to_string(schedule.steps) + R"(,"tokens_per_step":)" + std::to_string(schedule.tokens_per_step) +
      (options.steady_step ? R"(,"steady_step_ns":)" + std::to_string(*options.steady_step) : "") +
      (options.falls_behind ? R"(,"falls_behind":)" + json_string(to_string(*options.falls_behind)) : "") +
      strings_field("warnings", options.warnings) + origin_fields(options.origin) + "}";
  return "{\"displayTimeUnit\":\"ns\",\n\"otherData\":" + other_data + ",\n\"traceEvents\":[\n";
}

std::string metadata(std::string_view what, int pid, std::optional<int> tid, const std::string& args) {
  std::string event = R"({"ph":"M","pid":)" + std::to_string(pid);
  if (tid) event += R"(,"tid":)" + std::to_string(*tid);
  return event + R"(,"name":")" + std::string(what) + R"(","args":)" + args + "}";
}

// Process and thread names; thread_sort_index keeps Lane order in
// chrome://tracing, and tids grow in the same order for Perfetto.
void write_names(const Layout& layout, const Timeline& timeline, EventList& events) {
  if (!layout.tracks.empty())
    events.add(metadata("process_name", kRankPid, std::nullopt, R"({"name":"rank 0"})"));
  for (const Track& track : layout.tracks) {
    events.add(
        metadata("thread_name", kRankPid, track.tid, R"({"name":)" + json_string(track_name(track)) + "}"));
    events.add(metadata("thread_sort_index", kRankPid, track.tid,
                        R"({"sort_index":)" + std::to_string(track.sort_index) + "}"));
  }
  if (!timeline.memory.empty()) {
    events.add(metadata("process_name", kMemoryPid, std::nullopt, R"({"name":"memory"})"));
  }
}

// What the op achieved: bytes/s for a transfer, FLOP/s for compute; nothing
// for an op that took no time or moved or computed nothing. Rounded to a
// whole number per second.
std::string rate_arg(const Op& op, const OpSpan& span) {
  if (span.end <= span.start) return "";
  const Seconds took(static_cast<double>(span.end - span.start) / 1e9);
  if (is_transfer(op.lane)) {
    if (op.bytes.count() <= 0) return "";
    return R"(,"bytes_per_s":)" + real(std::round((op.bytes / took).value()));
  }
  if (op.flops.count() <= 0) return "";
  return R"(,"flops_per_s":)" + real(std::round((op.flops / took).value()));
}

// The device queue an NVMe op kept (measured timelines only): the most
// requests in flight at once and the time-weighted mean, to two decimals.
std::string queue_depth_args(const OpSpan& span) {
  if (!span.queue_depth) return "";
  return R"(,"queue_depth_max":)" + std::to_string(span.queue_depth->max) + R"(,"queue_depth_mean":)" +
         real(std::round(span.queue_depth->mean * 100) / 100);
}

std::string op_args(const Op& op, const OpSpan& span) {
  std::string args = R"({"id":)" + std::to_string(op.id) + R"(,"kind":")" + std::string(to_string(op.kind)) +
                     R"(","partition":)" + std::to_string(op.partition) + R"(,"layer":)" +
                     std::to_string(op.layer) + R"(,"step":)" + std::to_string(op.step) +
                     R"(,"micro_step":)" + std::to_string(op.micro_step);
  if (op.tensor_class) args += R"(,"tensor_class":")" + std::string(to_string(*op.tensor_class)) + R"(")";
  args += R"(,"bytes":)" + std::to_string(op.bytes.count()) + R"(,"flops":)" + real(op.flops.count()) +
          R"(,"params":)" + std::to_string(op.params) + rate_arg(op, span) + queue_depth_args(span) +
          R"(,"deps":[)";
  for (size_t i = 0; i < op.deps.size(); ++i) args += (i == 0 ? "" : ",") + std::to_string(op.deps[i]);
  return args + "]}";
}

std::string op_event(const Op& op, const Slice& slice) {
  return R"({"ph":"X","pid":)" + std::to_string(kRankPid) + R"(,"tid":)" + std::to_string(slice.tid) +
         R"(,"name":)" + json_string(op.name) + R"(,"cat":")" + std::string(to_string(op.lane)) +
         R"(","ts":)" + micros(slice.span.start) + R"(,"dur":)" + micros(slice.span.end - slice.span.start) +
         R"(,"args":)" + op_args(op, slice.span) + "}";
}

// One key per counter name: Perfetto names a track "<name> <key>" and
// chrome://tracing stacks the keys of one name.
std::string counter_event(Tier tier, SimTime at, Bytes bytes) {
  return R"({"ph":"C","pid":)" + std::to_string(kMemoryPid) + R"(,"name":")" + std::string(to_string(tier)) +
         R"( memory","ts":)" + micros(at) + R"(,"args":{"bytes":)" + std::to_string(bytes.count()) + "}}";
}

// Counters are step functions: each sample holds until the next, and a
// last sample at the end of the trace draws the final step to its end.
void write_memory(const Timeline& timeline, SimTime end, EventList& events) {
  std::array<std::optional<Bytes>, kAllTiers.size()> last;  // by Tier
  for (const MemorySample& sample : timeline.memory) {
    events.add(counter_event(sample.tier, sample.time, sample.bytes));
    last[static_cast<size_t>(sample.tier)] = sample.bytes;
  }
  for (const Tier tier : kAllTiers) {
    if (const std::optional<Bytes> bytes = last[static_cast<size_t>(tier)]) {
      events.add(counter_event(tier, end, *bytes));
    }
  }
}

// Each tier's bytes by memory class (core/memory_by_class.h), replayed from
// the schedule's effects over the spans: a stacked chart in chrome://tracing,
// one track per class in Perfetto. Every event of a tier names the same
// classes, those it ever holds, so the stack never loses a layer. Only for
// tiers the timeline samples; the last value again at the end of the trace.
void write_memory_classes(const Schedule& schedule, const Timeline& timeline, SimTime end, EventList& events) {
  std::array<bool, kAllTiers.size()> sampled{};
  for (const MemorySample& sample : timeline.memory) sampled[static_cast<size_t>(sample.tier)] = true;
  std::vector<ClassSample> samples = memory_by_class(schedule, timeline);
  std::erase_if(samples, [&](const ClassSample& c) { return !sampled[static_cast<size_t>(c.tier)]; });
  std::array<std::array<bool, kMemoryClassCount>, kAllTiers.size()> held{};
  for (const ClassSample& c : samples) {
    for (size_t k = 0; k < kMemoryClassCount; ++k) held[static_cast<size_t>(c.tier)][k] |= c.bytes[k].count() != 0;
  }
  const auto event = [&](const ClassSample& c, SimTime at) {
    std::string args;
    for (size_t k = 0; k < kMemoryClassCount; ++k) {
      if (!held[static_cast<size_t>(c.tier)][k]) continue;
      args += (args.empty() ? "\"" : ",\"") + std::string(to_string(static_cast<MemoryClass>(k))) + "\":" +
              std::to_string(c.bytes[k].count());
    }
    if (args.empty()) return;
    events.add(R"({"ph":"C","pid":)" + std::to_string(kMemoryPid) + R"(,"name":"classes in )" +
               std::string(to_string(c.tier)) + R"( memory","ts":)" + micros(at) + R"(,"args":{)" + args + "}}");
  };
  std::array<const ClassSample*, kAllTiers.size()> last{};
  for (const ClassSample& c : samples) {
    event(c, c.time);
    last[static_cast<size_t>(c.tier)] = &c;
  }
  for (const ClassSample* c : last) {
    if (c != nullptr) event(*c, end);
  }
}

std::string flow_event(char phase, int64_t id, int tid, SimTime at) {
  return R"({"ph":")" + std::string(1, phase) + R"(","pid":)" + std::to_string(kRankPid) + R"(,"tid":)" +
         std::to_string(tid) + R"(,"name":"data","cat":"flow","id":)" + std::to_string(id) + R"(,"ts":)" +
         micros(at) + (phase == 'f' ? R"(,"bp":"e"})" : "}");
}

// An arrow from each transfer to each op that depends on it directly. A
// flow binds to the slice open on its thread at its time: the start sits
// 1 ns before the producer's end (inside it), the end at the consumer's
// start with "bp":"e". Perfetto sorts slices before flows of the same time,
// so the consumer is open by then.
void write_flows(const Schedule& schedule, const Layout& layout, EventList& events) {
  int64_t id = 0;
  for (size_t consumer = 0; consumer < schedule.ops.size(); ++consumer) {
    if (!layout.slices[consumer]) continue;
    for (const OpId dep : schedule.ops[consumer].deps) {
      const size_t producer = static_cast<size_t>(dep);
      if (dep < 0 || producer >= layout.slices.size() || !layout.slices[producer]) continue;
      if (!is_transfer(schedule.ops[producer].lane)) continue;
      const Slice& from = *layout.slices[producer];
      const Slice& to = *layout.slices[consumer];
      ++id;
      events.add(flow_event('s', id, from.tid, std::max(from.span.start, from.span.end - 1)));
      events.add(flow_event('f', id, to.tid, to.span.start));
    }
  }
}

}  // namespace

void write_chrome_trace(const Schedule& schedule, const Timeline& timeline, const TraceOptions& options,
                        std::ostream& out) {
  const Layout layout = lay_out(schedule, timeline);
  out << header(schedule, options);
  EventList events(out);
  write_names(layout, timeline, events);
  for (size_t i = 0; i < schedule.ops.size(); ++i) {
    if (layout.slices[i]) events.add(op_event(schedule.ops[i], *layout.slices[i]));
  }
  write_memory(timeline, layout.end, events);
  write_memory_classes(schedule, timeline, layout.end, events);
  write_flows(schedule, layout, events);
  out << "\n]}\n";
}

}  // namespace stowage::core
