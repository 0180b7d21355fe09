// CPU Adam throughput against memory bandwidth (issue 5, item 11): parameters
// per second of adam_step over 64 Mi parameters on all cores, and the bound
// that a STREAM-like triad, measured in the same run on arrays of the same
// length, puts on it. Goal: fraction_of_bound >= 0.8.
//
// Bytes per parameter the update must move, counted as STREAM counts (each
// array read or written once; the write-allocate read a cache-missing store
// causes is not counted):
//   master fp32 read + write   8
//   m      fp32 read + write   8
//   v      fp32 read + write   8
//   grad   fp32 read           4
//   param16     write          2
//                             30 B   (kAdamBytes)
// The triad a[i] = b[i] + s * c[i] on fp32 arrays moves 12 B per element
// (kTriadBytes) the same way. bound = triad bandwidth / 30 B.
//
// The triad is run with ordinary and with non-temporal (streaming) stores and
// the faster counts, as STREAM built with streaming stores reports: ordinary
// stores first read the line they overwrite, 16 B of real traffic for 12
// counted. Adam's param16 stores do the same (32 B real for 30 counted), so
// the fraction is, if anything, understated by 2/32.
//
// Few cores cannot always saturate memory: one core's bandwidth is capped by
// the misses it can keep in flight, and a kernel with more streams (Adam has
// five) gets more of them than a triad (three). There, fraction_of_bound can
// exceed 1 and says the bound is not one. Run: build/<preset>/bench/executor/cpu_adam_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "executor/cpu_adam.h"

namespace {

using namespace stowage;

constexpr size_t kParams = size_t{64} << 20;  // 64 Mi: 1.1 GiB of Adam state, far past any cache
constexpr double kAdamBytes = 30;
constexpr double kTriadBytes = 12;
constexpr int kTriadRepeats = 3;  // the best of a few, as STREAM reports

int all_cores() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Runs fn(begin, end) over [0, n) in `threads` contiguous pieces at once,
// each starting on a 64-element (256 B) boundary.
void parallel_chunks(size_t n, int threads, const std::function<void(size_t, size_t)>& fn) {
  const size_t per = ((n + threads - 1) / static_cast<size_t>(threads) + 63) / 64 * 64;
  std::vector<std::jthread> workers;
  for (size_t begin = 0; begin < n; begin += per) workers.emplace_back(fn, begin, std::min(n, begin + per));
}

// Page-aligned (2 MiB, so transparent huge pages can back it), first
// touched by the threads that will use it.
template <typename T>
struct Array {
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data;
  explicit Array(size_t n, T fill) {
    constexpr size_t kAlign = size_t{2} << 20;
    const size_t bytes = (n * sizeof(T) + kAlign - 1) / kAlign * kAlign;
    data.reset(static_cast<T*>(std::aligned_alloc(kAlign, bytes)));
    if (!data) throw std::bad_alloc();
    parallel_chunks(n, all_cores(),
                    [&](size_t b, size_t e) { std::fill(data.get() + b, data.get() + e, fill); });
  }
  std::span<T> span(size_t n) const { return {data.get(), n}; }
};

enum class Stores { kOrdinary, kStreaming };

#if defined(__x86_64__)
// `a` is 32-byte aligned (parallel_chunks' boundaries on 2 MiB-aligned arrays).
__attribute__((target("avx2,fma"))) void triad_avx2(float* a, const float* b, const float* c, float s,
                                                    size_t n, Stores stores) {
  const __m256 scalar = _mm256_set1_ps(s);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 r = _mm256_fmadd_ps(scalar, _mm256_loadu_ps(c + i), _mm256_loadu_ps(b + i));
    if (stores == Stores::kStreaming)
      _mm256_stream_ps(a + i, r);
    else
      _mm256_store_ps(a + i, r);
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
  _mm_sfence();
}
#endif

void triad_range(float* a, const float* b, const float* c, float s, size_t n, Stores stores) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return triad_avx2(a, b, c, s, n, stores);
#endif
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

struct TriadArrays {
  Array<float> a{kParams, 0.0f}, b{kParams, 1.0f}, c{kParams, 2.0f};
};

void triad(TriadArrays& t, int threads, Stores stores) {
  parallel_chunks(kParams, threads, [&](size_t b, size_t e) {
    triad_range(t.a.data.get() + b, t.b.data.get() + b, t.c.data.get() + b, 3.0f, e - b, stores);
  });
  benchmark::DoNotOptimize(t.a.data.get()[kParams / 2]);
}

// Triad bandwidth in bytes per second, STREAM's count: the best of
// kTriadRepeats runs with each kind of store.
double triad_bandwidth(TriadArrays& t, int threads) {
  double best = 0;
  for (const Stores stores : {Stores::kOrdinary, Stores::kStreaming}) {
    for (int r = 0; r < kTriadRepeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      triad(t, threads, stores);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      best = std::max(best, kTriadBytes * static_cast<double>(kParams) / took.count());
    }
  }
  return best;
}

struct AdamArrays {
  Array<float> master{kParams, 0.01f}, grad{kParams, 1e-3f}, m{kParams, 0.0f}, v{kParams, 0.0f};
  Array<uint16_t> param16{kParams, 0};
};

// One set of arrays for the whole run: 1.9 GiB, allocated and touched once.
TriadArrays& triad_arrays() {
  static TriadArrays t;
  return t;
}
AdamArrays& adam_arrays() {
  static AdamArrays a;
  return a;
}

// The triad alone; bytes_per_second is STREAM's count.
void BM_Triad(benchmark::State& state, Stores stores) {
  TriadArrays& t = triad_arrays();
  const int threads = all_cores();
  for (auto _ : state) triad(t, threads, stores);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kTriadBytes * kParams));
  state.counters["threads"] = threads;
}
BENCHMARK_CAPTURE(BM_Triad, ordinary_stores, Stores::kOrdinary)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_Triad, streaming_stores, Stores::kStreaming)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);

void BM_AdamStep(benchmark::State& state, executor::Isa isa, core::Precision precision) {
  if (!executor::isa_supported(isa)) {
    state.SkipWithError(("this CPU lacks " + std::string(executor::isa_name(isa))).c_str());
    return;
  }
  const int threads = all_cores();
  const double triad = triad_bandwidth(triad_arrays(), threads);  // same run, just before
  AdamArrays& a = adam_arrays();
  const executor::AdamHyper hyper{.config = {.learning_rate = 1e-3, .weight_decay = 1e-2},
                                  .optimizer = core::OptimizerKind::kAdamW};
  int64_t step = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    executor::adam_step(a.master.span(kParams), a.grad.span(kParams), a.m.span(kParams), a.v.span(kParams),
                        a.param16.span(kParams), precision, hyper, ++step, 1,
                        {.threads = threads, .isa = isa});
    benchmark::ClobberMemory();
  }
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  const double params_per_second = static_cast<double>(state.iterations()) * kParams / elapsed.count();
  const double bound = triad / kAdamBytes;
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kParams));
  state.counters["params_per_second"] = params_per_second;
  state.counters["triad_GBps"] = triad / 1e9;
  state.counters["bound_params_per_second"] = bound;
  state.counters["fraction_of_bound"] = params_per_second / bound;
  state.counters["threads"] = threads;
}

BENCHMARK_CAPTURE(BM_AdamStep, avx512_bf16, executor::Isa::kAvx512, core::Precision::kBf16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_AdamStep, avx512_fp16, executor::Isa::kAvx512, core::Precision::kFp16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_AdamStep, avx2_bf16, executor::Isa::kAvx2, core::Precision::kBf16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_AdamStep, scalar_bf16, executor::Isa::kScalar, core::Precision::kBf16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
