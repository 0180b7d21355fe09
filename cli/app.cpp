#include "cli/app.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"

namespace stowage::cli {

core::ProfileCatalog Context::catalog() const {
  return core::ProfileCatalog(profiles_root.empty() ? core::ProfileCatalog::default_root()
                                                    : std::filesystem::path(profiles_root));
}

int report(const Context& context, const core::Diagnostics& diagnostics) {
  // A file of a million bad keys printed 207 MB of errors (issue 12): the
  // first ones say what is wrong, a count says how much.
  const size_t shown = std::min(diagnostics.size(), kMaxDiagnosticsShown);
  for (size_t i = 0; i < shown; ++i) *context.err << "error: " << diagnostics[i].to_string() << '\n';
  if (shown < diagnostics.size()) {
    *context.err << "error: ... and " << diagnostics.size() - shown << " more problems like these\n";
  }
  return kExitBadInput;
}

int run_stowage(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  Context context{.out = &out, .err = &err, .profiles_root = {}};
  CLI::App app{"Stowage: plans, simulates and runs optimizer-state offload for large-model training"};
  app.set_version_flag("--version", "stowage 0.1.0");
  app.add_option("--profiles", context.profiles_root, "Folder of profiles (default: the bundled ones)")
      ->check(CLI::ExistingDirectory);
  app.require_subcommand(1);
  std::map<const CLI::App*, CommandBody> bodies;
  auto add = [&](CommandBody body) { bodies[app.get_subcommands({}).back()] = std::move(body); };
  add(add_profiles_command(app, context));
  add(add_memory_command(app, context));
  add(add_simulate_command(app, context));
  add(add_plan_command(app, context));
  add(add_fit_command(app, context));
  add(add_whatif_command(app, context));
  add(add_export_command(app, context));
  add(add_run_command(app, context));
  add(add_compare_command(app, context));
  add(add_profile_command(app, context));
  add(add_calibrate_command(app, context));
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    // CLI11 checks for the required subcommand before it complains about
    // extras, so `stowage --bogus` said "A subcommand is required" (issue 12).
    if (const std::vector<std::string> extra = app.remaining();
        !extra.empty() && app.get_subcommands().empty()) {
      err << "error: unknown option '" << extra.front()
          << "' (stowage --help lists the options and subcommands)\n";
      return kExitUsage;
    }
    app.exit(e, out, err);
    return kExitUsage;
  }
  for (const CLI::App* sub : app.get_subcommands()) return bodies.at(sub)();
  return kExitUsage;
}

}  // namespace stowage::cli
