// libFuzzer target for Chrome traces as `compare` and `calibrate` read them
// (issue 12 item 8), Stowage's own and PyTorch profiler traces alike: any
// bytes must give a trace or diagnostics, never a crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "calibration/kineto_trace.h"
#include "core/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)stowage::core::parse_recorded_trace(text, "fuzz.json");
  (void)stowage::calibration::parse_kineto_trace(text, "fuzz.json");
  return 0;
}
