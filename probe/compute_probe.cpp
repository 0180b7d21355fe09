// The CPU backend's compute: the executor's own Linear forward and backward
// (OpenBLAS sgemm, one BLAS thread as the trained models use) at the
// shapes of transformer layers, and the fixed cost of a tiny op.
#include <vector>

#include "executor/model/linear.h"
#include "probe/probes.h"

namespace stowage::probe {
namespace {

std::vector<GemmRate> shapes(Depth d) {
  // rows = micro_batch x sequence (8 x 128); in x out: attention projection
  // and MLP of d_model 256 (tiny-gpt) and 768 (GPT-2 small).
  if (d == Depth::kQuick) return {{.rows = 1024, .in = 256, .out = 1024}, {.rows = 512, .in = 768, .out = 768}};
  return {{.rows = 1024, .in = 256, .out = 256},  {.rows = 1024, .in = 256, .out = 1024},
          {.rows = 512, .in = 768, .out = 768},   {.rows = 512, .in = 768, .out = 3072},
          {.rows = 1024, .in = 768, .out = 3072}, {.rows = 256, .in = 1024, .out = 4096}};
}

}  // namespace

int compute_probe_steps(const ProbeOptions& o) { return static_cast<int>(shapes(o.depth).size()) + 1; }

void probe_compute(const ProbeOptions& o, Measurements& m, const Tick& tick) {
  executor::model::set_blas_threads(1);
  const int repeats = o.depth == Depth::kQuick ? 2 : 3;
  for (GemmRate g : shapes(o.depth)) {
    const auto r = static_cast<size_t>(g.rows), i = static_cast<size_t>(g.in), n = static_cast<size_t>(g.out);
    std::vector<float> x(r * i, 0.01f), w(n * i, 0.02f), b(n, 0.0f), y(r * n), dy(r * n, 0.001f), dx(r * i), dw(n * i),
        db(n);
    const executor::model::LinearShape s{.rows = g.rows, .in = g.in, .out = g.out};
    // A forward and a backward: 2 + 4 products of rows x in x out.
    const double sec = best_seconds(repeats, [&] {
      executor::model::linear_forward(x.data(), w.data(), b.data(), y.data(), s);
      executor::model::linear_backward(x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(), s);
    });
    g.rate = 6.0 * static_cast<double>(g.rows * g.in * g.out) / sec;
    m.gemm.push_back(g);
    tick("compute (sgemm by shape)");
  }
  std::vector<float> x(64, 1.0f), w(64 * 64, 0.5f), y(64);
  const executor::model::LinearShape tiny{.rows = 1, .in = 64, .out = 64};
  m.small_gemm_seconds = best_seconds(100, [&] { executor::model::linear_forward(x.data(), w.data(), nullptr, y.data(), tiny); });
  tick("compute (a tiny op)");
}

}  // namespace stowage::probe
