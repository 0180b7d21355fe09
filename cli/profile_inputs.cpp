#include "cli/profile_inputs.h"

namespace stowage::cli {

core::Result<ProfileInputs> load_inputs(const core::ProfileCatalog& catalog, const std::string& machine,
                                        const std::string& model, const std::string& training) {
  auto m = catalog.machine(machine);
  auto x = catalog.model(model);
  auto t = catalog.training(training);
  core::Diagnostics problems;
  for (const core::Diagnostics* d : {m ? nullptr : &m.error(), x ? nullptr : &x.error(), t ? nullptr : &t.error()}) {
    if (d != nullptr) problems.insert(problems.end(), d->begin(), d->end());
  }
  if (!problems.empty()) return std::unexpected(problems);
  return ProfileInputs{*m, *x, *t, machine, model, training};
}

}  // namespace stowage::cli
