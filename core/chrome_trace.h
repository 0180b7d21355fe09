// Writes a timeline as Chrome Trace Event JSON (docs/formats/trace.md) that
// ui.perfetto.dev and chrome://tracing open as they are: one thread per lane
// and concurrent slot, one counter per memory tier, and arrows from each
// transfer to the ops that wait for it. A predicted and a measured timeline
// of the same schedule give files that line up op for op.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule.h"
#include "core/timeline.h"
#include "core/trace_origin.h"

namespace stowage::core {

struct TraceOptions {
  std::string title;   // shown as trace metadata: "predicted: llama-2-13b on workstation-24gb-1nvme"
  std::string source;  // "predicted" (simulator) or "measured" (executor)
  // A predicted trace's step time as the simulator's summary gives it, and
  // the lane that fell behind if any, so that a viewer shows the number
  // `stowage simulate` printed (otherData.steady_step_ns, .falls_behind).
  std::optional<SimTime> steady_step;
  std::optional<Lane> falls_behind;
  // What the figures rest on that the profiles did not say, or what the
  // plan risks (planner::simulation_warnings), each a sentence, so that a
  // viewer of the trace is told what `stowage simulate` printed
  // (otherData.warnings; left out when there are none).
  std::vector<std::string> warnings;
  // Where the times come from: the machine a prediction priced, the backend
  // and device a measurement ran on (otherData.machine, .gpu, .device_names,
  // .backend, .device; each left out when empty).
  TraceOrigin origin;
};

// Writes `timeline`, one run of `schedule`, to `out` as one JSON object
// {"displayTimeUnit", "otherData", "traceEvents"}. Times are integer
// nanoseconds written as microseconds with exactly three decimals, so the
// file loses no precision; the same inputs give byte-identical output.
//
// timeline.spans[i] is the span of schedule.ops[i]; an op without a span
// (spans shorter than ops) is left out, and so are arrows to or from it. A
// span whose end precedes its start is written with zero duration. Ops of
// one lane and slot should not overlap; one that does goes on an extra track
// of its lane, since both viewers need slices on one thread to nest.
//
// Writes only; the caller checks `out` for errors and flushes it.
void write_chrome_trace(const Schedule& schedule, const Timeline& timeline, const TraceOptions& options,
                        std::ostream& out);

}  // namespace stowage::core
