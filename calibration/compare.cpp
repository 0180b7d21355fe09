#include "calibration/compare.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace stowage::calibration {
namespace {

core::Diagnostics mismatches(const core::Schedule& p, const core::Schedule& m, const std::string& pn,
                             const std::string& mn) {
  core::Diagnostics out;
  if (p.ops.size() != m.ops.size()) {
    out.push_back({{mn, 0, 0},
                   "has " + std::to_string(m.ops.size()) + " ops, " + pn + " has " + std::to_string(p.ops.size()),
                   "two timelines of the same schedule (stowage run --trace and --predicted-trace)"});
    return out;
  }
  for (size_t i = 0; i < p.ops.size() && out.size() < 5; ++i) {
    if (p.ops[i].lane != m.ops[i].lane || p.ops[i].kind != m.ops[i].kind) {
      out.push_back({{mn, 0, 0},
                     "op " + std::to_string(i) + " is " + std::string(core::to_string(m.ops[i].kind)) + " on " +
                         std::string(core::to_string(m.ops[i].lane)) + ", in " + pn + " " +
                         std::string(core::to_string(p.ops[i].kind)) + " on " +
                         std::string(core::to_string(p.ops[i].lane)),
                     "the same op under the same id in both"});
    }
  }
  return out;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - (q > 0 ? 1 : 0);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

std::vector<KindError> kind_errors(const core::Schedule& s, const core::Timeline& p, const core::Timeline& m) {
  std::map<std::pair<int, int>, std::vector<double>> by_kind;
  for (const core::Op& op : s.ops) {
    const core::OpSpan& a = p.spans[static_cast<size_t>(op.id)];
    const core::OpSpan& b = m.spans[static_cast<size_t>(op.id)];
    const double pd = static_cast<double>(a.end - a.start), md = static_cast<double>(b.end - b.start);
    if (pd <= 0 && md <= 0) continue;  // bookkeeping ops (checkpoint, accept) take no time in either
    by_kind[{static_cast<int>(op.lane), static_cast<int>(op.kind)}].push_back(relative_error(pd, md));
  }
  std::vector<KindError> out;
  for (auto& [key, errors] : by_kind) {
    std::vector<double> magnitudes;
    for (double e : errors) magnitudes.push_back(std::abs(e));
    out.push_back({.lane = static_cast<core::Lane>(key.first), .kind = static_cast<core::OpKind>(key.second),
                   .ops = static_cast<int>(errors.size()), .median = quantile(errors, 0.5),
                   .p90 = quantile(magnitudes, 0.9)});
  }
  return out;
}

}  // namespace

double relative_error(double predicted, double measured) {
  if (predicted == 0) return measured == 0 ? 0 : 1;
  return (measured - predicted) / predicted;
}

core::Result<Comparison> compare(const core::Schedule& ps, const core::Timeline& p, const core::Schedule& ms,
                                 const core::Timeline& m, const std::string& pn, const std::string& mn) {
  if (core::Diagnostics d = mismatches(ps, ms, pn, mn); !d.empty()) return std::unexpected(d);
  Comparison c;
  c.predicted = trace_metrics(ps, p);
  c.measured = trace_metrics(ms, m);
  c.matched_ops = static_cast<int>(ps.ops.size());
  c.step_error = relative_error(static_cast<double>(c.predicted.steady_step_time()),
                                static_cast<double>(c.measured.steady_step_time()));
  c.makespan_error = relative_error(static_cast<double>(c.predicted.makespan), static_cast<double>(c.measured.makespan));
  core::SimTime worst = 0;
  for (core::Lane lane : core::kAllLanes) {
    const auto l = static_cast<size_t>(lane);
    const core::SimTime pb = c.predicted.lanes[l].busy, mb = c.measured.lanes[l].busy;
    if (pb == 0 && mb == 0) continue;
    c.busy_error[l] = relative_error(static_cast<double>(pb), static_cast<double>(mb));
    const core::SimTime p_step = c.predicted.lanes[l].steady_busy, m_step = c.measured.lanes[l].steady_busy;
    c.steady_busy_error[l] = relative_error(static_cast<double>(p_step), static_cast<double>(m_step));
    // Off by the most per steady step: what the lane's model costs the step
    // the comparison is about (a warm-up's page faults are not the model's
    // to predict).
    const core::SimTime off = m_step > p_step ? m_step - p_step : p_step - m_step;
    if (off > worst) {
      worst = off;
      c.most_wrong_lane = lane;
    }
  }
  c.kinds = kind_errors(ps, p, m);
  return c;
}

}  // namespace stowage::calibration
