// SIGINT and SIGTERM during `stowage run`, installed before its setup: the
// first asks the run to stop cleanly (the steps under way finish, a final
// checkpoint is written when --checkpoint-dir is given, NVMe block files
// are removed; one during setup stops before training) and the command
// exits with 128 + the signal (130, 143); a second one ends the process at
// once with the same code, as a user pressing Ctrl-C twice expects.
#pragma once

#include <atomic>

namespace stowage::cli {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // restores the previous ones
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // 0 until a signal arrives, then its number; what the trainer watches.
  [[nodiscard]] static const std::atomic<int>& received();
};

}  // namespace stowage::cli
