// The copy lanes' fit (pcie.h2d, pcie.d2h), one direction at a time: the
// rate a copy moves at alone, the rate beside compute where the device's
// lanes share the host (CostParameters::h2d_rate_beside_compute), and the
// fixed cost per copy. The CPU backend's copies are memcpys on threads of
// their own: a layer pass running beside one takes part of the memory path
// and slows it by about a tenth (issue 14's runs; docs/fidelity.md), so
// one rate pooled over copies with and without compute beside them
// predicts the copies of a placement that overlaps them less too slow.
#pragma once

#include <optional>
#include <vector>

namespace stowage::calibration {

// [start, end) on one clock.
struct Interval {
  double start = 0, end = 0;
};

struct CopyPoint {
  double bytes = 0;
  double seconds = 0;  // measured duration
  // When a compute op ran beside it: disjoint, in order, in seconds from the
  // copy's start, within [0, seconds).
  std::vector<Interval> beside;
};

struct CopyFit {
  double rate = 0;                    // B/s alone
  std::optional<double> beside_rate;  // B/s beside compute; unset where not seen to differ
  double latency = 0;                 // s per copy
  int ops = 0;
  double rms_residual = 0;  // s
};

// The model the simulator has (sim/lane_models.h): a copy moves its bytes
// at `rate` while no compute op runs and at `beside_rate` while one does,
// then waits `latency`. So, with beta the share of its bytes it moved
// beside compute,
//   seconds = latency + bytes / rate + bytes x beta x (1 / beside_rate - 1 / rate),
// linear in the three unknowns for a given beta; beta follows from the
// time the compute ops overlapped the copy's flowing part (its span less
// the latency) and the two rates, so the fit alternates the two to a fixed
// point. Without copies of both kinds, or where the fit finds copies
// faster beside compute, one line (least_squares) and no beside rate. A
// negative fixed cost means none, as for every line the calibration fits.
// Then, of four or more copies, those whose residual is more than five
// standard deviations of the others (from the median residual) are left
// out and the fit made again: a copy whose thread the OS did not run for
// milliseconds would otherwise become a fixed cost of every copy (issue
// 14's replays of eleven runs: copy lanes' busy errors over 15 % went from
// 11 to 4 with it; 5 at three deviations, 4 at eight). nullopt with
// fewer than two points or no positive rate.
[[nodiscard]] std::optional<CopyFit> fit_copies(const std::vector<CopyPoint>& points);

// For each of `spans`, the parts of it any of `others` overlapped, merged,
// in seconds from the span's start (CopyPoint::beside).
[[nodiscard]] std::vector<std::vector<Interval>> overlaps(const std::vector<Interval>& spans,
                                                          std::vector<Interval> others);

}  // namespace stowage::calibration
