// A machine as a self-contained machine profile (`format:
// stowage/machine/v1`) with its GPU, host and drive written inline, so a
// machine that exists in no profile folder (one `stowage whatif` changed)
// can be saved beside a plan and read back by any command. Figures are
// written in base units at full precision: reading the text back
// (ProfileCatalog::machine) gives the same machine.
#pragma once

#include <string>

#include "core/machine_spec.h"

namespace stowage::core {

[[nodiscard]] std::string write_machine_profile(const MachineSpec& machine);

// `text` as a YAML double-quoted scalar, which reads back as itself
// whatever it holds (a GPU's label, a driver's device name).
[[nodiscard]] std::string yaml_quoted(const std::string& text);

}  // namespace stowage::core
