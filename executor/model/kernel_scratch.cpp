#include "executor/model/kernel_scratch.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

namespace stowage::executor::model {
namespace {

thread_local ScratchRegion* installed = nullptr;

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

Temporary::Temporary(int64_t floats) : region_(installed) {
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
  view_ = region_->region_.subspan(region_->used_, n);
  region_->used_ += n;
  region_->high_water_ = std::max(region_->high_water_, region_->used_);
  std::fill(view_.begin(), view_.end(), 0.0f);
}

Temporary::Temporary(std::span<const float> copy_of) : Temporary(static_cast<int64_t>(copy_of.size())) {
  std::copy(copy_of.begin(), copy_of.end(), view_.begin());
}

Temporary::~Temporary() {
  if (region_ == nullptr) return;
  // Scoped temporaries end in the reverse order they began.
  if (view_.data() + view_.size() != region_->region_.data() + region_->used_) {
    std::fputs("stowage: a kernel temporary outlived a later one (a bug)\n", stderr);
    std::terminate();
  }
  region_->used_ -= view_.size();
}

}  // namespace stowage::executor::model
