// A TraceModel's own measures (calibration/trace_metrics.h): the same
// busy, steady-state and step figures `stowage compare` prints, so the
// Compare panel and the CLI give one number for one trace. GUI-free.
#pragma once

#include "calibration/trace_metrics.h"
#include "gui/trace_model.h"

namespace stowage::gui {

// The model's ops, in id order, with their lanes, steps, bytes, spans and
// dependencies (calibration::TimingView), measured by
// calibration::trace_metrics.
[[nodiscard]] calibration::TraceMetrics metrics_of(const TraceModel& model);

}  // namespace stowage::gui
