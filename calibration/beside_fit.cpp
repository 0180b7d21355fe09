#include "calibration/beside_fit.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "calibration/fit.h"

namespace stowage::calibration {
namespace {

// Residuals beyond this many standard deviations (estimated from the median
// residual) are left out of the fit: see fit_beside.
constexpr double kOutlierSpreads = 5;

// The least-squares coefficients of y on `columns` (the normal equations,
// by Gaussian elimination with partial pivoting: two or three unknowns, too
// few for a LAPACK call to pay), nullopt where the columns are (nearly)
// dependent.
template <size_t N>
std::optional<std::array<double, N>> solve_least_squares(const std::array<std::vector<double>, N>& columns,
                                                         const std::vector<double>& y) {
  std::array<std::array<double, N + 1>, N> a{};
  for (size_t i = 0; i < N; ++i) {
    for (size_t j = 0; j < N; ++j) {
      for (size_t k = 0; k < y.size(); ++k) a[i][j] += columns[i][k] * columns[j][k];
    }
    for (size_t k = 0; k < y.size(); ++k) a[i][N] += columns[i][k] * y[k];
  }
  std::array<double, N> scale{};
  for (size_t i = 0; i < N; ++i) scale[i] = std::sqrt(a[i][i]);
  for (size_t col = 0; col < N; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < N; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    std::swap(a[col], a[pivot]);
    // Relative to the columns' own sizes: a pivot this small is a column
    // that is (nearly) a combination of the others.
    if (std::abs(a[col][col]) <= 1e-9 * scale[col] * scale[col]) return std::nullopt;
    for (size_t r = 0; r < N; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c <= N; ++c) a[r][c] -= f * a[col][c];
    }
  }
  std::array<double, N> x{};
  for (size_t i = 0; i < N; ++i) x[i] = a[i][N] / a[i][i];
  return x;
}

// Seconds of [0, until) that `beside` covers.
double covered(const std::vector<Interval>& beside, double until) {
  double sum = 0;
  for (const Interval& i : beside) sum += std::max(0.0, std::min(i.end, until) - i.start);
  return sum;
}

// The share of an op's work done beside the crowd, given the fit so far:
// its flowing time is its span less the latency; of that, `phi` beside
// the crowd, at `ratio` = beside_rate / rate of the alone rate.
double share_of_work_beside(const BesidePoint& p, double latency, double ratio) {
  const double flowing = p.seconds - latency;
  if (flowing <= 0) return 0;
  const double phi = std::clamp(covered(p.beside, flowing) / flowing, 0.0, 1.0);
  return ratio * phi / ((1 - phi) + ratio * phi);
}

// An op's duration as the fit `f` has it.
double predicted_seconds(const BesidePoint& p, const BesideFit& f) {
  if (!f.beside_rate) return f.latency + p.work / f.rate;
  const double beta = share_of_work_beside(p, f.latency, *f.beside_rate / f.rate);
  return f.latency + p.work * (1 / f.rate + beta * (1 / *f.beside_rate - 1 / f.rate));
}

double rms_residual(const std::vector<BesidePoint>& points, const BesideFit& f) {
  double ss = 0;
  for (const BesidePoint& p : points) ss += std::pow(p.seconds - predicted_seconds(p, f), 2);
  return std::sqrt(ss / static_cast<double>(points.size()));
}

// {latency, s per unit alone, extra s per unit beside} for the given shares
// of work beside the crowd; the latency 0 where the fit with one is
// negative, or without `fixed_cost`.
std::optional<std::array<double, 3>> plane(const std::vector<BesidePoint>& points,
                                           const std::vector<double>& beta, bool fixed_cost) {
  std::vector<double> ones, work, beside_work, y;
  for (size_t i = 0; i < points.size(); ++i) {
    ones.push_back(1);
    work.push_back(points[i].work);
    beside_work.push_back(points[i].work * beta[i]);
    y.push_back(points[i].seconds);
  }
  if (fixed_cost) {
    if (auto c = solve_least_squares<3>({ones, work, beside_work}, y); c && (*c)[0] >= 0) return c;
  }
  if (auto c = solve_least_squares<2>({work, beside_work}, y))
    return std::array<double, 3>{0, (*c)[0], (*c)[1]};
  return std::nullopt;
}

// The fixed point of the plane fit and the shares of work it implies;
// nullopt where a round finds no rate or no slower rate beside the crowd.
std::optional<BesideFit> fit_plane(const std::vector<BesidePoint>& points, bool fixed_cost) {
  double latency = 0, ratio = 1;
  std::optional<std::array<double, 3>> c;
  std::vector<double> beta(points.size());
  for (int round = 0; round < 50; ++round) {
    for (size_t i = 0; i < points.size(); ++i) beta[i] = share_of_work_beside(points[i], latency, ratio);
    c = plane(points, beta, fixed_cost);
    if (!c || (*c)[1] <= 0 || (*c)[2] <= 0) return std::nullopt;
    const double next_ratio = (*c)[1] / ((*c)[1] + (*c)[2]);
    const double change =
        std::abs(next_ratio - ratio) + std::abs((*c)[0] - latency) / std::max(1e-12, points.front().seconds);
    latency = (*c)[0], ratio = next_ratio;
    if (change < 1e-12) break;
  }
  BesideFit f{.rate = 1 / (*c)[1],
              .beside_rate = 1 / ((*c)[1] + (*c)[2]),
              .latency = latency,
              .ops = static_cast<int>(points.size())};
  f.rms_residual = rms_residual(points, f);
  return f;
}

// The fit on all points: beside the crowd where seen, else one line.
std::optional<BesideFit> fit_all(const std::vector<BesidePoint>& points, bool fixed_cost) {
  if (points.size() < 2) return std::nullopt;
  if (std::optional<BesideFit> f = fit_plane(points, fixed_cost)) return f;
  std::vector<double> x, y;
  for (const BesidePoint& p : points) x.push_back(p.work), y.push_back(p.seconds);
  if (!fixed_cost) {  // through the origin
    double sxy = 0, sxx = 0;
    for (const BesidePoint& p : points) sxy += p.work * p.seconds, sxx += p.work * p.work;
    if (sxy <= 0 || sxx <= 0) return std::nullopt;
    BesideFit f{.rate = sxx / sxy, .ops = static_cast<int>(points.size())};
    f.rms_residual = rms_residual(points, f);
    return f;
  }
  const LineFit line = least_squares(x, y);
  if (line.slope <= 0) return std::nullopt;
  return BesideFit{.rate = 1 / line.slope,
                   .latency = std::max(0.0, line.intercept),
                   .ops = line.ops,
                   .rms_residual = line.rms_residual};
}

}  // namespace

std::optional<BesideFit> fit_beside(const std::vector<BesidePoint>& points, bool fixed_cost) {
  std::optional<BesideFit> f = fit_all(points, fixed_cost);
  if (!f || points.size() < 4) return f;
  // Residuals far beyond the others' spread: a copy's thread that the OS
  // did not run (a 3 KiB copy of 10 µs measured at 4.6 ms), which the fit
  // would otherwise spread over every op as a fixed cost.
  std::vector<double> residual;
  for (const BesidePoint& p : points) residual.push_back(std::abs(p.seconds - predicted_seconds(p, *f)));
  std::vector<double> sorted = residual;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  // A normal's standard deviation from its median absolute deviation; at
  // least a microsecond, below which the host's clocks and scheduler say
  // nothing (an exact timeline, as the simulator makes, has none left out).
  const double spread = std::max(1e-6, 1.4826 * sorted[sorted.size() / 2]);
  std::vector<BesidePoint> kept;
  for (size_t i = 0; i < points.size(); ++i) {
    if (residual[i] <= kOutlierSpreads * spread) kept.push_back(points[i]);
  }
  if (kept.size() == points.size() || kept.size() < 2) return f;
  return fit_all(kept, fixed_cost);
}

std::vector<std::vector<Interval>> overlaps(const std::vector<Interval>& spans,
                                            std::vector<Interval> others) {
  // Merged, so that others overlapping each other count once.
  std::sort(others.begin(), others.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& o : others) {
    if (o.end <= o.start) continue;
    if (!merged.empty() && o.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, o.end);
    } else {
      merged.push_back(o);
    }
  }
  std::vector<std::vector<Interval>> out;
  for (const Interval& s : spans) {
    std::vector<Interval>& parts = out.emplace_back();
    // The first merged interval that ends after the span starts.
    auto it = std::upper_bound(merged.begin(), merged.end(), s.start,
                               [](double t, const Interval& m) { return t < m.end; });
    for (; it != merged.end() && it->start < s.end; ++it) {
      const double a = std::max(s.start, it->start), b = std::min(s.end, it->end);
      if (b > a) parts.push_back({a - s.start, b - s.start});
    }
  }
  return out;
}

}  // namespace stowage::calibration
