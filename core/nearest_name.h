// Suggests the valid name closest to a misspelt one ("memroy" -> "memory"),
// for "did you mean" hints in diagnostics.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stowage::core {

// Edit distance counting insertions, deletions, substitutions and swaps of
// neighbouring characters as 1 each (optimal string alignment), since a
// swap ("memroy") is the commonest typo.
[[nodiscard]] int edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `name`, if it is close enough to be a plausible
// typo: at most a third of the longer name's length, and at least 1 edit.
// Ties go to the earlier candidate, so the result is deterministic.
[[nodiscard]] std::optional<std::string> nearest_name(std::string_view name,
                                                      std::span<const std::string> candidates);

// The candidates that begin with `prefix`, in their order: what a user may
// have meant by a name's first part ("workstation" for
// "workstation-24gb-1nvme"). None for an empty prefix.
[[nodiscard]] std::vector<std::string> names_beginning(std::string_view prefix,
                                                       std::span<const std::string> candidates);

// The hint for an unknown name among `candidates`, with a trailing space:
// "did you mean one of 'h100-pcie', 'h100-sxm'? " for the names it begins
// (first: "h100" is one edit from "h200" but meant an H100), else "did you
// mean 'llama-2-13b'? " for the nearest plausible typo, else "".
[[nodiscard]] std::string did_you_mean(std::string_view name, std::span<const std::string> candidates);

}  // namespace stowage::core
