// The second source of a TraceModel: a schedule and the timeline the
// simulator (or executor) produced for it, as the planner panel gets them.
// Tracks and ops come out as the trace writer would lay them out
// (core/chrome_trace.h), so a model built here and one loaded from the
// written file show the same picture.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "core/chrome_trace.h"
#include "core/schedule.h"
#include "core/timeline.h"
#include "gui/trace_model.h"

namespace stowage::gui {

// timeline.spans[i] is the span of schedule.ops[i]; ops without a span are
// left out. Capacities come from schedule.capacity (per rank).
[[nodiscard]] TraceModel trace_from_timeline(const core::Schedule& schedule, const core::Timeline& timeline,
                                             const core::TraceOptions& source);

}  // namespace stowage::gui
