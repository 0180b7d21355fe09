// The critical path of a timeline as the simulator's summary defines it
// (sim/summary.cpp): from the op that ends last, walk back to whichever
// predecessor ended last, a dependency or the op before it on a lane that
// runs one op at a time. Works on a model loaded from any trace.
#pragma once

#include <vector>

#include "gui/trace_model.h"

namespace stowage::gui {

// Indices into model.ops, from the first op to the last; empty for no ops.
[[nodiscard]] std::vector<int32_t> critical_path(const TraceModel& model);

}  // namespace stowage::gui
