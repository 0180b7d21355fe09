// A timeline ready to show: the model, its level-of-detail pyramid, its
// critical path, the busy time of each lane and where its steps begin,
// prepared together on a worker thread and then shared, read-only, by the
// views. GUI-free.
#pragma once

#include <memory>
#include <vector>

#include "gui/busy_time.h"
#include "gui/lod.h"
#include "gui/step_marks.h"
#include "gui/trace_model.h"

namespace stowage::gui {

struct TimelineDocument {
  TraceModel model;
  std::vector<TrackLod> lod;              // by track
  std::vector<int32_t> critical_path;     // op indices, first to last
  std::vector<uint8_t> on_critical_path;  // by op index: 1 when the op is on it
  LaneBusy busy;
  StepMarks steps;
};

// Builds the LOD, critical path, busy times and step marks, on threads of its own that it joins
// before returning; call from any thread.
[[nodiscard]] std::shared_ptr<const TimelineDocument> prepare_document(TraceModel model);

}  // namespace stowage::gui
