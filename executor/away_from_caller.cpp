#include "executor/away_from_caller.h"

#include <unistd.h>

namespace stowage::executor {

AwayFromCaller::AwayFromCaller() {
  placing_ = ::sched_getaffinity(::getpid(), sizeof process_cpus_, &process_cpus_) == 0 &&
             CPU_COUNT(&process_cpus_) >= 2;
}

void AwayFromCaller::place(std::span<const pthread_t> threads, bool again) {
  const int cpu = ::sched_getcpu();
  if (!placing_ || cpu < 0 || (cpu == kept_off_ && !again)) return;
  cpu_set_t elsewhere = process_cpus_;
  CPU_CLR(cpu, &elsewhere);
  if (CPU_COUNT(&elsewhere) == 0) elsewhere = process_cpus_;
  for (const pthread_t t : threads) (void)::pthread_setaffinity_np(t, sizeof elsewhere, &elsewhere);
  kept_off_ = cpu;
}

}  // namespace stowage::executor
