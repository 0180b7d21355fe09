// Turns one parsed profile document into its spec, reporting every problem
// at once. These read a single file; references between profiles (a machine
// naming its GPU) are resolved by ProfileCatalog.
#pragma once

#include <optional>
#include <string>

#include "core/cost_parameters.h"
#include "core/diagnostic.h"
#include "core/gpu_spec.h"
#include "core/host_spec.h"
#include "core/model_spec.h"
#include "core/nvme_spec.h"
#include "core/training_spec.h"

namespace stowage::core {

// `text` is the file's contents, `file` its name for diagnostics and `name`
// the profile name (the file name without .yaml).
Result<GpuSpec> read_gpu_profile(const std::string& text, const std::string& file, const std::string& name);
Result<NvmeSpec> read_nvme_profile(const std::string& text, const std::string& file, const std::string& name);
Result<HostSpec> read_host_profile(const std::string& text, const std::string& file, const std::string& name);
Result<ModelSpec> read_model_profile(const std::string& text, const std::string& file, const std::string& name);
Result<TrainingSpec> read_training_profile(const std::string& text, const std::string& file, const std::string& name);

// A machine file before its references are resolved. A part is named (a
// profile name to resolve) or given inline, a map with that profile kind's
// keys (`stowage profile` writes the machine it measured that way).
struct MachineReferences {
  std::string name, label, source;
  std::string gpu, host, nvme;  // profile names; nvme empty when nvme_count is 0 or inline
  std::optional<GpuSpec> gpu_inline;
  std::optional<HostSpec> host_inline;
  std::optional<NvmeSpec> nvme_inline;
  CostParameters calibration;  // defaults with the `calibration:` section applied
  int gpu_count = 0;
  int nvme_count = 0;
  SourceLocation gpu_at, host_at, nvme_at;  // where each reference is written
};
Result<MachineReferences> read_machine_profile(const std::string& text, const std::string& file,
                                               const std::string& name);

}  // namespace stowage::core
