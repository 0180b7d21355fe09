// A timeline ready to show: the model, its level-of-detail pyramid and its
// critical path, prepared together on a worker thread and then shared,
// read-only, by the views. GUI-free.
#pragma once

#include <memory>
#include <vector>

#include "gui/lod.h"
#include "gui/trace_model.h"

namespace stowage::gui {

struct TimelineDocument {
  TraceModel model;
  std::vector<TrackLod> lod;           // by track
  std::vector<int32_t> critical_path;  // op indices, first to last
};

// Builds the LOD and critical path, on threads of its own that it joins
// before returning; call from any thread.
[[nodiscard]] std::shared_ptr<const TimelineDocument> prepare_document(TraceModel model);

}  // namespace stowage::gui
