// Reads a machine profile's `calibration:` section into CostParameters and
// writes one back: every key optional, absent keys keep the compiled
// default (core/cost_parameters.h). docs/formats/profiles.md lists the keys.
#pragma once

#include <string>

#include "core/cost_parameters.h"
#include "core/yaml_reader.h"

namespace stowage::core {

// Sets the fields `section` gives, reporting bad values and unknown keys
// (finish() is called here).
void read_calibration(YamlMap& section, CostParameters& params);

// The `calibration:` section for `params`, every key written, indented by
// two spaces, ending in a newline; read_calibration reads it back to the
// same values (durations in ns, rates in B/s and FLOP/s, full precision).
[[nodiscard]] std::string calibration_yaml(const CostParameters& params);

}  // namespace stowage::core
