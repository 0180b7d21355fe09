// The CPU optimizer step: Adam or AdamW on fp32 master weights and moments
// (or bf16 moments, adam_step_bf16_moments), fused with writing the bf16/fp16
// parameter copy the device trains with.
// This is the kernel the executor runs for a partition whose optimizer
// state the plan keeps on a host tier (issue 5, item 4). Its float64 twin is
// executor/adam_reference.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/training_spec.h"
#include "executor/isa.h"

namespace stowage::executor {

// The optimizer's hyperparameters, in the words of the training profile.
// kAdam adds weight_decay * param to the gradient (L2); kAdamW multiplies the
// parameter by (1 - lr * weight_decay) before the update (decoupled), as in
// torch.optim.Adam and torch.optim.AdamW. amsgrad and maximize are not offered.
struct AdamHyper {
  core::AdamConfig config;
  core::OptimizerKind optimizer = core::OptimizerKind::kAdamW;
};

// The bytes one parameter's step moves, STREAM's count (a store's
// write-allocate read not counted): master, m and v read and written, grad
// read, the 16-bit copy written: 30 with fp32 moments, 22 with bf16 ones
// (adam_step_bf16_moments); 2 fewer without the copy (an empty param16).
inline constexpr size_t kAdamBytesPerParam = 30;
inline constexpr size_t kAdamBf16MomentsBytesPerParam = 22;
inline constexpr size_t kCopyBytesPerParam = 2;

// How the vector loops store the 16-bit copy, the one array written and not
// read. An ordinary (cached) store first reads the line it writes
// (write-allocate), so the copy's 2 bytes cost 4; a streamed (non-temporal)
// store skips that read but leaves nothing in the cache. kAuto streams when
// the pass moves more bytes than the last-level cache holds, so the copy
// would be evicted before anyone read it anyway. All give the same bits.
enum class CopyStores { kAuto, kCached, kStreamed };

struct AdamOptions {
  int threads = 1;  // >= 1; 1 runs on the calling thread, no thread is started
  Isa isa = Isa::kAuto;  // the inner loop's instruction set (isa.h); all give the same bits
  CopyStores copy_stores = CopyStores::kAuto;
};

// One optimizer step over n = master.size() parameters, in place.
//
//   master, m, v  [n] fp32: master weights, first and second moments; updated.
//   grad          [n] fp32: the gradient as produced, still multiplied by the
//                 loss scale; unscaled here by multiplying with
//                 float(1 / grad_scale), as torch.cuda.amp.GradScaler does
//                 (exact for the power-of-two scales dynamic scaling uses).
//   param16       [n] written: master rounded to `precision` (bf16 or fp16,
//                 round to nearest even, NaN kept NaN), bit patterns. Or
//                 empty: the step alone, no copy written (28 bytes per
//                 parameter instead of 30), as DeepSpeedCPUAdam's step
//                 without its fp16 output; master, m and v get the same
//                 bits either way. cpu_adam_bench measures the copy's cost
//                 against it.
//   step          1-based: the t of the bias corrections 1 - beta^t. The
//                 caller owns the counter; nothing here remembers it.
//   grad_scale    > 0, finite; 1 for bf16. Skipping a step whose gradients
//                 overflowed is the loss scaler's decision, not made here.
//
// Algorithm: PyTorch's documented torch.optim.Adam / torch.optim.AdamW
// (https://pytorch.org/docs/stable/generated/torch.optim.Adam.html, .AdamW.html),
// with the denominator computed as PyTorch's implementation does:
// denom = sqrt(v) / sqrt(1 - beta2^t) + eps, param -= lr / (1 - beta1^t) * m / denom.
//
// A pure function of its arguments: the result depends neither on
// options.threads nor on options.isa, bit for bit. Every path performs the
// same correctly rounded IEEE float operations (multiply, explicit fused
// multiply-add, divide, sqrt) in the same order; see cpu_adam.cpp.
// Accuracy: within 1e-6 relative, over 100 steps, of the float64 twin that
// also keeps theta in fp32 between steps; within 4e-6 of the pure float64
// trajectory, which is what fp32 master weights allow (cpu_adam_test.cpp).
//
// Threads: min(options.threads, n / 65536) threads (smaller shares cost
// more to start than they save), the calling thread one of them, take
// pieces of 65536 elements in turn from a shared counter until none is
// left, so a thread whose core is busy with other work takes fewer pieces
// instead of holding the others up. No thread spins: the started ones are
// joined, blocked in the kernel, when the pieces run out. Piece bounds are
// multiples of 64 elements, so no two threads write the same cache line
// of 64-byte aligned arrays. The spans must not overlap each other; the
// call returns when all are written.
//
// Throws std::invalid_argument (the project has no STOWAGE_CHECK yet) when
// the lengths differ, step < 1, grad_scale is not positive and finite, a
// hyperparameter is out of PyTorch's accepted range, threads < 1, or the
// requested ISA is not supported here. Nothing is written when it throws.
void adam_step(std::span<float> master, std::span<const float> grad, std::span<float> m, std::span<float> v,
               std::span<uint16_t> param16, core::Precision precision, const AdamHyper& hyper, int64_t step,
               float grad_scale, const AdamOptions& options);

// adam_step with bf16 moments (issue 16, item 3; core::StatePrecision::kBf16):
// m and v are bf16 bit patterns, widened exactly on load and rounded to
// nearest even on store (NaN kept NaN), as executor/half_bits.h does; master
// stays fp32. Each element performs exactly adam_step's float operations on
// the widened moments, then rounds them, so the result is again the same
// bits on every ISA and thread count; its float64 twin is
// adam_reference_step_bf16_moments (adam_reference.h). 22 bytes per
// parameter move instead of 30. Same preconditions and throws as adam_step.
void adam_step_bf16_moments(std::span<float> master, std::span<const float> grad, std::span<uint16_t> m,
                            std::span<uint16_t> v, std::span<uint16_t> param16, core::Precision precision,
                            const AdamHyper& hyper, int64_t step, float grad_scale, const AdamOptions& options);

// The roofline of adam_step (issue 16, item 1): the same five arrays read
// and written in the same order, in place, split over the same threads and
// pieces, with trivial arithmetic instead of Adam's (master += grad,
// m += grad, v += grad, param16 = the top 16 bits of master). No Adam
// implementation can move its 30 bytes per parameter faster on this
// machine; bench/executor/cpu_adam_bench reports adam_step as a fraction of
// it. An empty param16 leaves out the copy's store, as adam_step does. Uses the widest ISA supported up to options.isa; same preconditions
// on the spans and threads as adam_step (throws std::invalid_argument).
void adam_roofline_pass(std::span<float> master, std::span<const float> grad, std::span<float> m,
                        std::span<float> v, std::span<uint16_t> param16, const AdamOptions& options);

// The roofline of adam_step_bf16_moments: its 22 bytes per parameter read
// and written in the same order, in place, with trivial arithmetic (the
// moments' bits += the gradient's top 16 bits, master += grad, param16 = the
// top 16 bits of master). Same preconditions as adam_roofline_pass, except
// that param16 may not be empty.
void adam_roofline_pass_bf16_moments(std::span<float> master, std::span<const float> grad,
                                     std::span<uint16_t> m, std::span<uint16_t> v, std::span<uint16_t> param16,
                                     const AdamOptions& options);

}  // namespace stowage::executor
