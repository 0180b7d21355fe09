// libFuzzer target for the YAML loaders: any bytes, read as each kind of
// profile, must give a value or diagnostics, never a crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/plan_file.h"
#include "core/profile_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the reader so one corpus exercises all of them.
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace stowage::core;
  switch (data[0] % 7) {
    case 0: (void)read_gpu_profile(text, "fuzz.yaml", "fuzz"); break;
    case 1: (void)read_nvme_profile(text, "fuzz.yaml", "fuzz"); break;
    case 2: (void)read_host_profile(text, "fuzz.yaml", "fuzz"); break;
    case 3: (void)read_machine_profile(text, "fuzz.yaml", "fuzz"); break;
    case 4: (void)read_model_profile(text, "fuzz.yaml", "fuzz"); break;
    case 5: (void)read_training_profile(text, "fuzz.yaml", "fuzz"); break;
    default: (void)read_plan(text, "fuzz.yaml"); break;
  }
  return 0;
}
