// `stowage profiles [kind]`: lists bundled profiles with one line of key
// figures each.
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/text_table.h"
#include "core/workload.h"

namespace stowage::cli {
namespace {

using core::ProfileKind;
using nlohmann::json;

// Key figures of one profile, as a summary line and as JSON.
struct Summary {
  std::string line;
  json figures;
};

Summary summarize(const core::GpuSpec& g) {
  return {core::format_bytes(g.memory, core::Prefix::kBinary) + ", " +
              core::format_bandwidth(g.memory_bandwidth) + ", " + core::format_flops_rate(g.fp16_rate) +
              " fp16, PCIe Gen" + std::to_string(g.pcie_generation) + " x" + std::to_string(g.pcie_lanes),
          {{"memory_bytes", g.memory.count()},
           {"memory_bandwidth_bytes_per_s", g.memory_bandwidth.value()},
           {"fp16_flops_per_s", g.fp16_rate.value()},
           {"pcie_generation", g.pcie_generation},
           {"pcie_lanes", g.pcie_lanes},
           {"device_names", g.device_names}}};
}

Summary summarize(const core::NvmeSpec& n) {
  return {core::format_bytes(n.capacity) + ", read " + core::format_bandwidth(n.sequential_read) + ", write " +
              core::format_bandwidth(n.sequential_write) + ", " +
              std::to_string(n.endurance.count() / 1'000'000'000'000) + " TBW",
          {{"capacity_bytes", n.capacity.count()},
           {"sequential_read_bytes_per_s", n.sequential_read.value()},
           {"sequential_write_bytes_per_s", n.sequential_write.value()},
           {"endurance_bytes", n.endurance.count()}}};
}

Summary summarize(const core::HostSpec& h) {
  return {std::to_string(h.cpu_cores) + " cores, " + core::format_bytes(h.dram, core::Prefix::kBinary) +
              " DRAM at " + core::format_bandwidth(h.dram_bandwidth),
          {{"cpu_cores", h.cpu_cores},
           {"dram_bytes", h.dram.count()},
           {"dram_bandwidth_bytes_per_s", h.dram_bandwidth.value()}}};
}

Summary summarize(const core::MachineSpec& m) {
  std::string line = std::to_string(m.gpu_count) + "x " + m.gpu.name + ", " +
                     core::format_bytes(m.host.dram, core::Prefix::kBinary) + " RAM";
  if (m.nvme_count > 0) line += ", " + std::to_string(m.nvme_count) + "x " + m.nvme.name;
  return {line,
          {{"gpu", m.gpu.name},
           {"gpu_count", m.gpu_count},
           {"host", m.host.name},
           {"nvme", m.nvme_count > 0 ? json(m.nvme.name) : json(nullptr)},
           {"nvme_count", m.nvme_count}}};
}

Summary summarize(const core::ModelSpec& m) {
  const core::Workload w(m, m.max_positions);
  const double n = static_cast<double>(w.total_params());
  char params[32];
  if (n >= 1e12) std::snprintf(params, sizeof params, "%.3g T params", n / 1e12);
  else if (n >= 1e9) std::snprintf(params, sizeof params, "%.3g B params", n / 1e9);
  else std::snprintf(params, sizeof params, "%.3g M params", n / 1e6);
  std::string line = std::string(params) + ", " + std::to_string(m.layers) + " layers, d_model " +
                     std::to_string(m.d_model);
  if (m.experts > 1) line += ", " + std::to_string(m.experts) + " experts (top " + std::to_string(m.experts_per_token) + ")";
  return {line,
          {{"params", w.total_params()},
           {"active_params", w.active_params()},
           {"layers", m.layers},
           {"d_model", m.d_model}}};
}

Summary summarize(const core::TrainingSpec& t) {
  return {std::to_string(t.micro_batch) + " x " + std::to_string(t.sequence_length) + " tokens, accumulate " +
              std::to_string(t.gradient_accumulation) + ", " +
              (t.precision == core::Precision::kBf16 ? "bf16" : "fp16") + ", checkpointing " +
              (t.activation_checkpointing ? "on" : "off"),
          {{"micro_batch", t.micro_batch},
           {"sequence_length", t.sequence_length},
           {"gradient_accumulation", t.gradient_accumulation},
           {"precision", t.precision == core::Precision::kBf16 ? "bf16" : "fp16"},
           {"activation_checkpointing", t.activation_checkpointing}}};
}

// What the listing collects: the table for people, the JSON for scripts,
// and the problems of profiles that failed to load.
struct Listing {
  TextTable table{{Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft}};
  json out = json::array();
  core::Diagnostics problems;
};

template <class Spec>
void list_kind(const core::ProfileCatalog& catalog, ProfileKind kind,
               core::Result<Spec> (core::ProfileCatalog::*load)(std::string_view) const, Listing& listing) {
  for (const std::string& name : catalog.names(kind)) {
    core::Result<Spec> spec = (catalog.*load)(name);
    if (!spec) {
      listing.problems.insert(listing.problems.end(), spec.error().begin(), spec.error().end());
      continue;
    }
    const Summary s = summarize(*spec);
    listing.table.row({std::string(core::format_word(kind)), name, spec->label, s.line});
    json entry = {{"kind", core::format_word(kind)}, {"name", name}, {"label", spec->label},
                  {"source", spec->source}, {"summary", s.line}};
    entry["figures"] = s.figures;
    listing.out.push_back(entry);
  }
}

}  // namespace

CommandBody add_profiles_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("profiles", "List bundled profiles with their key figures");
  auto kind = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  sub->add_option("kind", *kind, "Only this kind")
      ->check(CLI::IsMember({"gpu", "nvme", "host", "machine", "model", "training"}));
  sub->add_flag("--json", *as_json, "Print JSON (docs/json.md)");
  return [&context, kind, as_json]() {
    const core::ProfileCatalog catalog = context.catalog();
    Listing listing;
    auto each = [&](ProfileKind k, auto load) {
      if (kind->empty() || *kind == core::format_word(k)) list_kind(catalog, k, load, listing);
    };
    each(ProfileKind::kGpu, &core::ProfileCatalog::gpu);
    each(ProfileKind::kNvme, &core::ProfileCatalog::nvme);
    each(ProfileKind::kHost, &core::ProfileCatalog::host);
    each(ProfileKind::kMachine, &core::ProfileCatalog::machine);
    each(ProfileKind::kModel, &core::ProfileCatalog::model);
    each(ProfileKind::kTraining, &core::ProfileCatalog::training);
    if (*as_json) {
      *context.out << listing.out.dump(2) << '\n';
    } else {
      listing.table.print(*context.out);
    }
    return listing.problems.empty() ? kExitOk : report(context, listing.problems);
  };
}

}  // namespace stowage::cli
