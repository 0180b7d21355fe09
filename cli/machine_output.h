// Where `stowage profile` and `stowage calibrate` write a machine profile:
// checked before any work (cli/output_file.h), and never over a file that
// Stowage did not write (one whose first line is not
// `format: stowage/machine/v1`).
#pragma once

#include <string>

#include "core/diagnostic.h"

namespace stowage::cli {

// Empty when `path` can take a machine profile.
[[nodiscard]] core::Diagnostics check_machine_output(const std::string& path);

// `profile` (a machine profile's text) with its top-level `calibration:`
// section, if any, replaced by `section` (the lines under the key).
[[nodiscard]] std::string with_calibration(const std::string& profile, const std::string& section);

}  // namespace stowage::cli
