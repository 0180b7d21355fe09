// Paints memory per tier under the timeline, on the same time axis: a row
// per tier that has samples, the bytes in use as a filled step curve (the
// most held within each pixel), the tier's capacity as a dashed line, and
// the spans where usage went over it marked in red.
#pragma once

#include <QPainter>
#include <array>
#include <optional>
#include <vector>

#include "gui/time_axis.h"
#include "gui/trace_model.h"

namespace stowage::gui {

class MemoryPainter {
 public:
  // `label_width` must match the timeline's, so the two axes line up.
  // `capacity` is per rank by tier, as in TraceModel::capacity.
  MemoryPainter(const TraceModel& model, const TimeAxis& axis, double label_width,
                const std::array<std::optional<core::Bytes>, 3>& capacity);

  [[nodiscard]] const std::vector<core::Tier>& tiers() const { return tiers_; }  // the rows, top to bottom
  void paint(QPainter& painter, int width, int height) const;

 private:
  void paint_tier(QPainter& painter, core::Tier tier, const QRectF& row) const;

  const TraceModel& model_;
  const TimeAxis& axis_;
  double label_width_;
  std::array<std::optional<core::Bytes>, 3> capacity_;
  std::vector<core::Tier> tiers_;
};

}  // namespace stowage::gui
