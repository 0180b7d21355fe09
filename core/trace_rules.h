// Rules every reader of Stowage's traces holds an event to (issue 12), so
// `compare` (core/trace_reader.h) and the GUI (gui/trace_loader.h) refuse
// the same things. Events come from core/trace_events.h's walker.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stowage::core {

// A time in µs that converts to int64 ns: finite and within ±4e15 µs (126
// years; a start plus a duration still fits). `ts: 1e308` overflowed the
// conversion.
inline constexpr double kMaxTraceMicros = 4e15;
[[nodiscard]] bool usable_trace_time(const std::optional<double>& us, bool non_negative);
// The largest op id a trace may give (args.id).
inline constexpr int64_t kMaxTraceOpId = 100'000'000;
// Whether `ph` is a phase of the Chrome trace event format ("X", "M", "C",
// flow events "s"/"t"/"f", ...): an event of another phase is a mistake, not
// something to skip.
[[nodiscard]] bool known_trace_phase(std::string_view ph);
// The expectation printed with a bad time or dependency.
inline constexpr const char* kTraceTimesExpected =
    "ts and dur in microseconds, finite and below 4e15, dur not negative";
inline constexpr const char* kTraceDepsExpected =
    "dependencies on earlier ops of the trace, as a Stowage schedule lists them";

}  // namespace stowage::core
