// Names of the schedule's enums as files and traces write them.
#include "core/schedule.h"

namespace stowage::core {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::kForward: return "forward";
    case OpKind::kRecompute: return "recompute";
    case OpKind::kBackward: return "backward";
    case OpKind::kUploadParams: return "upload_params";
    case OpKind::kOffloadGrads: return "offload_grads";
    case OpKind::kOptimizer: return "optimizer";
    case OpKind::kReadStates: return "read_states";
    case OpKind::kWriteStates: return "write_states";
    case OpKind::kReadParams: return "read_params";
    case OpKind::kWriteParams: return "write_params";
    case OpKind::kAllGather: return "all_gather";
    case OpKind::kReduceScatter: return "reduce_scatter";
    case OpKind::kAllReduce: return "all_reduce";
    case OpKind::kGradCheck: return "grad_check";
    case OpKind::kCheckpoint: return "checkpoint";
    case OpKind::kAcceptUpdate: return "accept_update";
    case OpKind::kOffloadParams: return "offload_params";
  }
  return "";
}

}  // namespace stowage::core
