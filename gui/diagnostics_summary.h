// What an error dialog shows for a file with many problems: one line per
// kind of problem with the lines it occurs on ("unknown tier 'cpuu' (did
// you mean 'cpu') at lines 12, 14, 15 and 9 more"), not a screen-tall
// list; the full list goes to the dialog's details. GUI-free.
#pragma once

#include <string>

#include "core/diagnostic.h"

namespace stowage::gui {

struct SummaryLimits {
  size_t list_all_up_to = 5;  // this many problems or fewer are listed as they are
  size_t kinds = 6;           // kinds of problem shown, the most frequent first
  size_t lines_per_kind = 6;  // line numbers shown per kind
};

// "30 problems in plan.yaml:\n- unknown tier 'cpuu' (did you mean 'cpu')
// at lines 12, 14, ... and 22 more\n..." or, for a few, the problems one a line.
[[nodiscard]] std::string summarize(const core::Diagnostics& diagnostics, const SummaryLimits& limits = {});

}  // namespace stowage::gui
