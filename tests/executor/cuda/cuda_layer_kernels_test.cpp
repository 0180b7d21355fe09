// The GPU's layer kernels (cuda_layer_kernels.h) against the CPU's
// (model/cpu_layer_kernels.h), primitive by primitive, on random inputs of
// odd sizes, every output compared, including those a primitive adds to
// (filled with random values first). Bounds:
//   products (cuBLASLt fp32 against OpenBLAS, both fp32 accumulation, in
//     different orders): each sum of k terms may round differently by
//     about k·2^-24 of the sum of its terms' magnitudes; over these sizes
//     (k <= 53) and O(1) inputs, 2e-5 of the output's largest magnitude,
//     and 2e-4 for attention's backward, whose dS is a difference of
//     products of products;
//   row reductions (softmax, norms, the loss): double sums in a tree
//     against index order, then one float rounding: 1e-6 relative;
//   gathers, scatters, adds, copies, fills: the same adds in the same
//     order: bit for bit.
// Runs where a GPU is present (label gpu).
#include "executor/cuda/cuda_layer_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "executor/model/cpu_layer_kernels.h"
#include "executor/model/half_convert.h"
#include "executor/model/kernel_scratch.h"
#include "executor/model/matmul.h"
#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

using model::AttentionShape;
using model::LinearShape;

std::vector<float> zeros(int64_t n) {
  return std::vector<float>(static_cast<size_t>(n));
}

// The largest |gpu - cpu|, and the largest |cpu|.
struct Apart {
  double worst = 0, largest = 0;
  [[nodiscard]] bool within(double bound) const { return worst <= bound * largest; }
};
Apart apart(const std::vector<float>& gpu, const std::vector<float>& cpu) {
  Apart a;
  for (size_t i = 0; i < cpu.size(); ++i) {
    a.largest = std::max(a.largest, std::fabs(static_cast<double>(cpu[i])));
    a.worst = std::max(a.worst, std::fabs(static_cast<double>(gpu[i]) - cpu[i]));
  }
  return a;
}

// max |gpu - cpu| <= bound * max |cpu|.
void expect_close(const std::vector<float>& gpu, const std::vector<float>& cpu, double bound, const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  const Apart a = apart(gpu, cpu);
  EXPECT_TRUE(a.within(bound)) << what << ": largest difference " << a.worst << " of values up to " << a.largest;
}

struct Kernels {
  cudaStream_t stream = nullptr;  // the default stream: DeviceArray reads after a device sync
  CudaLayerKernels gpu{stream};
  model::CpuLayerKernels cpu;
};

TEST(CudaLayerKernels, LinearForwardAndBackwardMatchTheCpu) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  Kernels k;
  const LinearShape s{.rows = 37, .in = 29, .out = 53};
  for (const bool bias : {true, false}) {
    SCOPED_TRACE(bias ? "with bias" : "without bias");
    const auto x = random_floats(s.rows * s.in, -1, 1, 1), w = random_floats(s.out * s.in, -1, 1, 2),
               b = random_floats(s.out, -1, 1, 3), dy = random_floats(s.rows * s.out, -1, 1, 4);
    // The gradients are added to what the buffers hold.
    auto dx = random_floats(s.rows * s.in, -1, 1, 5), dw = random_floats(s.out * s.in, -1, 1, 6),
         db = random_floats(s.out, -1, 1, 7);
    DeviceArray<float> gx(x), gw(w), gb(b), gdy(dy), gy(zeros(s.rows * s.out)), gdx(dx), gdw(dw), gdb(db);
    std::vector<float> y(s.rows * s.out);
    const int64_t before = model::matmul_flops_on_this_thread();
    k.cpu.linear_forward(x.data(), w.data(), bias ? b.data() : nullptr, y.data(), s);
    k.cpu.linear_backward(x.data(), w.data(), dy.data(), dx.data(), dw.data(), bias ? db.data() : nullptr, s);
    const int64_t cpu_flops = model::matmul_flops_on_this_thread() - before;
    k.gpu.linear_forward(gx.get(), gw.get(), bias ? gb.get() : nullptr, gy.get(), s);
    k.gpu.linear_backward(gx.get(), gw.get(), gdy.get(), gdx.get(), gdw.get(), bias ? gdb.get() : nullptr, s);
    EXPECT_EQ(model::matmul_flops_on_this_thread() - before - cpu_flops, cpu_flops);  // counted alike
    expect_close(gy.to_host(), y, 2e-5, "y");
    expect_close(gdx.to_host(), dx, 2e-5, "dx");
    expect_close(gdw.to_host(), dw, 2e-5, "dw");
    expect_close(gdb.to_host(), db, 2e-5, "db");
  }
}

// 16-bit products (ProductPrecision::kBf16, kFp16): cuBLASLt's
// CUBLAS_COMPUTE_32F_FAST_16BF and _16F *allow* the tensor cores to round
// the fp32 operands; where its heuristic takes a tensor-core algorithm,
// the product is that of the operands rounded to the type (to nearest
// even, model/half_convert.h) summed in fp32, to fp32's rounding of the
// sum, and so neither the fp32 product nor the other type's: rounding the
// operands moves a product by up to 2^-8 (bf16) or 2^-11 (fp16) of the
// terms' magnitude. A shape the tensor cores take (16-byte aligned rows,
// multiples of 16) must be rounded; an odd one (rows of 29 floats) may be
// multiplied in fp32 instead, but must be one of the two.
TEST(CudaLayerKernels, HalfPrecisionProductsRoundTheOperandsAndSumInFp32) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  model::CpuLayerKernels cpu;
  for (const LinearShape s :
       {LinearShape{.rows = 48, .in = 64, .out = 80}, LinearShape{.rows = 37, .in = 29, .out = 53}}) {
    const bool aligned = s.in % 16 == 0;
    SCOPED_TRACE(aligned ? "a shape the tensor cores take" : "an odd shape");
    const auto x = random_floats(s.rows * s.in, -1, 1, 11), w = random_floats(s.out * s.in, -1, 1, 12);
    auto product = [&](uint16_t (*narrow)(float), float (*widen)(uint16_t)) {
      auto rounded = [&](std::vector<float> v) {
        for (float& f : v) f = narrow == nullptr ? f : widen(narrow(f));
        return v;
      };
      std::vector<float> y(s.rows * s.out);
      cpu.linear_forward(rounded(x).data(), rounded(w).data(), nullptr, y.data(), s);
      return y;
    };
    const std::vector<float> fp32 = product(nullptr, nullptr),
                             bf16 = product(model::float_to_bf16, model::bf16_to_float),
                             fp16 = product(model::float_to_fp16, model::fp16_to_float);
    struct Case {
      ProductPrecision precision;
      const std::vector<float>& expected;
      const std::vector<float>& other_half;
    };
    for (const Case& c :
         {Case{ProductPrecision::kBf16, bf16, fp16}, Case{ProductPrecision::kFp16, fp16, bf16}}) {
      SCOPED_TRACE(product_precision_name(c.precision));
      CudaLayerKernels gpu(nullptr, c.precision);
      DeviceArray<float> gx(x), gw(w), gy(zeros(s.rows * s.out));
      gpu.linear_forward(gx.get(), gw.get(), nullptr, gy.get(), s);
      const std::vector<float> y = gy.to_host();
      const double bound = 2e-6 * static_cast<double>(s.in);
      if (aligned) {
        expect_close(y, c.expected, bound, "y against the product of the rounded operands");
        EXPECT_GT(apart(y, fp32).worst, 1e-4) << "the products equal the fp32 ones: not rounded";
        EXPECT_GT(apart(y, c.other_half).worst, 1e-4) << "the operands were rounded to the other type";
      } else if (!apart(y, c.expected).within(bound)) {
        expect_close(y, fp32, 2e-5, "y, not rounded, against the fp32 product");
      }
    }
  }
}

TEST(CudaLayerKernels, GroupedQueryCausalAttentionMatchesTheCpu) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  Kernels k;
  const AttentionShape s{.batch = 2, .seq = 19, .heads = 4, .head_dim = 8, .kv_heads = 2};
  const int64_t n = s.batch * s.seq;
  const auto q = random_floats(n * s.width(), -1, 1, 11), kk = random_floats(n * s.kv_width(), -1, 1, 12),
             v = random_floats(n * s.kv_width(), -1, 1, 13), dy = random_floats(n * s.width(), -1, 1, 14);
  const int64_t probs_size = s.batch * s.heads * s.seq * s.seq;
  std::vector<float> probs(probs_size), y(n * s.width()), dq(q.size()), dk(kk.size()), dv(v.size());
  k.cpu.causal_attention_forward(q.data(), kk.data(), v.data(), probs.data(), y.data(), s);
  k.cpu.causal_attention_backward(q.data(), kk.data(), v.data(), probs.data(), dy.data(), dq.data(), dk.data(),
                                  dv.data(), s);
  DeviceArray<float> gq(q), gk(kk), gv(v), gdy(dy), gprobs(zeros(probs_size)),
      gy(zeros(y.size())), gdq(zeros(q.size())), gdk(zeros(kk.size())),
      gdv(zeros(v.size())), scratch(zeros(s.seq * s.seq));
  {
    // Its score gradients are a temporary in the op's (device) scratch,
    // zeroed by the installed kernels.
    const model::InstalledKernels installed(k.gpu);
    const model::ScratchRegion region({scratch.get(), static_cast<size_t>(s.seq * s.seq)});
    k.gpu.causal_attention_forward(gq.get(), gk.get(), gv.get(), gprobs.get(), gy.get(), s);
    k.gpu.causal_attention_backward(gq.get(), gk.get(), gv.get(), gprobs.get(), gdy.get(), gdq.get(), gdk.get(),
                                    gdv.get(), s);
  }
  expect_close(gprobs.to_host(), probs, 2e-5, "probs");
  const std::vector<float> p = gprobs.to_host();
  for (int64_t m = 0; m < s.batch * s.heads; ++m) {  // exactly zero above the diagonal
    for (int64_t t = 0; t < s.seq; ++t) {
      for (int64_t c = t + 1; c < s.seq; ++c) ASSERT_EQ(p[(m * s.seq + t) * s.seq + c], 0.0f);
    }
  }
  expect_close(gy.to_host(), y, 2e-5, "y");
  expect_close(gdq.to_host(), dq, 2e-4, "dq");
  expect_close(gdk.to_host(), dk, 2e-4, "dk");
  expect_close(gdv.to_host(), dv, 2e-5, "dv");
}

// Scores spread over about a hundred in a row, so exp(score - max) under
// any max but the row's own overflows or underflows (a missing barrier in
// block_max). q and k are multiples of 1/4 in [-12, 12]: over a head of 8
// each dot product is exact in fp32 whatever the order of its sum, so the
// probabilities differ only by the scale's and exp's roundings, within
// the bound above even where scores are large.
TEST(CudaLayerKernels, CausalAttentionTakesEachRowsOwnMaxOverWideScores) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  Kernels k;
  const AttentionShape s{.batch = 2, .seq = 37, .heads = 2, .head_dim = 8, .kv_heads = 2};
  const int64_t n = s.batch * s.seq;
  auto quarters = [](std::vector<float> x) {
    for (float& v : x) v = std::round(v * 4.0f) / 4.0f;
    return x;
  };
  const auto q = quarters(random_floats(n * s.width(), -12, 12, 15)),
             kk = quarters(random_floats(n * s.kv_width(), -12, 12, 16)),
             v = random_floats(n * s.kv_width(), -1, 1, 17);
  const int64_t probs_size = s.batch * s.heads * s.seq * s.seq;
  std::vector<float> probs(probs_size), y(n * s.width());
  k.cpu.causal_attention_forward(q.data(), kk.data(), v.data(), probs.data(), y.data(), s);
  DeviceArray<float> gq(q), gk(kk), gv(v), gprobs(zeros(probs_size)), gy(zeros(y.size()));
  k.gpu.causal_attention_forward(gq.get(), gk.get(), gv.get(), gprobs.get(), gy.get(), s);
  double widest = 0;  // the inputs do what they are for: a row's scores spread past exp's range
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      for (int64_t t = 0; t < s.seq; ++t) {
        double lo = INFINITY, hi = -INFINITY;
        for (int64_t c = 0; c <= t; ++c) {
          double dot = 0;
          for (int64_t i = 0; i < s.head_dim; ++i)
            dot += q[(b * s.seq + t) * s.width() + h * s.head_dim + i] *
                   kk[(b * s.seq + c) * s.kv_width() + (h / s.group()) * s.head_dim + i];
          lo = std::min(lo, dot * s.scale());
          hi = std::max(hi, dot * s.scale());
        }
        widest = std::max(widest, hi - lo);
      }
    }
  }
  ASSERT_GT(widest, 2 * 88.7) << "exp(x) overflows a float past 88.7";
  expect_close(gprobs.to_host(), probs, 2e-5, "probs");
  expect_close(gy.to_host(), y, 2e-5, "y");
}

TEST(CudaLayerKernels, NormsMatchTheCpu) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  Kernels k;
  const int64_t rows = 13, d = 257;
  const auto x = random_floats(rows * d, -2, 2, 21), w = random_floats(d, 0.5f, 1.5f, 22),
             b = random_floats(d, -1, 1, 23), dy = random_floats(rows * d, -1, 1, 24);
  {
    std::vector<float> y(x.size()), rstd(rows), dx = random_floats(rows * d, -1, 1, 25),
                       dw = random_floats(d, -1, 1, 26);
    DeviceArray<float> gx(x), gw(w), gdy(dy), gy(y), grstd(rstd), gdx(dx), gdw(dw);
    k.cpu.rms_norm_forward(x.data(), w.data(), y.data(), rstd.data(), rows, d);
    k.cpu.rms_norm_backward(x.data(), w.data(), rstd.data(), dy.data(), dx.data(), dw.data(), rows, d);
    k.gpu.rms_norm_forward(gx.get(), gw.get(), gy.get(), grstd.get(), rows, d);
    k.gpu.rms_norm_backward(gx.get(), gw.get(), grstd.get(), gdy.get(), gdx.get(), gdw.get(), rows, d);
    expect_close(gy.to_host(), y, 1e-6, "rms y");
    expect_close(grstd.to_host(), rstd, 1e-6, "rms rstd");
    expect_close(gdx.to_host(), dx, 1e-5, "rms dx");
    expect_close(gdw.to_host(), dw, 1e-5, "rms dw");
  }
  {
    std::vector<float> y(x.size()), mean(rows), rstd(rows), dx = random_floats(rows * d, -1, 1, 27),
                       dw = random_floats(d, -1, 1, 28), db = random_floats(d, -1, 1, 29);
    DeviceArray<float> gx(x), gw(w), gb(b), gdy(dy), gy(y), gmean(mean), grstd(rstd), gdx(dx), gdw(dw), gdb(db);
    k.cpu.layer_norm_forward(x.data(), w.data(), b.data(), y.data(), mean.data(), rstd.data(), rows, d);
    k.cpu.layer_norm_backward(x.data(), w.data(), mean.data(), rstd.data(), dy.data(), dx.data(), dw.data(),
                              db.data(), rows, d);
    k.gpu.layer_norm_forward(gx.get(), gw.get(), gb.get(), gy.get(), gmean.get(), grstd.get(), rows, d);
    k.gpu.layer_norm_backward(gx.get(), gw.get(), gmean.get(), grstd.get(), gdy.get(), gdx.get(), gdw.get(),
                              gdb.get(), rows, d);
    expect_close(gy.to_host(), y, 1e-5, "layer norm y");
    expect_close(gdx.to_host(), dx, 1e-5, "layer norm dx");
    expect_close(gdw.to_host(), dw, 1e-5, "layer norm dw");
    expect_close(gdb.to_host(), db, 1e-6, "layer norm db");
  }
}

TEST(CudaLayerKernels, ActivationsAndRotaryMatchTheCpu) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  Kernels k;
  for (const int64_t n : kOddSizes) {
    const auto gate = random_floats(n, -8, 8, 31), up = random_floats(n, -2, 2, 32), dh = random_floats(n, -1, 1, 33);
    std::vector<float> h(n), dg(n), du(n);
    DeviceArray<float> ggate(gate), gup(up), gdh(dh), gh(h), gdg(dg), gdu(du);
    k.cpu.swiglu_forward(gate.data(), up.data(), h.data(), n);
    k.cpu.swiglu_backward(gate.data(), up.data(), dh.data(), dg.data(), du.data(), n);
    k.gpu.swiglu_forward(ggate.get(), gup.get(), gh.get(), n);
    k.gpu.swiglu_backward(ggate.get(), gup.get(), gdh.get(), gdg.get(), gdu.get(), n);
    // expf against std::exp: a few ulp apart (CUDA C Programming Guide, 2 ulp).
    expect_close(gh.to_host(), h, 1e-6, "swiglu h");
    expect_close(gdg.to_host(), dg, 1e-6, "swiglu d_gate");
    expect_close(gdu.to_host(), du, 1e-6, "swiglu d_up");
  }
  const model::RotaryTable table(8, 16, 10000.0);
  const int64_t batch = 2, seq = 11, heads = 3;
  auto x = random_floats(batch * seq * heads * 8, -1, 1, 34);
  DeviceArray<float> gx(x);
  k.cpu.rotate(table, x.data(), batch, seq, heads);
  k.gpu.rotate(table, gx.get(), batch, seq, heads);
  expect_close(gx.to_host(), x, 1e-6, "rotate");
  k.cpu.rotate_back(table, x.data(), batch, seq, heads);
  k.gpu.rotate_back(table, gx.get(), batch, seq, heads);
  expect_close(gx.to_host(), x, 1e-6, "rotate back");
}

TEST(CudaLayerKernels, CrossEntropyMatchesTheCpu) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  Kernels k;
  const int64_t rows = 23, vocab = 301;
  std::vector<int32_t> targets(rows);
  for (int64_t r = 0; r < rows; ++r) targets[r] = static_cast<int32_t>((r * 37) % vocab);
  // Every other row with one logit 120 above the others, where the
  // largest column sits in either half of a block's threads: exp(x - max)
  // overflows under a max that missed it, and underflows to a zero sum
  // under another row's, so a row reduction that reads a partial or stale
  // max (a missing barrier in block_max) gives an infinite loss.
  for (const bool outliers : {false, true}) {
    SCOPED_TRACE(outliers ? "one logit in every other row dwarfs the rest" : "logits in [-5, 5]");
    auto logits = random_floats(rows * vocab, -5, 5, 41);
    if (outliers) {
      for (int64_t r = 0; r < rows; r += 2) logits[r * vocab + (r * 131 + 7) % vocab] += 120.0f;
    }
    DeviceArray<float> glogits(logits), gd(zeros(logits.size()));
    std::vector<float> d(logits.size());
    const double cpu_loss = k.cpu.softmax_cross_entropy_forward(logits.data(), targets.data(), rows, vocab);
    const double gpu_loss = k.gpu.softmax_cross_entropy_forward(glogits.get(), targets.data(), rows, vocab);
    ASSERT_TRUE(std::isfinite(cpu_loss));
    EXPECT_NEAR(gpu_loss, cpu_loss, 1e-6 * cpu_loss);
    expect_close(glogits.to_host(), logits, 1e-6, "probabilities");
    k.cpu.softmax_cross_entropy_backward(logits.data(), targets.data(), 0.25f, d.data(), rows, vocab);
    k.gpu.softmax_cross_entropy_backward(glogits.get(), targets.data(), 0.25f, gd.get(), rows, vocab);
    expect_close(gd.to_host(), d, 1e-6, "dlogits");
  }
}

TEST(CudaLayerKernels, GathersScattersAndElementWiseWorkGiveTheCpusBits) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  Kernels k;
  const int64_t vocab = 17, d = 33, rows = 29;
  std::vector<int32_t> ids(rows);
  for (int64_t i = 0; i < rows; ++i) ids[i] = static_cast<int32_t>((i * 5) % vocab);  // repeats
  const auto table = random_floats(vocab * d, -1, 1, 51), d_out = random_floats(rows * d, -1, 1, 52);
  auto d_table = random_floats(vocab * d, -1, 1, 53);
  std::vector<float> out(rows * d);
  DeviceArray<float> gtable(table), gd_out(d_out), gd_table(d_table), gout(out);
  k.cpu.gather_rows(table.data(), ids.data(), rows, d, out.data());
  k.cpu.scatter_add_rows(ids.data(), d_out.data(), rows, d, d_table.data());
  k.gpu.gather_rows(gtable.get(), ids.data(), rows, d, gout.get());
  k.gpu.scatter_add_rows(ids.data(), gd_out.get(), rows, d, gd_table.get());
  EXPECT_EQ(gout.to_host(), out);
  EXPECT_EQ(gd_table.to_host(), d_table);
  for (const int64_t n : kOddSizes) {
    auto y = random_floats(n, -1, 1, 54);
    const auto x = random_floats(n, -1, 1, 55);
    DeviceArray<float> gy(y), gx(x), gc(zeros(n));
    k.cpu.add_into(y.data(), x.data(), n);
    k.gpu.add_into(gy.get(), gx.get(), n);
    EXPECT_EQ(gy.to_host(), y);
    k.gpu.copy(gc.get(), gy.get(), n);
    EXPECT_EQ(gc.to_host(), y);
    k.gpu.fill(gc.get(), -0.5f, n);
    EXPECT_EQ(gc.to_host(), std::vector<float>(n, -0.5f));
  }
}

}  // namespace
}  // namespace stowage::executor::cuda
