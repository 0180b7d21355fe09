// libFuzzer target for Chrome traces as `compare` and `calibrate` read them
// (issue 12 item 8): any bytes must give a trace or diagnostics, never a
// crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)stowage::core::parse_recorded_trace(std::string_view(reinterpret_cast<const char*>(data), size),
                                            "fuzz.json");
  return 0;
}
