#include "gui/file_loader.h"

#include "gui/planner_job.h"
#include "gui/trace_loader.h"

namespace stowage::gui {

FileKind kind_of(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml" ? FileKind::kPlan : FileKind::kTrace;
}

core::Result<LoadedFile> load_file(const std::filesystem::path& path, const core::ProfileCatalog& catalog) {
  LoadedFile out{.path = path, .kind = kind_of(path)};
  if (out.kind == FileKind::kPlan) {
    auto plan = core::load_plan(path, catalog.root());
    if (!plan) return std::unexpected(plan.error());
    // A plan names its machine; without that profile the memory view just
    // shows no capacity lines, which is no reason to refuse the plan.
    if (auto machine = catalog.machine(plan->machine)) out.capacity = capacity_of(*machine);
    out.plan = std::move(*plan);
    return out;
  }
  auto trace = load_trace(path);
  if (!trace) return std::unexpected(trace.error());
  out.timeline = prepare_document(std::move(*trace));
  return out;
}

}  // namespace stowage::gui
