// The colours of the GUI. Op categories use the Okabe-Ito palette (Okabe &
// Ito 2008, "Color Universal Design"), which stays apart for the common
// colour-vision deficiencies; tiers use three colours of Paul Tol's muted
// scheme that are none of the op colours, so a memory row or a plan cell
// never reads as an op kind. Highlights are black or blue-grey, apart from
// every op colour: the critical path dims everything off it instead of
// outlining in a colour an op may have.
#pragma once

#include <QColor>

#include "core/tensor_class.h"
#include "gui/trace_model.h"

namespace stowage::gui {

[[nodiscard]] QColor color_of(OpCategory category);
[[nodiscard]] QColor color_of(core::Tier tier);
// A tier's colour faded for a table cell's background (dark text reads on it).
[[nodiscard]] QColor background_of(core::Tier tier);
// `color` faded toward white: ops off the critical path while it is shown.
[[nodiscard]] QColor dimmed(const QColor& color);
// Black or white, whichever reads better on `background`.
[[nodiscard]] QColor text_color_on(const QColor& background);
// Highlights drawn over ops.
[[nodiscard]] QColor selection_color();  // the selected op
[[nodiscard]] QColor waits_on_color();   // what it waits on
[[nodiscard]] QColor waited_by_color();  // what waits on it
[[nodiscard]] QColor critical_color();   // the outline of critical-path ops and their links
// Measured ops more than 10 % off their prediction (a strip on top).
[[nodiscard]] QColor slower_color();
[[nodiscard]] QColor faster_color();
// The ruler's step marks and steady-state window.
[[nodiscard]] QColor step_color();
[[nodiscard]] QColor steady_color();
// A tier's capacity line in the memory rows, and the measured run's memory
// drawn over the predicted.
[[nodiscard]] QColor capacity_color();
[[nodiscard]] QColor measured_color();

}  // namespace stowage::gui
