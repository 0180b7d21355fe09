// Where a reference written inside a file may lead (issue 12 item 4): a
// machine profile's `gpu:`/`host:`/`nvme:` and a plan's `machine:`/`model:`/
// `training:` name a bundled profile or a path. A path is read beside the
// file that holds it and only inside that file's folder or the profile
// folder, so that a file someone sent cannot make Stowage read
// `gpu: ../../etc/shadow`. One rule for both kinds of file, written here.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/diagnostic.h"

namespace stowage::core {

// Set to 1, a reference may be a path anywhere (README, docs/formats/).
inline constexpr const char* kAllowProfilePathsVariable = "STOWAGE_ALLOW_PROFILE_PATHS";

// True when a reference is a path rather than a bundled profile's name: it
// contains '/' or ends in .yaml or .yml.
[[nodiscard]] bool is_path_reference(std::string_view reference);

// A relative path spelled so that it still reads as a path reference: "m"
// would be taken for a bundled profile's name, "./m" is not.
[[nodiscard]] std::string spelled_as_path(const std::filesystem::path& path);

// What a reference found in `referring_file` stands for: a bundled name is
// returned as it is; a relative path is joined to the folder of
// `referring_file` (not the working directory) and returned spelled as a
// path ("./m.yaml" rather than "m"); any path must then lie inside that
// folder or inside `profiles_root`, judged on the names as written
// ("a/../../b" is outside "a"), unless STOWAGE_ALLOW_PROFILE_PATHS=1.
// A refusal is one diagnostic without a place, "the reference 'R' lies
// outside ...", whose expected part names `kind` ("a gpu profile name, ...")
// and the variable; the caller puts it at the line that holds the reference.
// `referrer` names the file in the message ("machine profile", "plan").
[[nodiscard]] Result<std::string> confine_reference(const std::filesystem::path& referring_file,
                                                    const std::string& reference,
                                                    const std::filesystem::path& profiles_root,
                                                    std::string_view kind, std::string_view referrer);

}  // namespace stowage::core
