// The text shown when hovering an op: its name, partition, tensor class,
// bytes or FLOPs, start, duration and achieved bandwidth or rate; and, when
// comparing, how the other timeline's run of the same op differs. GUI-free.
#pragma once

#include <optional>
#include <string>

#include "gui/trace_model.h"

namespace stowage::gui {

// Lines separated by '\n'.
[[nodiscard]] std::string op_tooltip(const TraceOp& op);

// "measured 1.2 ms (+12.5 %), starts 40 µs later"; `self` is the op hovered,
// `other` the same op in the other timeline, `other_source` names that one.
[[nodiscard]] std::string difference_line(const TraceOp& self, const TraceOp& other,
                                          const std::string& other_source);

// A merged run of ops: "37 ops, 12.1 ms busy of 15 ms".
[[nodiscard]] std::string run_tooltip(int count, SimTime busy, SimTime span);

}  // namespace stowage::gui
