// The colours of the GUI: one per op category (the timeline legend) and
// one per tier (memory view and plan table), chosen to stay apart for
// colour-blind readers (Tableau 10).
#pragma once

#include <QColor>

#include "core/tensor_class.h"
#include "gui/trace_model.h"

namespace stowage::gui {

[[nodiscard]] QColor color_of(OpCategory category);
[[nodiscard]] QColor color_of(core::Tier tier);
// Highlights drawn over ops.
[[nodiscard]] QColor selection_color();  // the selected op
[[nodiscard]] QColor waits_on_color();   // what it waits on
[[nodiscard]] QColor waited_by_color();  // what waits on it
[[nodiscard]] QColor critical_color();   // the critical path
// Measured ops more than 10 % off their prediction (a strip on top).
[[nodiscard]] QColor slower_color();
[[nodiscard]] QColor faster_color();

}  // namespace stowage::gui
