// The resident memory a schedule declares beyond the partitions' homes
// (pinned staging buffers, runtime reserves), held for the whole run, so
// that what rests on each tier as the run starts is exactly what the
// schedule (and so the simulator) says. hold() checks it.
#pragma once

#include <vector>

#include "core/diagnostic.h"
#include "core/schedule.h"
#include "executor/backend.h"

namespace stowage::executor {

class ResidentBuffers {
 public:
  // Allocates every resident item of `schedule` that is not a partition's
  // home (core::kParamsAtRest, core::kStatesAtRest; PartitionHomes holds
  // those), then checks each tier's use against schedule.resident.
  static core::Result<ResidentBuffers> hold(Backend& backend, const core::Schedule& schedule);

  ResidentBuffers(ResidentBuffers&& other) noexcept
      : backend_(other.backend_), held_(std::move(other.held_)) {
    other.held_.clear();
  }
  ResidentBuffers& operator=(ResidentBuffers&&) = delete;
  ~ResidentBuffers();

 private:
  explicit ResidentBuffers(Backend& backend) : backend_(backend) {}
  Backend& backend_;
  std::vector<Buffer> held_;
};

}  // namespace stowage::executor
