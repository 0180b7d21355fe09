// The executor's 16-bit conversions (executor/model/half_convert.h) per
// instruction set, against a plain copy of the same bytes measured in the
// same run: the vector paths should run near the copy's rate (they are
// memory-bound), the scalar one is the reference the tests hold them to.
//   half_convert_bench --benchmark_repetitions=3
// Counters: elements/s, and `copy_ratio`, the conversion's time over a
// memcpy of its input and output bytes (1 = as fast as moving the bytes).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "executor/isa.h"
#include "executor/model/half_convert.h"

namespace {

using stowage::core::Precision;
using stowage::executor::Isa;
namespace model = stowage::executor::model;

constexpr size_t kElements = size_t{16} << 20;  // 64 MiB of fp32: beyond the caches

enum class Op { kNarrow, kWiden, kAccumulate };

// Seconds of copying `bytes` once, the best of three.
double copy_seconds(size_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes);
  double best = 1e30;
  for (int k = 0; k < 3; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::DoNotOptimize(b.data());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void BM_Convert(benchmark::State& state, Op op, Precision precision, Isa isa) {
  if (!stowage::executor::isa_supported(isa)) {
    state.SkipWithError("this CPU lacks the instruction set");
    return;
  }
  std::vector<float> f(kElements, 0.375f);
  std::vector<uint16_t> h(kElements, 0x3c00), h2(kElements, 0x3c00);
  // Bytes moved per element: 4 + 2 narrowing or widening, 2 + 2 read and
  // 2 written accumulating; a memcpy of n bytes reads n and writes n.
  constexpr size_t kBytesPerElement = 6;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    switch (op) {
      case Op::kNarrow: model::to_half(precision, f, h, isa); break;
      case Op::kWiden: model::from_half(precision, h, f, isa); break;
      case Op::kAccumulate: model::accumulate_half(precision, h2, h, isa); break;
    }
    benchmark::DoNotOptimize(f.data());
    benchmark::DoNotOptimize(h2.data());
  }
  const double per_pass = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                          static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kElements));
  state.counters["copy_ratio"] = per_pass / copy_seconds(kElements * kBytesPerElement / 2);
}

void register_all() {
  const std::pair<Op, const char*> ops[] = {{Op::kNarrow, "narrow"}, {Op::kWiden, "widen"}, {Op::kAccumulate, "accumulate"}};
  const std::pair<Precision, const char*> precisions[] = {{Precision::kBf16, "bf16"}, {Precision::kFp16, "fp16"}};
  const std::pair<Isa, const char*> isas[] = {{Isa::kScalar, "scalar"}, {Isa::kAvx2, "avx2"}, {Isa::kAvx512, "avx512"}};
  for (const auto& [op, op_name] : ops)
    for (const auto& [precision, precision_name] : precisions)
      for (const auto& [isa, isa_name] : isas)
        benchmark::RegisterBenchmark((std::string("BM_Convert/") + op_name + "/" + precision_name + "/" + isa_name).c_str(),
                                     BM_Convert, op, precision, isa)
            ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
