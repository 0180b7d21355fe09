// What a click selects and what the timeline then highlights: the op, the
// ops it waits on (its dependencies) and the ops that wait on it (its
// consumers), and the hit test that finds the op under the mouse. GUI-free.
#pragma once

#include <optional>
#include <vector>

#include "gui/trace_model.h"

namespace stowage::gui {

struct Selection {
  std::optional<int32_t> op;       // index into TraceModel::ops
  std::vector<int32_t> waits_on;   // direct dependencies of op
  std::vector<int32_t> waited_by;  // direct consumers of op
};

[[nodiscard]] Selection select_op(const TraceModel& model, std::optional<int32_t> op);

// The op of `track` running at `time`, or else the nearest one within
// `tolerance` ns of it (so a 1-pixel op can be clicked).
[[nodiscard]] std::optional<int32_t> op_at(const TraceModel& model, int32_t track, SimTime time,
                                           SimTime tolerance);

}  // namespace stowage::gui
