#include "planner/profile_inputs.h"

#include <utility>

#include "core/yaml_reader.h"
#include "planner/sustained_write.h"

namespace stowage::planner {
namespace {

// Where the training profile says `precision`, for the message; the file
// alone when it cannot be found again.
core::SourceLocation precision_location(const core::ProfileCatalog& catalog, const std::string& training) {
  auto path = catalog.locate(core::ProfileKind::kTraining, training);
  if (!path) return {};
  auto root = core::load_yaml_file(path->string());
  if (!root) return {path->string(), 0, 0};
  core::Diagnostics ignored;
  return core::YamlMap(*root, path->string(), ignored).location_of("precision");
}

// A bundled training profile in fp16 to name as the fix, if there is one.
std::string fp16_training(const core::ProfileCatalog& catalog) {
  for (const std::string& name : catalog.names(core::ProfileKind::kTraining)) {
    auto t = catalog.training(name);
    if (t && t->precision == core::Precision::kFp16) return name;
  }
  return "";
}

// Drive suggested when a machine has none: the bundled 4 TB 990 PRO.
constexpr const char* kSpareDrive = "samsung-990-pro-4tb";

// The drive to suggest from `catalog`: kSpareDrive where the folder has it
// (a folder given with --profiles may not), else its largest drive (by
// capacity, then name). Drives that fail to load are not suggested; a
// folder without drives suggests none.
std::optional<core::NvmeSpec> spare_drive(const core::ProfileCatalog& catalog) {
  if (auto preferred = catalog.nvme(kSpareDrive)) return *preferred;
  std::optional<core::NvmeSpec> best;
  for (const std::string& name : catalog.names(core::ProfileKind::kNvme)) {
    auto drive = catalog.nvme(name);
    if (drive && (!best || drive->capacity > best->capacity)) best = *drive;
  }
  return best;
}

}  // namespace

std::optional<core::Diagnostic> unsupported_precision(const core::ProfileCatalog& catalog,
                                                      const ProfileInputs& in) {
  if (in.training.precision != core::Precision::kBf16 || in.machine.gpu.bf16_rate) return std::nullopt;
  const std::string fp16 = fp16_training(catalog);
  return core::Diagnostic{
      precision_location(catalog, in.training_name),
      "precision: training '" + in.training_name + "' is bf16, which " + in.machine.gpu.label + " (in " +
          in.machine_name + ") cannot run",
      fp16.empty() ? "a training profile with precision: fp16" : "fp16 training: --training " + fp16};
}

core::Result<ProfileInputs> load_inputs(const core::ProfileCatalog& catalog, const std::string& machine,
                                        const std::string& model, const std::string& training,
                                        const core::PlanPlaces* plan) {
  auto m = catalog.machine(machine);
  auto x = catalog.model(model);
  auto t = catalog.training(training);
  core::Diagnostics problems;
  for (auto [d, field] : {std::pair{m ? nullptr : &m.error(), "machine"}, std::pair{x ? nullptr : &x.error(), "model"},
                          std::pair{t ? nullptr : &t.error(), "training"}}) {
    if (d == nullptr) continue;
    if (plan != nullptr) core::locate_reference_problems(*d, field, *plan);
    problems.insert(problems.end(), d->begin(), d->end());
  }
  if (!problems.empty()) return std::unexpected(problems);
  ProfileInputs in{*m, *x, *t, machine, model, training, std::nullopt};
  if (auto refused = unsupported_precision(catalog, in)) return core::fail(std::move(*refused));
  in.assumed_nvme_write = assume_sustained_write(in.machine);
  return in;
}

core::Result<PlanInputs> load_plan_inputs(const core::ProfileCatalog& catalog, const std::string& machine,
                                          const std::string& model, const std::string& training,
                                          const core::PlanPlaces* plan) {
  auto inputs = load_inputs(catalog, machine, model, training, plan);
  if (!inputs) return std::unexpected(inputs.error());
  return PlanInputs{{std::move(*inputs)}, spare_drive(catalog)};
}

}  // namespace stowage::planner
