#include "executor/model/kernel_scratch.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "executor/model/layer_kernels.h"

namespace stowage::executor::model {
namespace {

thread_local ScratchRegion* installed = nullptr;
thread_local HostAddresses::Map host_map = nullptr;

}  // namespace

bool scratch_region_installed() {
  return installed != nullptr;
}

ScratchRegion::ScratchRegion(std::span<float> region) : region_(region), outer_(installed) {
  installed = this;
}

ScratchRegion::~ScratchRegion() {
  installed = outer_;
}

HostAddresses::HostAddresses(Map map) : outer_(host_map) {
  host_map = map;
}

HostAddresses::~HostAddresses() {
  host_map = outer_;
}

Temporary::Temporary(int64_t floats) : Temporary(floats, true) {}

Temporary::Temporary(int64_t floats, bool zeroed) : region_(installed) {
  const auto n = static_cast<size_t>(floats);
  if (region_ == nullptr) {
    owned_.assign(n, 0.0f);
    view_ = owned_;
    return;
  }
  if (region_->used_ + n > region_->region_.size())
    throw std::length_error("the layer's kernels need more than the " + std::to_string(4 * region_->region_.size()) +
                            " B of scratch lowering declared (a bug: the model's scratch_floats and its kernels "
                            "disagree)");
  at_ = region_->used_;
  view_ = region_->region_.subspan(at_, n);
  if (host_map != nullptr) view_ = {static_cast<float*>(const_cast<void*>(host_map(view_.data()))), n};
  region_->used_ += n;
  region_->high_water_ = std::max(region_->high_water_, region_->used_);
  // The region is the device's: only its kernels write it.
  if (zeroed) layer_kernels().fill(view_.data(), 0.0f, floats);
}

Temporary::Temporary(std::span<const float> copy_of) : Temporary(static_cast<int64_t>(copy_of.size()), false) {
  layer_kernels().copy(view_.data(), copy_of.data(), static_cast<int64_t>(copy_of.size()));
}

Temporary::~Temporary() {
  if (region_ == nullptr) return;
  // Scoped temporaries end in the reverse order they began.
  if (at_ + view_.size() != region_->used_) {
    std::fputs("stowage: a kernel temporary outlived a later one (a bug)\n", stderr);
    std::terminate();
  }
  region_->used_ -= view_.size();
}

}  // namespace stowage::executor::model
