// Paints memory per tier under the timeline, on the same time axis: a row
// per tier that has samples, the bytes in use as a filled step curve (the
// most held within each pixel) on a y-axis in decimal units with ticks
// (GB, as the CLI prints sizes), the tier's capacity as a dashed line, and
// the spans where usage went over it marked in red. Traces record memory
// per rank; the rows show it as the CLI reports it (core::ranks_in_scope):
// GPU memory per GPU, host and NVMe memory per machine (all ranks'), and
// say so. When comparing, the measured run's memory is drawn over the
// predicted as a black step line on the same scale. rows() gives the geometry painting
// uses, so hover readouts and tests find the same pixels.
#pragma once

#include <QPainter>
#include <QString>
#include <array>
#include <optional>
#include <vector>

#include "gui/byte_ticks.h"
#include "gui/time_axis.h"
#include "gui/trace_model.h"

namespace stowage::gui {

// A row shows its curve on an axis, or is collapsed to a thin strip (its
// name and a miniature curve); a click on a row's label toggles it.
enum class RowState : uint8_t { kExpanded, kCollapsed };
using RowStates = std::array<RowState, 3>;  // by core::Tier

// One tier's row as painted.
struct MemoryRow {
  core::Tier tier = core::Tier::kGpu;
  RowState state = RowState::kExpanded;
  QRectF row;   // the whole row, widget pixels
  QRectF plot;  // the curve's area: x on the time axis, y from 0 bytes (bottom) to scale.top
  ByteScale scale;
  core::Bytes peak;
  bool has_samples = true;    // false when the trace has no memory counter for the tier (peak 0 means nothing)
  core::Bytes measured_peak;  // of the measured run's line, when comparing
  std::optional<core::Bytes> capacity;
  bool capacity_on_scale = false;  // false when it is far above the peak (drawn as a note instead)
  int64_t per_rank_factor = 1;     // ranks in the row's scope: the trace's per-rank bytes times this
  [[nodiscard]] double y_of(core::Bytes b) const {
    return plot.bottom() - plot.height() * b.as_double() / std::max(1.0, scale.top.as_double());
  }
};

class MemoryPainter {
 public:
  static constexpr double kDefaultRowHeight = 84;  // pixels; the view's preferred height per tier
  static constexpr double kMinRowHeight = 44;
  static constexpr double kCollapsedRowHeight = 20;

  // `label_width` must match the timeline's, so the two axes line up.
  // `capacity` is per rank by tier, as in TraceModel::capacity.
  // `measured`, when not null, is drawn over `model` as a line.
  MemoryPainter(const TraceModel& model, const TimeAxis& axis, double label_width,
                const std::array<std::optional<core::Bytes>, 3>& capacity,
                const TraceModel* measured = nullptr);

  [[nodiscard]] const std::vector<core::Tier>& tiers() const { return tiers_; }  // the rows, top to bottom
  // Collapsed rows take kCollapsedRowHeight; the expanded share the rest.
  void set_row_states(const RowStates& states) { states_ = states; }
  // The preferred height of all rows: kDefaultRowHeight per expanded row.
  [[nodiscard]] double preferred_height() const;
  [[nodiscard]] std::vector<MemoryRow> rows(int width, int height) const;
  void paint(QPainter& painter, int width, int height) const;
  // What hovering (x, y) shows: the tier, the time, the bytes in use then
  // and the most held within that pixel; empty outside the plots.
  [[nodiscard]] QString readout(QPointF at, int width, int height) const;
  // "per GPU" for GPU memory, "per machine" for host and NVMe memory
  // ("per machine, 4 ranks" when there are several).
  [[nodiscard]] QString scope(core::Tier tier) const;
  // A row's label, a line each ("gpu memory", "per GPU", "peak 21.3 GB",
  // ...), before it is cut to the lines the row has room for.
  [[nodiscard]] QStringList label_lines(const MemoryRow& row) const;

 private:
  void paint_row(QPainter& painter, const MemoryRow& row) const;
  void paint_axis(QPainter& painter, const MemoryRow& row) const;
  void paint_capacity(QPainter& painter, const MemoryRow& row) const;
  void paint_label(QPainter& painter, const MemoryRow& row) const;
  void paint_measured(QPainter& painter, const MemoryRow& row) const;
  [[nodiscard]] int ranks() const;

  const TraceModel& model_;
  const TraceModel* measured_;
  const TimeAxis& axis_;
  double label_width_;
  std::array<std::optional<core::Bytes>, 3> capacity_;
  std::vector<core::Tier> tiers_;
  RowStates states_{};
};

}  // namespace stowage::gui
