// rotary.h. For a pair (a, b) = (x[i], x[i + half]) at angle t:
//   forward  a' = a cos t - b sin t,  b' = b cos t + a sin t;
//   backward (the transpose) da = da' cos t + db' sin t, db = db' cos t - da' sin t,
// which is forward with sin negated.
#include "executor/model/rotary.h"

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>

namespace stowage::executor::model {
namespace {
std::atomic<uint64_t> next_id{1};
}  // namespace

RotaryTable::RotaryTable(int64_t head_dim, int64_t positions, double theta)
    : head_dim_(head_dim), positions_(positions), id_(next_id.fetch_add(1, std::memory_order_relaxed)) {
  if (head_dim < 2 || head_dim % 2 != 0 || positions < 1 || !(theta > 0)) {
    throw std::invalid_argument("RotaryTable: head_dim " + std::to_string(head_dim) + ", positions " +
                                std::to_string(positions) +
                                ": expected an even head_dim, positions >= 1, theta > 0");
  }
  const int64_t half = head_dim / 2;
  cos_.resize(static_cast<size_t>(positions * half));
  sin_.resize(cos_.size());
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      // inv_freq = 1 / theta^(2i / head_dim), as transformers' rope init.
      const double angle = static_cast<double>(p) *
                           std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
      cos_[static_cast<size_t>(p * half + i)] = static_cast<float>(std::cos(angle));
      sin_[static_cast<size_t>(p * half + i)] = static_cast<float>(std::sin(angle));
    }
  }
}

void RotaryTable::apply(float* x, int64_t batch, int64_t seq, int64_t heads, float direction) const {
  if (seq > positions_) throw std::invalid_argument("RotaryTable: sequence longer than the table");
  const int64_t half = head_dim_ / 2;
  const int64_t width = heads * head_dim_;
  for (int64_t token = 0; token < batch * seq; ++token) {
    const float* c = cos_.data() + (token % seq) * half;
    const float* s = sin_.data() + (token % seq) * half;
    for (int64_t h = 0; h < heads; ++h) {
      float* a = x + token * width + h * head_dim_;
      float* b = a + half;
      for (int64_t i = 0; i < half; ++i) {
        const float sn = direction * s[i];
        const float ai = a[i];
        a[i] = ai * c[i] - b[i] * sn;
        b[i] = b[i] * c[i] + ai * sn;
      }
    }
  }
}

void RotaryTable::rotate(float* x, int64_t batch, int64_t seq, int64_t heads) const {
  apply(x, batch, seq, heads, 1.0f);
}

void RotaryTable::rotate_back(float* dx, int64_t batch, int64_t seq, int64_t heads) const {
  apply(dx, batch, seq, heads, -1.0f);
}

}  // namespace stowage::executor::model
