// Fits a machine's cost parameters to measured timelines of schedules run
// on it: per lane, least squares of the op durations on the work the lane
// model charges for (gpu.compute: duration = overhead + FLOPs x s;
// pcie.h2d, pcie.d2h: latency + bytes / rate, each direction's own, with
// a rate beside compute where the lanes share the host (beside_fit.h);
// cpu.optim: params x s). The
// NVMe lanes run several requests at once, so their rates (one per
// direction) and how much of the drive the two get together (nvme_duplex)
// are fitted so that the NVMe model, sharing the drive among the ops that
// ran at each moment, moves each op's bytes in its measured span; the gradient checks and the device's optimizer
// ops get a rate each (summed bytes over summed time). Lanes a trace does
// not use keep their values. Where the machine's lanes share the host's
// cores (CostParameters::host_lane_cores, the CPU backend), each op is
// fitted at the duration it would have had alone, and the number of cores
// is chosen as the one whose fit puts the runs' simulated steady steps
// nearest the measured ones. Of a run of several steps, the first (the
// warm-up) is left out of every fit but the NVMe one (the drive's time):
// the steady state is what is predicted.
#pragma once

#include <string>
#include <vector>

#include "core/cost_parameters.h"
#include "core/machine_spec.h"
#include "core/schedule.h"
#include "core/timeline.h"

namespace stowage::calibration {

struct MeasuredRun {
  const core::Schedule* schedule;
  const core::Timeline* timeline;
};

// One fitted line: duration ≈ intercept + slope x work, over `ops` points.
struct LineFit {
  double intercept = 0;  // s
  double slope = 0;      // s per unit of work
  int ops = 0;
  double rms_residual = 0;  // s
};

// Ordinary least squares of y on x; with fewer than two distinct x, a line
// through the origin (intercept 0) on the mean ratio.
[[nodiscard]] LineFit least_squares(const std::vector<double>& x, const std::vector<double>& y);

struct FitReport {
  core::CostParameters params;  // `start` with the fitted fields replaced
  std::vector<std::string> notes;  // one line per lane fitted: what was set and from how many ops
};

// `start` is the machine's current calibration (machine.calibration).
[[nodiscard]] FitReport fit_cost_parameters(const std::vector<MeasuredRun>& runs, const core::MachineSpec& machine,
                                            const core::CostParameters& start);

}  // namespace stowage::calibration
