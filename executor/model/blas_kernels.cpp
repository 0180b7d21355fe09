#include "executor/model/blas_kernels.h"

#include <cblas.h>
#include <unistd.h>

#include <cstdlib>

#include "executor/isa.h"

namespace stowage::executor::model {

std::string blas_kernels() {
  const char* name = openblas_get_corename();
  return name != nullptr ? name : "unknown";
}

std::optional<std::string> blas_kernels_to_request(std::string_view chosen, bool avx512, bool avx2) {
  // OpenBLAS's x86-64 fallback for a CPU it does not recognise (driver/others/dynamic.c).
  if (chosen != "Prescott") return std::nullopt;
  if (avx512) return "SkylakeX";
  if (avx2) return "Haswell";
  return std::nullopt;
}

void restart_on_better_blas_kernels(char** argv) {
#if defined(__x86_64__)
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  const std::optional<std::string> kernels =
      blas_kernels_to_request(blas_kernels(), avx512, isa_supported(Isa::kAvx2));
  if (!kernels || setenv("OPENBLAS_CORETYPE", kernels->c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
#else
  (void)argv;
#endif
}

}  // namespace stowage::executor::model
