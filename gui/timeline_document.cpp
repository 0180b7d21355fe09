#include "gui/timeline_document.h"

#include <thread>

#include "gui/critical_path.h"

namespace stowage::gui {

std::shared_ptr<const TimelineDocument> prepare_document(TraceModel model) {
  auto doc = std::make_shared<TimelineDocument>();
  doc->model = std::move(model);
  {
    // Independent passes over the same read-only model.
    std::jthread path([&doc] {
      doc->critical_path = critical_path(doc->model);
      doc->on_critical_path.assign(doc->model.ops.size(), 0);
      for (const int32_t i : doc->critical_path) doc->on_critical_path[static_cast<size_t>(i)] = 1;
    });
    std::jthread busy([&doc] {
      doc->busy = lane_busy(doc->model);
      doc->steps = step_marks(doc->model, doc->busy);
    });
    doc->lod = build_lod(doc->model);
  }
  return doc;
}

}  // namespace stowage::gui
