// Two timelines of one schedule in one Chrome trace, one above the other, so
// Perfetto shows a predicted and a measured run side by side on one time
// axis (stowage compare --side-by-side). Each is written as
// write_chrome_trace writes it alone (chrome_trace.h), then its processes
// are renumbered and prefixed with its label: "predicted: rank 0",
// "measured: memory", ... . The file's otherData.format is
// stowage/trace-pair/v1 (docs/formats/trace.md): for viewing, not a trace
// Stowage reads back.
#pragma once

#include <iosfwd>
#include <string>

#include "core/chrome_trace.h"
#include "core/schedule.h"
#include "core/timeline.h"

namespace stowage::core {

struct LabelledTimeline {
  const Schedule* schedule;
  const Timeline* timeline;
  TraceOptions options;  // options.source is the label: "predicted", "measured"
};

void write_trace_pair(const LabelledTimeline& first, const LabelledTimeline& second, std::ostream& out);

}  // namespace stowage::core
