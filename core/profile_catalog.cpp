#include "core/profile_catalog.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/nearest_name.h"
#include "core/profile_reader.h"
#include "core/profile_reference.h"

#ifndef STOWAGE_PROFILES_DIR
#define STOWAGE_PROFILES_DIR "profiles"
#endif

namespace stowage::core {
namespace fs = std::filesystem;

namespace {

std::string profile_name(const fs::path& path) { return path.stem().string(); }

// Why a path given for a profile is not one (issue 12: a directory, a FIFO
// and a symlink loop all said "unknown profile" or "internal error").
std::string why_not_a_profile(const fs::file_status& st, const std::error_code& ec) {
  switch (st.type()) {
    case fs::file_type::directory:
      return "it is a directory, not a profile file";
    case fs::file_type::fifo:
      return "it is a FIFO, not a profile file";
    case fs::file_type::character:
    case fs::file_type::block:
      return "it is a device, not a profile file";
    case fs::file_type::socket:
      return "it is a socket, not a profile file";
    default:
      break;
  }
  if (ec && ec != std::errc::no_such_file_or_directory) return "cannot use it: " + ec.message();
  return "no such file";
}

// Loads a file and hands its text to one of the profile readers.
template <class Spec, class Reader>
Result<Spec> load(const ProfileCatalog& catalog, ProfileKind kind, std::string_view name_or_path,
                  Reader reader) {
  Result<fs::path> path = catalog.locate(kind, name_or_path);
  if (!path) return std::unexpected(path.error());
  Result<std::string> text = read_input_file(*path, InputKind::kProfile);
  if (!text) return std::unexpected(text.error());
  return reader(*text, path->string(), profile_name(*path));
}

// Resolves one reference of a machine file; a failure is reported where the
// machine names the part, followed by the part's own diagnostics.
template <class Spec>
bool resolve(Result<Spec> part, const SourceLocation& at, std::string_view field, Spec& out,
             Diagnostics& diagnostics) {
  if (part) {
    out = std::move(*part);
    return true;
  }
  const Diagnostic& first = part.error().front();
  if (first.where.line == 0) {  // the profile itself is missing
    diagnostics.push_back({at, std::string(field) + ": " + first.what, first.expected});
  } else {
    diagnostics.push_back({at, std::string(field) + ": the referenced profile has errors", "see below"});
    diagnostics.insert(diagnostics.end(), part.error().begin(), part.error().end());
  }
  return false;
}

}  // namespace

ProfileCatalog::ProfileCatalog(fs::path root) : root_(std::move(root)) {}

fs::path ProfileCatalog::default_root() {
  if (const char* env = std::getenv("STOWAGE_PROFILES"); env != nullptr && *env != '\0') return env;
  return STOWAGE_PROFILES_DIR;
}

std::vector<std::string> ProfileCatalog::names(ProfileKind kind) const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(root_ / folder_name(kind), ec)) {
    // No throw: a symlink loop in the folder is no profile, not an internal error.
    std::error_code entry_ec;
    if (e.is_regular_file(entry_ec) && e.path().extension() == ".yaml") out.push_back(profile_name(e.path()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<fs::path> ProfileCatalog::locate(ProfileKind kind, std::string_view name_or_path) const {
  if (is_path_reference(name_or_path)) {
    fs::path path(name_or_path);
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);  // no throw: a symlink loop is bad input, not a crash
    if (fs::is_regular_file(st)) return path;
    return fail({{path.string(), 0, 0},
                 why_not_a_profile(st, ec),
                 "a path to a " + std::string(format_word(kind)) + " profile"});
  }
  fs::path path = root_ / folder_name(kind) / (std::string(name_or_path) + ".yaml");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_regular_file(st)) return path;
  // Something is there under the name but is no file (a directory, a FIFO,
  // a link to a device or a loop): say what, not "unknown profile" (issue 12).
  std::error_code link_ec;
  if (fs::symlink_status(path, link_ec).type() != fs::file_type::not_found) {
    return fail({{path.string(), 0, 0}, why_not_a_profile(st, ec),
                 "a " + std::string(format_word(kind)) + " profile file"});
  }
  const std::vector<std::string> known = names(kind);
  std::string expected = did_you_mean(name_or_path, known);
  std::string list;
  for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
  expected += "known " + std::string(format_word(kind)) + " profiles: " + list;
  return fail({{}, "unknown " + std::string(format_word(kind)) + " profile '" + std::string(name_or_path) + "'",
               expected});
}

Result<GpuSpec> ProfileCatalog::gpu(std::string_view n) const {
  return load<GpuSpec>(*this, ProfileKind::kGpu, n, read_gpu_profile);
}
std::optional<GpuSpec> ProfileCatalog::gpu_for_device(std::string_view device_name) const {
  for (const std::string& name : names(ProfileKind::kGpu)) {
    Result<GpuSpec> g = gpu(name);
    if (g && std::ranges::find(g->device_names, device_name) != g->device_names.end()) return std::move(*g);
  }
  return std::nullopt;
}

Result<NvmeSpec> ProfileCatalog::nvme(std::string_view n) const {
  return load<NvmeSpec>(*this, ProfileKind::kNvme, n, read_nvme_profile);
}
Result<HostSpec> ProfileCatalog::host(std::string_view n) const {
  return load<HostSpec>(*this, ProfileKind::kHost, n, read_host_profile);
}
Result<ModelSpec> ProfileCatalog::model(std::string_view n) const {
  return load<ModelSpec>(*this, ProfileKind::kModel, n, read_model_profile);
}
Result<TrainingSpec> ProfileCatalog::training(std::string_view n) const {
  return load<TrainingSpec>(*this, ProfileKind::kTraining, n, read_training_profile);
}

Result<MachineSpec> ProfileCatalog::machine(std::string_view name_or_path) const {
  Result<fs::path> file = locate(ProfileKind::kMachine, name_or_path);
  if (!file) return std::unexpected(file.error());
  Result<MachineReferences> refs =
      load<MachineReferences>(*this, ProfileKind::kMachine, file->string(), read_machine_profile);
  if (!refs) return std::unexpected(refs.error());
  Diagnostics diagnostics;
  // A reference that may not be read is reported where the machine names it.
  auto place = [&](std::string& ref, const SourceLocation& at, std::string_view field) {
    Result<std::string> placed = confine_reference(*file, ref, root_, field, "machine profile");
    if (placed) {
      ref = *placed;
      return true;
    }
    const Diagnostic& d = placed.error().front();
    diagnostics.push_back({at, std::string(field) + ": " + d.what, d.expected});
    return false;
  };
  const bool gpu_ok = refs->gpu_inline || place(refs->gpu, refs->gpu_at, "gpu");
  const bool host_ok = refs->host_inline || place(refs->host, refs->host_at, "host");
  const bool nvme_ok = refs->nvme_inline || refs->nvme.empty() || place(refs->nvme, refs->nvme_at, "nvme");
  MachineSpec m{.name = refs->name, .label = refs->label, .source = refs->source,
                .gpu_count = refs->gpu_count, .nvme_count = refs->nvme_count};
  m.calibration = refs->calibration;
  if (refs->gpu_inline) m.gpu = *refs->gpu_inline;
  else if (gpu_ok) resolve(gpu(refs->gpu), refs->gpu_at, "gpu", m.gpu, diagnostics);
  if (refs->host_inline) m.host = *refs->host_inline;
  else if (host_ok) resolve(host(refs->host), refs->host_at, "host", m.host, diagnostics);
  if (refs->nvme_inline) m.nvme = *refs->nvme_inline;
  else if (!refs->nvme.empty() && nvme_ok) resolve(nvme(refs->nvme), refs->nvme_at, "nvme", m.nvme, diagnostics);
  if (!diagnostics.empty()) return std::unexpected(diagnostics);
  return m;
}

}  // namespace stowage::core
