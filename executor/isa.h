// The vector instruction sets the executor's element-wise kernels (the CPU
// optimizer, the fp32 <-> 16-bit conversions) choose among at run time.
// The build targets baseline x86-64, so wider paths are compiled with
// per-function target attributes and taken only where this CPU has them.
#pragma once

#include <string_view>

namespace stowage::executor {

// kAuto takes the widest one this CPU supports. Every kernel gives the same
// bits on each of them.
enum class Isa { kAuto, kScalar, kAvx2, kAvx512 };

// Whether this CPU (and OS) can run `isa`. kAuto and kScalar: always.
// kAvx2 means AVX2 with FMA and F16C; kAvx512 means AVX-512F.
[[nodiscard]] bool isa_supported(Isa isa);

// kAuto resolved: kAvx512 if supported, else kAvx2, else kScalar.
[[nodiscard]] Isa best_isa();

[[nodiscard]] std::string_view isa_name(Isa isa);  // "auto", "scalar", "avx2", "avx512"

}  // namespace stowage::executor
