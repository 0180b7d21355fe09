#include "core/trace_pair.h"

#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>

namespace stowage::core {
namespace {

// Processes of the second timeline move up by this much, and its threads
// (pid * 1000 + track, chrome_trace.cpp) with them, so no id repeats.
constexpr int kPidShift = 10;
constexpr int kTidsPerPid = 1000;
// Flow ids of the second timeline move past the first's.
constexpr int64_t kFlowShift = int64_t{1} << 40;

nlohmann::json events_of(const LabelledTimeline& t, int shift, int64_t flow_shift) {
  std::ostringstream text;
  write_chrome_trace(*t.schedule, *t.timeline, t.options, text);
  nlohmann::json trace = nlohmann::json::parse(text.str());
  nlohmann::json& events = trace["traceEvents"];
  for (nlohmann::json& e : events) {
    e["pid"] = e["pid"].get<int>() + shift;
    if (e.contains("tid")) e["tid"] = e["tid"].get<int>() + shift * kTidsPerPid;
    if (e.value("cat", "") == "flow") e["id"] = e["id"].get<int64_t>() + flow_shift;
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name")
      e["args"]["name"] = t.options.source + ": " + e["args"]["name"].get<std::string>();
  }
  return events;
}

}  // namespace

void write_trace_pair(const LabelledTimeline& first, const LabelledTimeline& second, std::ostream& out) {
  nlohmann::json events = events_of(first, 0, 0);
  for (nlohmann::json& e : events_of(second, kPidShift, kFlowShift)) events.push_back(std::move(e));
  // The first timeline's processes above the second's, in their own order.
  std::set<int> pids;
  for (const nlohmann::json& e : events) pids.insert(e["pid"].get<int>());
  for (int pid : pids) {
    events.push_back(
        {{"ph", "M"}, {"pid", pid}, {"name", "process_sort_index"}, {"args", {{"sort_index", pid}}}});
  }
  const nlohmann::json pair{
      {"displayTimeUnit", "ns"},
      {"otherData",
       {{"format", "stowage/trace-pair/v1"},
        {"title", first.options.title + " | " + second.options.title}}},
      {"traceEvents", std::move(events)}};
  out << pair.dump() << '\n';
}

}  // namespace stowage::core
