// Where what a layer's forward keeps lives: storage the caller provides
// (the executor's device buffer, allocated as the schedule declares) or,
// when it provides none, the object's own (tests, evaluation). The saved
// tensors are views laid out one after another in it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "executor/model/kernel_scratch.h"

namespace stowage::executor::model {

class SavedStorage {
 public:
  SavedStorage() = default;
  SavedStorage(SavedStorage&&) = default;
  SavedStorage& operator=(SavedStorage&&) = default;
  // Views point into the storage: a copy would alias or dangle.
  SavedStorage(const SavedStorage&) = delete;
  SavedStorage& operator=(const SavedStorage&) = delete;

  // The next lay_out uses `region`, which must hold exactly what it lays out.
  void provide(std::span<float> region) { region_ = region; }

  // Every lay_out only counts: the views stay empty and nothing is
  // allocated, for learning what a micro-batch keeps before any memory is
  // declared for it (a plan's micro-batch of a million sequences asked for
  // 2.2 TB of host memory just to be sized).
  void measure_only() { measuring_ = true; }

  // Points each view at the next `size` floats of the provided region, or
  // of storage of its own when none was provided.
  void lay_out(std::initializer_list<std::pair<std::span<float>*, int64_t>> parts) {
    int64_t total = 0;
    for (const auto& [view, size] : parts) total += size;
    if (measuring_) {
      for (const auto& [view, size] : parts) *view = {};
      floats_ = total;
      return;
    }
    std::span<float> base = region_;
    if (base.empty()) {
      // Computing for the executor, every buffer is one the schedule declares.
      if (scratch_region_installed())
        throw std::logic_error("a layer laid out " + std::to_string(4 * total) +
                               " B of saved state in memory of its own (a bug: undeclared memory)");
      owned_.resize(static_cast<size_t>(total));
      base = owned_;
    } else if (static_cast<int64_t>(base.size()) != total) {
      throw std::invalid_argument("the layer keeps " + std::to_string(4 * total) + " B where its region holds " +
                                  std::to_string(4 * base.size()) +
                                  " B (a bug: the model and what lowering declared for it disagree on memory)");
    }
    int64_t at = 0;
    for (const auto& [view, size] : parts) {
      *view = base.subspan(static_cast<size_t>(at), static_cast<size_t>(size));
      at += size;
    }
    floats_ = total;
  }

  // Floats the last lay_out placed: what the layer keeps.
  [[nodiscard]] int64_t floats() const { return floats_; }

 private:
  std::span<float> region_;
  std::vector<float> owned_;
  int64_t floats_ = 0;
  bool measuring_ = false;
};

}  // namespace stowage::executor::model
