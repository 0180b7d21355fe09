#include "gui/axis_state.h"

namespace stowage::gui {

void AxisState::update(const std::function<void(TimeAxis&)>& change) {
  change(axis_);
  emit changed();
}

}  // namespace stowage::gui
