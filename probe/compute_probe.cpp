// The CPU backend's compute: the executor's own Linear forward and backward
// (OpenBLAS sgemm, one BLAS thread as the trained models use) at the
// shapes of transformer layers, the executor's own GPT block forward and
// backward (executor/model/gpt_model.h) at the shapes it trains, and the
// fixed cost of a tiny op.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/workload.h"
#include "executor/model/blas_kernels.h"
#include "executor/model/gpt_model.h"
#include "executor/model/half_convert.h"
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

// A GPT-2 block (heads of 64, MLP 4x wide) at one micro-batch.
struct BlockCase {
  int64_t d_model = 0;
  int64_t batch = 0, seq = 0;
};

// The blocks a layer's forward and backward op runs: the bundled models the
// CPU backend trains, at their trainings' micro-batches (tiny-gpt with
// `tiny`: d_model 256, 8 x 128 tokens; fidelity-gpt-57m with `fidelity`:
// 768, 2 x 64), and GPT-2 small's width at 8 x 128 for larger ops. A
// block's attention, norms and GELU take a larger share of a small op than
// of a large one, so the rate grows with the op: the curve the simulator
// interpolates (core/compute_rate.h).
std::vector<BlockCase> blocks(Depth d) {
  if (d == Depth::kQuick) return {{256, 8, 128}, {768, 2, 64}};
  return {{256, 8, 128}, {768, 2, 64}, {768, 8, 128}};
}

core::ModelSpec block_spec(int64_t d_model) {
  return {.name = "probe-block", .d_model = d_model, .layers = 1, .heads = d_model / 64, .kv_heads = d_model / 64,
          .head_dim = 64, .ffn = 4 * d_model, .vocab = 256, .max_positions = 256};
}

// Times one block's forward and backward as the executor's layer op runs
// them (Interpreter::State::compute): the pass first widens the layer's
// 16-bit parameters to fp32, and a backward zeroes its fp32 gradients and
// narrows them to 16 bits after: streaming passes over the parameters that,
// on AVX-512 sgemm at GPT-2 small's width and 128 tokens, take a sixth of
// a forward and a quarter of a backward (docs/fidelity.md, session 43).
void probe_block(const BlockCase& b, int repeats, Measurements& m) {
  const core::Workload workload(block_spec(b.d_model), b.seq);
  core::Result<executor::model::GptModel> created = executor::model::GptModel::create(workload);
  if (!created) throw std::logic_error("the probe's GPT block: " + core::to_string(created.error()));  // a bug
  const executor::model::GptModel& model = *created;
  const executor::model::MicroBatch mb{.batch = b.batch, .seq = b.seq};
  const auto width = static_cast<size_t>(mb.tokens() * b.d_model);
  std::vector<float> params(static_cast<size_t>(model.layer_param_count(1))), grads(params.size(), 0.0f);
  model.init_parameters(1, params, 1);
  std::vector<float> in(width), out(width), d(width, 1e-3f);
  for (size_t i = 0; i < width; ++i) in[i] = 0.01f * static_cast<float>(i % 97) - 0.5f;
  const core::Precision precision = core::Precision::kBf16;
  std::vector<uint16_t> params16(params.size()), grads16(params.size());
  executor::model::to_half(precision, params, params16);
  executor::model::BlockSaved saved;
  const double forward = best_seconds(repeats, [&] {
    executor::model::from_half(precision, params16, params);
    model.block_forward(params, in, mb, saved, out);
  });
  const double backward = best_seconds(repeats, [&] {
    std::fill(d.begin(), d.end(), 1e-3f);
    executor::model::from_half(precision, params16, params);
    std::fill(grads.begin(), grads.end(), 0.0f);
    model.block_backward(params, in, saved, d, d, grads);
    executor::model::to_half(precision, grads, grads16);
  });
  const double flops = workload.layers()[1].forward_flops_per_token.count() * static_cast<double>(mb.tokens());
  // Counted as the schedule counts a backward, so that the rate applies to
  // the FLOPs its ops carry.
  const double backward_flops = flops * core::kBackwardFlopsPerForwardFlop;
  const std::string shape =
      " d_model " + std::to_string(b.d_model) + ", " + std::to_string(mb.tokens()) + " tokens";
  m.block_ops.push_back({.what = "forward" + shape, .flops = flops, .rate = flops / forward});
  m.block_ops.push_back({.what = "backward" + shape, .flops = backward_flops, .rate = backward_flops / backward});
}

}  // namespace

int compute_probe_steps(const ProbeOptions& o) {
  if (!o.cpu_device) return 0;
  return static_cast<int>(shapes(o.depth).size() + blocks(o.depth).size()) + 1;
}

void probe_compute(const ProbeOptions& o, Measurements& m, const Tick& tick) {
  if (!o.cpu_device) return;
  executor::model::set_blas_threads(1);
  m.blas_kernels = executor::model::blas_kernels();
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
  for (const BlockCase& b : blocks(o.depth)) {
    probe_block(b, repeats, m);
    tick("compute (GPT block forward and backward)");
  }
  std::vector<float> x(64, 1.0f), w(64 * 64, 0.5f), y(64);
  const executor::model::LinearShape tiny{.rows = 1, .in = 64, .out = 64};
  m.small_gemm_seconds = best_seconds(100, [&] { executor::model::linear_forward(x.data(), w.data(), nullptr, y.data(), tiny); });
  tick("compute (a tiny op)");
}

}  // namespace stowage::probe
