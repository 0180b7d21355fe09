// The --placement option of `memory` and `simulate`: a placement by name
// (core::placement_named: the standard three and every DeepSpeed ZeRO
// placement, with an optional partial-offload ratio), or one of `extra`
// ("all", "deepspeed" for `memory`).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace stowage::cli {

[[nodiscard]] CLI::Validator placement_validator(std::vector<std::string> extra = {});

}  // namespace stowage::cli
