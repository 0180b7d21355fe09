// What every subcommand shares: the profile catalog and the output streams.
// Each subcommand lives in its own file and registers itself on the app.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>

#include <CLI/CLI.hpp>

#include "core/diagnostic.h"
#include "core/profile_catalog.h"

namespace stowage::cli {

struct Context {
  std::ostream* out;
  std::ostream* err;
  // Set by --profiles; defaults to ProfileCatalog::default_root().
  std::string profiles_root;
  [[nodiscard]] core::ProfileCatalog catalog() const;
};

// A registered subcommand's body; returns the process exit code.
using CommandBody = std::function<int()>;

// Each adds a subcommand to `app` and returns the body to run when chosen.
CommandBody add_profiles_command(CLI::App& app, Context& context);
CommandBody add_memory_command(CLI::App& app, Context& context);
CommandBody add_simulate_command(CLI::App& app, Context& context);
CommandBody add_plan_command(CLI::App& app, Context& context);
CommandBody add_fit_command(CLI::App& app, Context& context);
CommandBody add_whatif_command(CLI::App& app, Context& context);
CommandBody add_export_command(CLI::App& app, Context& context);
CommandBody add_run_command(CLI::App& app, Context& context);
CommandBody add_compare_command(CLI::App& app, Context& context);
CommandBody add_profile_command(CLI::App& app, Context& context);
CommandBody add_calibrate_command(CLI::App& app, Context& context);

// The most diagnostics report() prints; the rest are counted.
inline constexpr size_t kMaxDiagnosticsShown = 50;

// Prints diagnostics to the error stream, at most kMaxDiagnosticsShown and
// then how many more there are; returns kExitBadInput.
int report(const Context& context, const core::Diagnostics& diagnostics);

}  // namespace stowage::cli
