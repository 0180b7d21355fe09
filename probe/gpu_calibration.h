// A GPU's measured rates as a machine profile's calibration, against the
// figures of its bundled profile: the pinned copy rate each way (the median
// of the copies of 16 MiB and more: smaller ones are latency-bound, and the
// simulator prices a partition-sized copy), the device-to-device copy as a
// share of the memory bandwidth (hbm_efficiency), and the median GEMM as a
// share of the tensor-core rate of its type (matmul_efficiency).
// bench/gpu/probe_calibration.py computes the same of cuda_probe's output;
// tests/probe/gpu_calibration_test.cpp and tests/bench/torch_peer_test.py
// hold both to the H200's recorded probe.
#pragma once

#include <string>

#include "core/cost_parameters.h"
#include "core/gpu_spec.h"
#include "probe/measurements.h"

namespace stowage::probe {

// Sets h2d_rate, d2h_rate, hbm_efficiency and matmul_efficiency in `p`, or
// returns what is missing (no pinned copy of 16 MiB or more, no GEMM, no
// rate of the GEMMs' type in the GPU's profile) and changes nothing.
[[nodiscard]] std::string apply_gpu_calibration(const GpuMeasurements& measured, const core::GpuSpec& gpu,
                                                core::CostParameters& p);

}  // namespace stowage::probe
