#include "cli/stop_signals.h"

#include <signal.h>
#include <unistd.h>

namespace stowage::cli {
namespace {

std::atomic<int> g_received{0};  // lock-free, so the handler may touch it
struct sigaction g_previous_int, g_previous_term;

extern "C" void on_stop_signal(int signal_number) {
  if (g_received.exchange(signal_number) != 0) _exit(128 + signal_number);
}

}  // namespace

StopSignals::StopSignals() {
  g_received = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

const std::atomic<int>& StopSignals::received() {
  return g_received;
}

}  // namespace stowage::cli
