// The temporaries of the model's kernels (a backward's gradients of the
// intermediate tensors, attention's score gradients, a recompute's discarded
// output): drawn from a region the caller installs on its thread while one
// layer computes - the executor's device buffer, of the size lowering
// declares for the op (the model's scratch_floats) - or, with none
// installed, from the heap (tests, evaluation). Temporaries are scoped, so
// the region is used as a stack; running out of it is a bug (the model and
// what lowering declared disagree), reported as one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace stowage::executor::model {

class ScratchRegion {
 public:
  // Installs `region` on this thread until destruction (regions nest).
  explicit ScratchRegion(std::span<float> region);
  ~ScratchRegion();
  ScratchRegion(const ScratchRegion&) = delete;
  ScratchRegion& operator=(const ScratchRegion&) = delete;

  // The most floats its temporaries held at once so far.
  [[nodiscard]] size_t high_water() const { return high_water_; }

 private:
  friend class Temporary;
  std::span<float> region_;
  size_t used_ = 0;
  size_t high_water_ = 0;
  ScratchRegion* outer_;
};

// Is a region installed on this thread (a layer computing for the
// executor, where every buffer must be one the schedule declares)?
[[nodiscard]] bool scratch_region_installed();

// The region is the device's, and its addresses may not be host ones (the
// CPU backend's opaque device memory). While a HostAddresses lives on this
// thread, a temporary is handed out at the host address `map` gives: what a
// CPU kernel that takes temporaries of its own (causal attention's
// backward) installs around itself. A null map maps nothing.
class HostAddresses {
 public:
  using Map = const void* (*)(const void* device);
  explicit HostAddresses(Map map);
  ~HostAddresses();
  HostAddresses(const HostAddresses&) = delete;
  HostAddresses& operator=(const HostAddresses&) = delete;

 private:
  Map outer_;
};

// One kernel temporary, zero-filled (or a copy) by the thread's layer
// kernels (layer_kernels.h), which alone touch the region.
class Temporary {
 public:
  explicit Temporary(int64_t floats);
  explicit Temporary(std::span<const float> copy_of);
  ~Temporary();
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;

  [[nodiscard]] float* data() { return view_.data(); }
  [[nodiscard]] size_t size() const { return view_.size(); }
  [[nodiscard]] float* begin() { return view_.data(); }
  [[nodiscard]] float* end() { return view_.data() + view_.size(); }

 private:
  // Takes the floats; zeroes them when asked (a copy overwrites them all).
  Temporary(int64_t floats, bool zeroed);

  ScratchRegion* region_;
  size_t at_ = 0;  // where in the region it begins
  std::vector<float> owned_;
  std::span<float> view_;
};

}  // namespace stowage::executor::model
