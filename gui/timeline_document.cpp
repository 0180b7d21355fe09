#include "gui/timeline_document.h"

#include <thread>

#include "gui/critical_path.h"

namespace stowage::gui {

std::shared_ptr<const TimelineDocument> prepare_document(TraceModel model) {
  auto doc = std::make_shared<TimelineDocument>();
  doc->model = std::move(model);
  {
    // Independent passes over the same read-only model.
    std::jthread path([&doc] { doc->critical_path = critical_path(doc->model); });
    doc->lod = build_lod(doc->model);
  }
  return doc;
}

}  // namespace stowage::gui
