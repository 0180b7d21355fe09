// The CLI's outputs are written by core/output_file.h (the GUI's screenshot
// and exports use the same rules); this keeps the CLI's names for them.
#pragma once

#include "core/output_file.h"

namespace stowage::cli {

using core::check_output_path;
using core::write_file_atomically;

}  // namespace stowage::cli
