// Which OpenBLAS kernels the trained models' matrix products run on.
// OpenBLAS picks its kernels for the CPU as the library loads (Debian builds
// it with DYNAMIC_ARCH); a CPU newer than the library gets its generic
// Prescott (SSE3) kernels: Debian 12's 0.3.21 does not know Intel's Emerald
// Rapids (family 6, model 207), where the 57M GPT's steps took 1.73 s on
// them against 0.66 s on the AVX-512 kernels (docs/fidelity.md, session
// 43). OPENBLAS_CORETYPE names the kernels to use instead; the library reads
// it only as it loads, so the command asks for them by starting itself again
// (restart_on_better_blas_kernels).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stowage::executor::model {

// The kernels OpenBLAS chose in this process ("SkylakeX", "Haswell", ...).
[[nodiscard]] std::string blas_kernels();

// The kernels to ask for where the library fell back to its generic ones on
// a CPU with wider vectors: "SkylakeX" with AVX-512 (F, BW, DQ, VL), "Haswell"
// with AVX2 and FMA. nullopt where the library's own choice stands: it knew
// the CPU, or the CPU has nothing wider.
[[nodiscard]] std::optional<std::string> blas_kernels_to_request(std::string_view chosen, bool avx512, bool avx2);

// Where blas_kernels_to_request names kernels for this process and CPU and
// OPENBLAS_CORETYPE is unset (set, it is the user's choice or the request
// already made), sets it to them and starts this program again with `argv`
// (exec keeps the pid); returns only where there is nothing to ask for or
// exec failed, when the program runs on the library's own choice. Called
// first thing in main() by the command and by the tests that compare its
// processes' results with their own.
void restart_on_better_blas_kernels(char** argv);

}  // namespace stowage::executor::model
