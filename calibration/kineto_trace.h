// A PyTorch profiler trace (Kineto's Chrome trace JSON, as torch.profiler's
// export_chrome_trace writes it, e.g. for a DeepSpeed run) as the measured
// side of a lane-level comparison (issue 14 item 7). Its events are mapped
// to Stowage's lanes (docs/fidelity.md, "A measured trace from elsewhere"):
//
//   gpu.compute  CUDA kernels (cat "kernel"), NCCL kernels excepted; on a
//                trace without kernels (DeepSpeed's CPU accelerator, where
//                the CPU is the device, as in Stowage's CPU backend) the
//                training thread's top-level operators instead
//   pcie.h2d     "Memcpy HtoD ..." (cat "gpu_memcpy")
//   pcie.d2h     "Memcpy DtoH ..."
//   cpu.optim    "Optimizer.step#..." annotations (DeepSpeedCPUAdam.step, ...)
//   nvme.read    DeepSpeed's async I/O reads: names with "pread" or "aio_read"
//   nvme.write   names with "pwrite" or "aio_write"
//   gpu.comm     NCCL kernels and "gloo:" / "nccl:" collective annotations
//
// Steps are the profiler's "ProfilerStep#N" annotations on the host (a
// profile taken with torch.profiler.schedule and prof.step() once per
// training step; a GPU trace's copies of them on each stream, category
// "gpu_user_annotation", are not steps, nor is any such copy an op);
// events outside every step are left out. The ops carry no ids that match a
// Stowage schedule, so the comparison is by lane, not by op.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/trace_metrics.h"
#include "core/diagnostic.h"
#include "core/schedule.h"
#include "core/timeline.h"
#include "core/trace_origin.h"

namespace stowage::calibration {

struct KinetoTrace {
  core::Schedule schedule;                // one op per mapped event: its lane, kind and step
  core::Timeline timeline;                // its span, ns from the first step's start
  std::vector<core::SimTime> step_times;  // each ProfilerStep's length, in order
  bool has_kernels = false;               // a GPU trace (else a CPU accelerator's)
  // The GPUs profiled, as deviceProperties names them ("NVIDIA H200"); empty
  // on a CPU accelerator's trace.
  std::vector<std::string> devices;
  std::array<int, core::kLaneCount> events_per_lane{};
};

// Does `text` look like a PyTorch profiler trace rather than one Stowage
// wrote? (Kineto's top-level "schemaVersion", or its "ProfilerStep#" steps,
// and no Stowage format marker.)
[[nodiscard]] bool looks_like_kineto(std::string_view text);

// `file` names the text in diagnostics: JSON syntax at file:line:column,
// an event as traceEvents[i] at its line. Read by Stowage's one trace walker
// (core/trace_events.h: simdjson On-Demand, nesting past kMaxJsonDepth
// refused); a file has the trace size limit (STOWAGE_MAX_TRACE_BYTES).
[[nodiscard]] core::Result<KinetoTrace> parse_kineto_trace(std::string_view text, const std::string& file);
[[nodiscard]] core::Result<KinetoTrace> load_kineto_trace(const std::filesystem::path& path);

// What a PyTorch profiler trace says it ran on, as a Stowage run's trace
// says it (core/trace_origin.h): its first profiled GPU, under the backend
// kKinetoBackend; nothing where it lists no GPU (DeepSpeed's CPU
// accelerator: another program than Stowage's CPU backend on the same
// host, so neither the same device nor another).
inline constexpr std::string_view kKinetoBackend = "PyTorch profiler";
[[nodiscard]] core::TraceOrigin kineto_origin(const std::vector<std::string>& devices);
[[nodiscard]] inline core::TraceOrigin kineto_origin(const KinetoTrace& trace) {
  return kineto_origin(trace.devices);
}

// The trace's own metrics (trace_metrics.h), with the profiler's step
// boundaries as its steps.
[[nodiscard]] TraceMetrics kineto_metrics(const KinetoTrace& trace);

// The lane a Kineto event belongs to by its category and name alone, or
// nullopt. (The compute of a trace without kernels needs the nesting too:
// parse_kineto_trace decides it.)
[[nodiscard]] std::optional<core::Lane> kineto_lane(std::string_view category, std::string_view name);

}  // namespace stowage::calibration
