#include "planner/nvme_wear.h"

namespace stowage::planner {

NvmeWear nvme_wear(core::Bytes written_per_step, core::Seconds step_time, const core::MachineSpec& machine) {
  NvmeWear w{.written_per_step = written_per_step};
  if (written_per_step.count() <= 0 || step_time.value() <= 0 || machine.nvme_count == 0) return w;
  const double rated = machine.nvme.endurance.as_double() * machine.nvme_count;
  const double per_day = written_per_step.as_double() * (86400.0 / step_time.value());
  w.days_to_rated = rated / per_day;
  return w;
}

}  // namespace stowage::planner
