#include "cli/machine_output.h"

#include <filesystem>
#include <sstream>

#include "cli/output_file.h"
#include "core/text_file.h"

namespace stowage::cli {

core::Diagnostics check_machine_output(const std::string& path) {
  if (auto checked = check_output_path(path); !checked) return checked.error();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  auto text = core::read_input_file(path, core::InputKind::kProfile);
  if (text && text->starts_with("format: stowage/machine/v1")) return {};
  return {{{path, 1, 1}, "exists and is not a machine profile Stowage wrote; left as it is",
           "a new file's name, or a profile an earlier `stowage profile` or `stowage calibrate` wrote"}};
}

std::string with_calibration(const std::string& profile, const std::string& section) {
  std::istringstream in(profile);
  std::string out, line;
  bool inside = false;
  while (std::getline(in, line)) {
    const bool top_level = !line.empty() && line[0] != ' ' && line[0] != '#' && line[0] != '\t';
    if (top_level) inside = line.starts_with("calibration:");
    if (!inside) out += line + "\n";
  }
  return out + "calibration:\n" + section;
}

}  // namespace stowage::cli
