#include "gui/timeline_document.h"

#include "gui/critical_path.h"

namespace stowage::gui {

std::shared_ptr<const TimelineDocument> prepare_document(TraceModel model) {
  auto doc = std::make_shared<TimelineDocument>();
  doc->model = std::move(model);
  doc->lod = build_lod(doc->model);
  doc->critical_path = critical_path(doc->model);
  return doc;
}

}  // namespace stowage::gui
