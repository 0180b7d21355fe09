// Finds and loads profiles: bundled ones by name from a profiles/ folder,
// or any file by path. Resolves a machine's references to its GPU, host and
// NVMe profiles, reporting a missing one at the line that names it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/machine_spec.h"
#include "core/model_spec.h"
#include "core/profile_kind.h"
#include "core/text_file.h"  // read_text_file, declared here before
#include "core/training_spec.h"

namespace stowage::core {

class ProfileCatalog {
 public:
  explicit ProfileCatalog(std::filesystem::path root);

  // $STOWAGE_PROFILES if set, else the source tree's profiles/ folder this
  // build was configured with.
  [[nodiscard]] static std::filesystem::path default_root();

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }

  // Profile names of a kind, sorted.
  [[nodiscard]] std::vector<std::string> names(ProfileKind kind) const;

  // `name_or_path` is a bundled profile name ("a100-80gb") or a path to a
  // YAML file (it contains '/' or ends in .yaml). An unknown name gives a
  // diagnostic with the nearest bundled name and the list of known ones.
  [[nodiscard]] Result<std::filesystem::path> locate(ProfileKind kind, std::string_view name_or_path) const;

  Result<GpuSpec> gpu(std::string_view name_or_path) const;
  // The bundled GPU profile whose device_names include `device_name` (the
  // CUDA driver's name of a GPU), or nullopt where none does. A profile
  // that does not load is passed over.
  [[nodiscard]] std::optional<GpuSpec> gpu_for_device(std::string_view device_name) const;
  Result<NvmeSpec> nvme(std::string_view name_or_path) const;
  Result<HostSpec> host(std::string_view name_or_path) const;
  Result<MachineSpec> machine(std::string_view name_or_path) const;
  Result<ModelSpec> model(std::string_view name_or_path) const;
  Result<TrainingSpec> training(std::string_view name_or_path) const;

 private:
  std::filesystem::path root_;
};

}  // namespace stowage::core
