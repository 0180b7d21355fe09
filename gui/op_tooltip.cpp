#include "gui/op_tooltip.h"

#include <cmath>
#include <cstdio>

#include "gui/ruler_ticks.h"

namespace stowage::gui {
namespace {

bool is_transfer(core::Lane lane) {
  return lane != core::Lane::kGpuCompute && lane != core::Lane::kCpuOptim;
}

std::string percent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f %%", ratio * 100);
  return text;
}

// Achieved bandwidth or FLOP rate, as the trace's bytes_per_s / flops_per_s.
std::string rate_line(const TraceOp& op) {
  if (op.duration() <= 0) return {};
  const core::Seconds took(static_cast<double>(op.duration()) * 1e-9);
  if (is_transfer(op.lane)) {
    if (op.bytes.count() <= 0) return {};
    return "bandwidth: " + core::format_bandwidth(op.bytes / took);
  }
  if (op.flops.count() <= 0) return {};
  return "rate: " + core::format_flops_rate(op.flops / took);
}

// "tensor class: param16", or "tensor classes: master32 + adam_m + adam_v
// (1.27 GB each)" when the op moves equal parts of several.
std::string classes_line(const TraceOp& op) {
  const std::vector<core::TensorClass> classes = tensor_classes_moved(op);
  if (classes.empty()) return {};
  if (classes.size() == 1) return "tensor class: " + std::string(core::to_string(classes.front())) + "\n";
  std::string text = "tensor classes: ";
  for (size_t i = 0; i < classes.size(); ++i)
    text += (i ? " + " : "") + std::string(core::to_string(classes[i]));
  const auto parts = static_cast<int64_t>(classes.size());
  return text + " (" + core::format_bytes(op.bytes / parts) + " each)\n";
}

}  // namespace

std::vector<core::TensorClass> tensor_classes_moved(const TraceOp& op) {
  using core::TensorClass;
  if (op.kind == core::OpKind::kReadStates || op.kind == core::OpKind::kWriteStates)
    return {TensorClass::kMaster32, TensorClass::kAdamM, TensorClass::kAdamV};
  if (op.tensor_class) return {*op.tensor_class};
  return {};
}

std::string op_tooltip(const TraceOp& op, std::string_view name) {
  std::string text = std::string(name) + "\n";
  text += std::string(core::to_string(op.kind)) + " on " + std::string(core::to_string(op.lane)) + "\n";
  text +=
      "partition: " + (op.partition >= 0 ? std::to_string(op.partition) : std::string("whole layer")) + "\n";
  text += classes_line(op);
  if (is_transfer(op.lane) || op.flops.count() <= 0) {
    text += "bytes: " + core::format_bytes(op.bytes) + "\n";
  } else {
    text += "FLOPs: " + core::format_flops(op.flops) + "\n";
  }
  text += "start: " + format_time(op.start) + "\n";
  text += "duration: " + format_time(op.duration());
  if (const std::string rate = rate_line(op); !rate.empty()) text += "\n" + rate;
  return text;
}

std::string difference_line(const TraceOp& self, const TraceOp& other, const std::string& other_source) {
  std::string text = other_source + ": " + format_time(other.duration());
  if (self.duration() > 0) {
    text += " (" +
            percent(static_cast<double>(other.duration() - self.duration()) /
                    static_cast<double>(self.duration())) +
            ")";
  }
  const SimTime shift = other.start - self.start;
  text += ", starts " + format_time(std::abs(shift)) + (shift >= 0 ? " later" : " earlier");
  return text;
}

std::string run_tooltip(int count, SimTime busy, SimTime begin, SimTime end) {
  return std::to_string(count) + " ops merged: " + format_time(busy) + " busy in [" + format_time(begin) +
         ", " + format_time(end) + "]\nzoom in to see them one by one";
}

}  // namespace stowage::gui
