// A lane's fit where a crowd beside it slows it (sim/demand.h, Crowd): the
// rate its ops' work flows at alone, the rate while the crowd runs beside,
// and the fixed cost per op. Where the device's lanes share the host (the
// CPU backend), two such pairs: the copies (pcie.h2d, pcie.d2h, one
// direction at a time; bytes) beside a layer pass, which takes part of the
// memory path and slows a memcpy by about a tenth, and the layer passes
// (seconds at the compute rate's efficiency 1) beside NVMe I/O, whose
// interrupts and completions take the cores (issue 14's runs;
// docs/fidelity.md). One rate pooled over ops with and without the crowd
// beside them predicts a placement that overlaps them differently wrong.
#pragma once

#include <optional>
#include <vector>

namespace stowage::calibration {

// [start, end) on one clock.
struct Interval {
  double start = 0, end = 0;
};

struct BesidePoint {
  double work = 0;     // units that flow: bytes, or seconds at efficiency 1
  double seconds = 0;  // measured duration
  // When the crowd ran beside it: disjoint, in order, in seconds from the
  // op's start, within [0, seconds).
  std::vector<Interval> beside;
};

struct BesideFit {
  double rate = 0;                    // units/s alone
  std::optional<double> beside_rate;  // units/s beside the crowd; unset where not seen to differ
  double latency = 0;                 // s per op
  int ops = 0;
  double rms_residual = 0;  // s
};

// The model the simulator has (sim/lane_models.h): an op flows its work
// at `rate` while the crowd is away and at `beside_rate` while it runs,
// then waits `latency`. So, with beta the share of its work done beside
// the crowd,
//   seconds = latency + work / rate + work x beta x (1 / beside_rate - 1 / rate),
// linear in the three unknowns for a given beta; beta follows from the
// time the crowd overlapped the op's flowing part (its span less the
// latency) and the two rates, so the fit alternates the two to a fixed
// point. Without ops of both kinds, or where the fit finds them faster
// beside the crowd, one line (least_squares) and no beside rate. A
// negative fixed cost means none, as for every line the calibration fits.
// Then, of four or more ops, those whose residual is more than five
// standard deviations of the others (from the median residual) are left
// out and the fit made again: a copy whose thread the OS did not run for
// milliseconds would otherwise become a fixed cost of every copy (issue
// 14's replays of eleven runs: copy lanes' busy errors over 15 % went from
// 11 to 4 with it; 5 at three deviations, 4 at eight). nullopt with
// fewer than two points or no positive rate. Without `fixed_cost` every
// line and plane goes through the origin (latency 0): the layer passes
// priced by a measured rate curve, which carries each size's fixed cost.
[[nodiscard]] std::optional<BesideFit> fit_beside(const std::vector<BesidePoint>& points, bool fixed_cost = true);

// For each of `spans`, the parts of it any of `others` overlapped, merged,
// in seconds from the span's start (BesidePoint::beside).
[[nodiscard]] std::vector<std::vector<Interval>> overlaps(const std::vector<Interval>& spans,
                                                          std::vector<Interval> others);

}  // namespace stowage::calibration
