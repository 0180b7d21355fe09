// Who runs a plan: Stowage's own executor, which runs any policy, or
// DeepSpeed, directly or through Accelerate, which runs only what DeepSpeed
// expresses (planner/deepspeed_target.h). `stowage plan --target` and
// `stowage export` take these names.
#pragma once

#include <optional>
#include <string_view>

namespace stowage::planner {

enum class Target { kStowage, kDeepSpeed, kAccelerate };

[[nodiscard]] std::string_view to_string(Target target);  // "stowage", "deepspeed", "accelerate"
[[nodiscard]] std::optional<Target> target_named(std::string_view name);

}  // namespace stowage::planner
