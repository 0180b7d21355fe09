#include "sim/simulator.h"

#include "sim/lane_models.h"
#include "sim/step_floor.h"

namespace stowage::sim {

Prediction simulate(const core::Schedule& schedule, const core::MachineSpec& machine, const SimulateOptions& options) {
  const CostParameters& params = options.params ? *options.params : machine.calibration;
  const ModelContext context{.machine = machine, .params = params, .ranks = schedule.ranks,
                             .pinned = schedule.pinned, .bf16 = schedule.bf16};
  const Capacities capacities = capacities_for(context);
  std::vector<Demand> demands;
  demands.reserve(schedule.ops.size());
  for (const core::Op& op : schedule.ops) demands.push_back(demand_of(op, context, capacities));
  core::TimelineRecorder recorder(schedule.ops.size());
  Prediction p;
  p.engine = run_engine(schedule, demands, capacities, recorder);
  p.timeline = recorder.take();
  p.summary = summarize(schedule, p.timeline, p.engine.peak, step_floor(schedule, demands, capacities));
  return p;
}

}  // namespace stowage::sim
