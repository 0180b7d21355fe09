// adam_kernel.h: a grid-stride loop, four elements a thread where the arrays
// allow 16-byte access, else one.
#include "executor/cuda/adam_kernel.h"

#include <cstdint>

#include "executor/cuda/cuda_error.h"
#include "executor/cuda/launch_shape.h"
#include "executor/half_bits.h"

namespace stowage::executor::cuda {
namespace {

__device__ inline float load_moment(float x) {
  return x;
}
__device__ inline float load_moment(uint16_t bits) {
  return bf16_value(bits);
}
__device__ inline void store_moment(float& slot, float x) {
  slot = x;
}
__device__ inline void store_moment(uint16_t& slot, float x) {
  slot = bf16_bits(x);
}

// One element: the CPU optimizer's scalar path, element for element.
template <core::OptimizerKind kOptimizer, core::Precision kPrecision, class Moment>
__device__ inline void update_element(const AdamPartitionOf<Moment>& p, const AdamStepConstants& c,
                                      int64_t i) {
  float m = load_moment(p.m[i]);
  float v = load_moment(p.v[i]);
  const float grad = half_value_of<kPrecision>(p.grad16[i]);
  const float param = adam_update_one<kOptimizer>(c, p.master[i], grad, m, v);
  store_moment(p.m[i], m);
  store_moment(p.v[i], v);
  p.master[i] = param;
  p.param16[i] = half_bits_of<kPrecision>(param);
}

template <core::OptimizerKind kOptimizer, core::Precision kPrecision, class Moment>
__global__ void adam_kernel(AdamPartitionOf<Moment> p, AdamStepConstants c) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n; i += stride)
    update_element<kOptimizer, kPrecision>(p, c, i);
}

// Four moments at once: 16 bytes of fp32, 8 of bf16.
template <class Moment>
struct Quad;
template <>
struct Quad<float> {
  using Type = float4;
};
template <>
struct Quad<uint16_t> {
  using Type = ushort4;
};

// Four elements a thread with 16- and 8-byte loads and stores, so that a
// warp's requests cover whole sectors with a quarter of the instructions:
// the scalar kernel reached 0.69 of the H200's copy rate, torch's fused
// AdamW 0.81 (docs/gpu.md). Each element is still update_element's
// arithmetic, so the bits do not change. Needs every array aligned to its
// quad (quads_aligned); the last n % 4 elements go one by one.
template <core::OptimizerKind kOptimizer, core::Precision kPrecision, class Moment>
__global__ void adam_kernel_quads(AdamPartitionOf<Moment> p, AdamStepConstants c) {
  using MomentQuad = typename Quad<Moment>::Type;
  const int64_t quads = p.n / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t q = first; q < quads; q += stride) {
    const float4 master = reinterpret_cast<const float4*>(p.master)[q];
    const MomentQuad m4 = reinterpret_cast<const MomentQuad*>(p.m)[q];
    const MomentQuad v4 = reinterpret_cast<const MomentQuad*>(p.v)[q];
    const ushort4 g4 = reinterpret_cast<const ushort4*>(p.grad16)[q];
    float params[4] = {master.x, master.y, master.z, master.w};
    float m[4] = {load_moment(m4.x), load_moment(m4.y), load_moment(m4.z), load_moment(m4.w)};
    float v[4] = {load_moment(v4.x), load_moment(v4.y), load_moment(v4.z), load_moment(v4.w)};
    const uint16_t g[4] = {g4.x, g4.y, g4.z, g4.w};
    uint16_t p16[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      params[k] = adam_update_one<kOptimizer>(c, params[k], half_value_of<kPrecision>(g[k]), m[k], v[k]);
      p16[k] = half_bits_of<kPrecision>(params[k]);
    }
    MomentQuad m_out, v_out;
    store_moment(m_out.x, m[0]), store_moment(m_out.y, m[1]), store_moment(m_out.z, m[2]),
        store_moment(m_out.w, m[3]);
    store_moment(v_out.x, v[0]), store_moment(v_out.y, v[1]), store_moment(v_out.z, v[2]),
        store_moment(v_out.w, v[3]);
    reinterpret_cast<MomentQuad*>(p.m)[q] = m_out;
    reinterpret_cast<MomentQuad*>(p.v)[q] = v_out;
    reinterpret_cast<float4*>(p.master)[q] = make_float4(params[0], params[1], params[2], params[3]);
    reinterpret_cast<ushort4*>(p.param16)[q] = make_ushort4(p16[0], p16[1], p16[2], p16[3]);
  }
  for (int64_t i = quads * 4 + first; i < p.n; i += stride) update_element<kOptimizer, kPrecision>(p, c, i);
}

bool aligned(const void* pointer, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(pointer) % bytes == 0;
}

// Can adam_kernel_quads take these arrays? (A partition carved from an
// arena at an odd element offset cannot; the scalar kernel then runs.)
template <class Moment>
bool quads_aligned(const AdamPartitionOf<Moment>& p) {
  const uintptr_t moment_quad = 4 * sizeof(Moment);
  return aligned(p.master, 16) && aligned(p.m, moment_quad) && aligned(p.v, moment_quad) &&
         aligned(p.grad16, 8) && aligned(p.param16, 8);
}

template <core::OptimizerKind kOptimizer, class Moment>
void launch_for(const AdamPartitionOf<Moment>& p, const AdamStepConstants& c, core::Precision precision,
                cudaStream_t stream) {
  if (quads_aligned(p)) {
    const unsigned blocks = blocks_for((p.n + 3) / 4);
    if (precision == core::Precision::kBf16)
      adam_kernel_quads<kOptimizer, core::Precision::kBf16><<<blocks, kThreadsPerBlock, 0, stream>>>(p, c);
    else
      adam_kernel_quads<kOptimizer, core::Precision::kFp16><<<blocks, kThreadsPerBlock, 0, stream>>>(p, c);
    check_launch("adam_kernel_quads");
    return;
  }
  if (precision == core::Precision::kBf16)
    adam_kernel<kOptimizer, core::Precision::kBf16><<<blocks_for(p.n), kThreadsPerBlock, 0, stream>>>(p, c);
  else
    adam_kernel<kOptimizer, core::Precision::kFp16><<<blocks_for(p.n), kThreadsPerBlock, 0, stream>>>(p, c);
  check_launch("adam_kernel");
}

template <class Moment>
void launch(const AdamPartitionOf<Moment>& p, const AdamStepConstants& c, core::OptimizerKind optimizer,
            core::Precision precision, cudaStream_t stream) {
  if (p.n <= 0) return;
  if (optimizer == core::OptimizerKind::kAdam)
    launch_for<core::OptimizerKind::kAdam>(p, c, precision, stream);
  else
    launch_for<core::OptimizerKind::kAdamW>(p, c, precision, stream);
}

}  // namespace

void launch_adam(const AdamPartitionOf<float>& p, const AdamStepConstants& c, core::OptimizerKind optimizer,
                 core::Precision precision, cudaStream_t stream) {
  launch(p, c, optimizer, precision, stream);
}
void launch_adam(const AdamPartitionOf<uint16_t>& p, const AdamStepConstants& c,
                 core::OptimizerKind optimizer, core::Precision precision, cudaStream_t stream) {
  launch(p, c, optimizer, precision, stream);
}

}  // namespace stowage::executor::cuda
