// Opening a file the GUI was given (File menu, command line, drop): a plan
// (.yaml, .yml) or a trace (anything else, normally .json). GUI-free, so the
// main window runs it on a worker thread; errors are the loaders' own
// diagnostics, naming the file and, for syntax errors, line and column.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>

#include "core/diagnostic.h"
#include "core/plan_file.h"
#include "core/profile_catalog.h"
#include "gui/timeline_document.h"

namespace stowage::gui {

enum class FileKind { kPlan, kTrace };
[[nodiscard]] FileKind kind_of(const std::filesystem::path& path);

struct LoadedFile {
  std::filesystem::path path;
  FileKind kind = FileKind::kTrace;
  std::optional<core::PlanFile> plan;                  // for a plan
  std::array<std::optional<core::Bytes>, 3> capacity;  // for a plan whose machine profile loads: per rank
  std::shared_ptr<const TimelineDocument> timeline;    // for a trace, LOD built
};

[[nodiscard]] core::Result<LoadedFile> load_file(const std::filesystem::path& path,
                                                 const core::ProfileCatalog& catalog);

}  // namespace stowage::gui
