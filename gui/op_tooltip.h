// The text shown when hovering an op: its name, partition, tensor class,
// bytes or FLOPs, start, duration and achieved bandwidth or rate; and, when
// comparing, how the other timeline's run of the same op differs. GUI-free.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gui/trace_model.h"

namespace stowage::gui {

// The tensor classes a transfer moves. A trace names one per op; the op's
// kind says when it moves more: reading or writing optimizer states moves
// master32, adam_m and adam_v of its partition together (core/schedule.h,
// OpKind::kReadStates), 4 bytes per parameter each.
[[nodiscard]] std::vector<core::TensorClass> tensor_classes_moved(const TraceOp& op);

// Lines separated by '\n'; `name` is the op's name (TraceModel::text(op.name)).
[[nodiscard]] std::string op_tooltip(const TraceOp& op, std::string_view name);

// "measured 1.2 ms (+12.5 %), starts 40 µs later"; `self` is the op hovered,
// `other` the same op in the other timeline, `other_source` names that one.
[[nodiscard]] std::string difference_line(const TraceOp& self, const TraceOp& other,
                                          const std::string& other_source);

// A run of ops merged at this zoom: "37 ops merged: 12.3 ms busy in
// [1.2 s, 1.25 s]", and a hint to zoom in.
[[nodiscard]] std::string run_tooltip(int count, SimTime busy, SimTime begin, SimTime end);

}  // namespace stowage::gui
