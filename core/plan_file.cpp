// Writing and reading plan files. The writer spells every number so that it
// reads back bit for bit: doubles in their shortest round-trip form
// (std::to_chars), sizes as whole numbers of one unit. The reader uses
// YamlMap, so every problem in a file is reported at once.
#include "core/plan_file.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "core/yaml_reader.h"

namespace stowage::core {
namespace {

using namespace literals;

constexpr std::string_view kFormatWord = "plan";

// The words a plan file uses for enums; one table each serves the writer and
// the reader, so the two cannot drift apart.
constexpr std::array<std::pair<std::string_view, Tier>, 3> kTierWords{
    {{"gpu", Tier::kGpu}, {"cpu", Tier::kCpu}, {"nvme", Tier::kNvme}}};
constexpr std::array<std::pair<std::string_view, OptimizerDevice>, 2> kOptimizerWords{
    {{"cpu", OptimizerDevice::kCpu}, {"gpu", OptimizerDevice::kGpu}}};
constexpr std::array<std::pair<std::string_view, StatePrecision>, 2> kStatePrecisionWords{
    {{"fp32", StatePrecision::kFp32}, {"bf16", StatePrecision::kBf16}}};

// Sanity ranges. Depths past 64 partitions ahead buy nothing and more than
// 1024 staging buffers is a unit slip; a sub-group above 10^13 parameters is
// larger than any model. Predicted figures only need to be real and not
// negative; their upper bounds are far past any machine.
constexpr Bounds<int64_t> kZeroStage{0, 3};
constexpr Bounds<int64_t> kSubGroupParams{0, 10'000'000'000'000};
constexpr Bounds<int64_t> kPrefetchDepth{0, 64};
constexpr Bounds<int64_t> kStagingBuffers{1, 1024};
constexpr Bounds<Bytes> kStagingBufferSize{0_B, 1_TiB};
constexpr Bounds<Bytes> kNvmeBlockSize{4_KiB, 256_MiB};
constexpr Bounds<int64_t> kNvmeQueueDepth{1, 1024};
constexpr Bounds<Bytes> kPeakMemory{0_B, Bytes(std::numeric_limits<int64_t>::max())};
constexpr Bounds<Seconds> kStepTime{Seconds(0), Seconds(1e12)};
constexpr Bounds<double> kTokensPerSecond{0, 1e18};
constexpr Bounds<double> kTflopsPerGpu{0, 1e9};

// ----------------------------------------------------------------- writing

template <class E, size_t N>
std::string word_of(const std::array<std::pair<std::string_view, E>, N>& words, E value) {
  for (const auto& [word, each] : words) {
    if (each == value) return std::string(word);
  }
  return "";
}

// The shortest decimal text from_chars reads back as exactly `v`.
std::string shortest(double v) {
  std::array<char, 32> buffer{};  // "-2.2250738585072014e-308" is 24
  char* end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), v).ptr;
  return std::string(buffer.data(), end);
}

// The shortest exact spelling of a size in one unit: "64 MiB", "3 GB",
// "1000000007 B". Exact because the count is a whole multiple of the unit.
std::string exact_size(Bytes b) {
  struct Unit {
    std::string_view name;
    int64_t bytes;
  };
  static constexpr auto kUnits = std::to_array<Unit>({
      {"KiB", int64_t{1} << 10}, {"MiB", int64_t{1} << 20}, {"GiB", int64_t{1} << 30},
      {"TiB", int64_t{1} << 40}, {"PiB", int64_t{1} << 50}, {"EiB", int64_t{1} << 60},
      {"kB", 1'000}, {"MB", 1'000'000}, {"GB", 1'000'000'000}, {"TB", 1'000'000'000'000},
      {"PB", 1'000'000'000'000'000}, {"EB", 1'000'000'000'000'000'000},
  });
  std::string best = std::to_string(b.count()) + " B";
  if (b.count() == 0) return best;
  for (const Unit& unit : kUnits) {
    if (b.count() % unit.bytes != 0) continue;
    std::string text = std::to_string(b.count() / unit.bytes) + " " + std::string(unit.name);
    if (text.size() < best.size()) best = std::move(text);
  }
  return best;
}

bool plain_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == '/' || c == '+';
}

// A name as a YAML scalar: plain when it cannot be misread (profile names
// always can be), otherwise double-quoted with escapes, so that names such
// as "null", "" or "a: b # c" come back unchanged.
std::string yaml_scalar(std::string_view s) {
  const bool is_null_word = s == "null" || s == "Null" || s == "NULL";
  const bool plain = !s.empty() && s.front() != '-' && !is_null_word &&
                     std::all_of(s.begin(), s.end(), plain_safe);
  if (plain) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      constexpr std::string_view kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void write_line(std::string& out, std::string_view indent, std::string_view key, std::string_view value) {
  out.append(indent).append(key).append(": ").append(value).append("\n");
}

std::string_view yes_no(bool value) { return value ? "true" : "false"; }

// One partition as a flow map on one line, so a plan of hundreds of
// partitions stays a table a reader can scan.
std::string partition_line(const PartitionPolicy& p) {
  return "{param16: " + word_of(kTierWords, p.param16) +
         ", optimizer_states: " + word_of(kTierWords, p.optimizer_states) +
         ", optimizer: " + word_of(kOptimizerWords, p.optimizer) +
         ", gradients: " + word_of(kTierWords, p.gradients) + "}";
}

void write_policy(std::string& out, const Policy& p, const std::vector<std::string>& names) {
  constexpr std::string_view kIn = "  ";
  out += "policy:\n";
  write_line(out, kIn, "zero_stage", std::to_string(static_cast<int>(p.stage)));
  write_line(out, kIn, "sub_group_params", std::to_string(p.sub_group_params));
  if (p.gather_params > 0) write_line(out, kIn, "gather_params", std::to_string(p.gather_params));
  write_line(out, kIn, "nvme_prefetch_depth", std::to_string(p.nvme_prefetch_depth));
  write_line(out, kIn, "h2d_prefetch_depth", std::to_string(p.h2d_prefetch_depth));
  write_line(out, kIn, "staging_buffers", std::to_string(p.staging_buffers));
  write_line(out, kIn, "staging_buffer_size", exact_size(p.staging_buffer_size));
  write_line(out, kIn, "pinned_memory", yes_no(p.pinned_memory));
  write_line(out, kIn, "nvme_block_size", exact_size(p.nvme_block_size));
  write_line(out, kIn, "nvme_queue_depth", std::to_string(p.nvme_queue_depth));
  write_line(out, kIn, "delayed_update", yes_no(p.delayed_update));
  if (p.speculative_update) write_line(out, kIn, "speculative_update", yes_no(p.speculative_update));
  write_line(out, kIn, "activation_checkpointing", yes_no(p.activation_checkpointing));
  // Written only when bf16, so plans written before the field read the same.
  if (p.optimizer_state_precision != StatePrecision::kFp32)
    write_line(out, kIn, "optimizer_state_precision", word_of(kStatePrecisionWords, p.optimizer_state_precision));
  write_line(out, kIn, "micro_batch", std::to_string(p.micro_batch));
  write_line(out, kIn, "gradient_accumulation", std::to_string(p.gradient_accumulation));
  if (p.partitions.empty()) {
    write_line(out, kIn, "partitions", "[]");
    return;
  }
  out += "  partitions:\n";
  for (size_t j = 0; j < p.partitions.size(); ++j) {
    out += "    - " + partition_line(p.partitions[j]);
    // A name that YAML could read as more than a comment is not written.
    if (j < names.size() && names[j].find('\n') == std::string::npos) out += "  # " + names[j];
    out += "\n";
  }
}

void write_predicted(std::string& out, const PredictedFigures& f) {
  constexpr std::string_view kIn = "  ";
  out += "predicted:\n";
  write_line(out, kIn, "step_time", shortest(f.step_time.value()) + " s");
  write_line(out, kIn, "tokens_per_second", shortest(f.tokens_per_second));
  write_line(out, kIn, "model_tflops_per_gpu", shortest(f.model_tflops_per_gpu));
  out += "  peak_memory:\n";
  for (const Tier tier : kAllTiers) {
    write_line(out, "    ", to_string(tier), exact_size(f.peak_memory[static_cast<size_t>(tier)]));
  }
  write_line(out, kIn, "bounding_lane", yaml_scalar(f.bounding_lane));
}

// ----------------------------------------------------------------- reading

PartitionPolicy read_partition(YamlMap& m) {
  PartitionPolicy p;
  assign(p.param16, m.choice<Tier>("param16", Need::kRequired, kTierWords));
  assign(p.optimizer_states, m.choice<Tier>("optimizer_states", Need::kRequired, kTierWords));
  assign(p.optimizer, m.choice<OptimizerDevice>("optimizer", Need::kRequired, kOptimizerWords));
  assign(p.gradients, m.choice<Tier>("gradients", Need::kRequired, kTierWords));
  // Refused here, where the file can say where: lowering has no gradient
  // swap to NVMe (ZeRO-Infinity's), so the gradients would stay in CPU RAM.
  if (p.gradients == Tier::kNvme) {
    m.report("gradients", "gradients on nvme are not supported (no gradient swap to NVMe is modelled)",
             "gpu or cpu; put the optimizer states on nvme instead");
  }
  m.finish();
  return p;
}

// Every policy field is required: a plan records decisions, and a default
// filled in by whichever Stowage reads it could change between versions.
Policy read_policy(YamlMap& m, PlanPlaces& places) {
  Policy p;
  m.record_places(places.fields);
  assign(p.stage, m.integer("zero_stage", Need::kRequired, kZeroStage));
  assign(p.sub_group_params, m.integer("sub_group_params", Need::kRequired, kSubGroupParams));
  assign(p.gather_params, m.integer("gather_params", Need::kOptional, kSubGroupParams));
  assign(p.nvme_prefetch_depth, m.integer("nvme_prefetch_depth", Need::kRequired, kPrefetchDepth));
  assign(p.h2d_prefetch_depth, m.integer("h2d_prefetch_depth", Need::kRequired, kPrefetchDepth));
  assign(p.staging_buffers, m.integer("staging_buffers", Need::kRequired, kStagingBuffers));
  assign(p.staging_buffer_size, m.bytes("staging_buffer_size", Need::kRequired, kStagingBufferSize));
  assign(p.pinned_memory, m.boolean("pinned_memory", Need::kRequired));
  assign(p.nvme_block_size, m.bytes("nvme_block_size", Need::kRequired, kNvmeBlockSize));
  if (p.nvme_block_size.count() % 4096 != 0) {
    m.report("nvme_block_size", std::to_string(p.nvme_block_size.count()) + " B is not a multiple of 4 KiB",
             "a multiple of 4096 bytes (O_DIRECT alignment), e.g. 1 MiB");
  }
  assign(p.nvme_queue_depth, m.integer("nvme_queue_depth", Need::kRequired, kNvmeQueueDepth));
  assign(p.delayed_update, m.boolean("delayed_update", Need::kRequired));
  assign(p.speculative_update, m.boolean("speculative_update", Need::kOptional));
  assign(p.activation_checkpointing, m.boolean("activation_checkpointing", Need::kRequired));
  // Absent: fp32, the precision of every plan written before the field.
  assign(p.optimizer_state_precision,
         m.choice<StatePrecision>("optimizer_state_precision", Need::kOptional, kStatePrecisionWords));
  // 0: as the training profile says.
  assign(p.micro_batch, m.integer("micro_batch", Need::kRequired, {0, 1'000'000}));
  assign(p.gradient_accumulation, m.integer("gradient_accumulation", Need::kRequired, {0, 1'000'000}));
  if (std::optional<std::vector<YamlMap>> list = m.list_of_maps("partitions", Need::kRequired)) {
    for (YamlMap& element : *list) {
      element.record_places(places.fields);
      p.partitions.push_back(read_partition(element));
    }
  }
  m.finish();
  return p;
}

PredictedFigures read_predicted(YamlMap& m) {
  PredictedFigures f;
  assign(f.step_time, m.duration("step_time", Need::kRequired, kStepTime));
  assign(f.tokens_per_second, m.number("tokens_per_second", Need::kRequired, kTokensPerSecond));
  assign(f.model_tflops_per_gpu, m.number("model_tflops_per_gpu", Need::kRequired, kTflopsPerGpu));
  if (std::optional<YamlMap> peak = m.map("peak_memory", Need::kRequired)) {
    for (const Tier tier : kAllTiers) {
      assign(f.peak_memory[static_cast<size_t>(tier)], peak->bytes(to_string(tier), Need::kRequired, kPeakMemory));
    }
    peak->finish();
  }
  assign(f.bounding_lane, m.text("bounding_lane", Need::kRequired));
  m.finish();
  return f;
}

Result<PlanFile> plan_from_yaml(const YAML::Node& root, const std::string& file) {
  Diagnostics diagnostics;
  YamlMap map(root, file, diagnostics);
  if (!check_format(map, root, kFormatWord)) return std::unexpected(diagnostics);
  PlanFile plan;
  plan.places.file = file;
  map.record_places(plan.places.fields);
  assign(plan.machine, map.text("machine", Need::kRequired));
  assign(plan.model, map.text("model", Need::kRequired));
  assign(plan.training, map.text("training", Need::kRequired));
  if (std::optional<YamlMap> policy = map.map("policy", Need::kRequired)) plan.policy = read_policy(*policy, plan.places);
  if (std::optional<YamlMap> predicted = map.map("predicted", Need::kOptional)) {
    plan.predicted = read_predicted(*predicted);
  }
  map.finish();
  if (!diagnostics.empty()) return std::unexpected(diagnostics);
  return plan;
}

}  // namespace

std::string write_plan(const PlanFile& plan, const std::vector<std::string>& partition_names) {
  std::string out = "format: stowage/" + std::string(kFormatWord) + "/v1\n";
  write_line(out, "", "machine", yaml_scalar(plan.machine));
  write_line(out, "", "model", yaml_scalar(plan.model));
  write_line(out, "", "training", yaml_scalar(plan.training));
  write_policy(out, plan.policy, partition_names);
  if (plan.predicted) write_predicted(out, *plan.predicted);
  return out;
}

Result<PlanFile> read_plan(const std::string& text, const std::string& file) {
  Result<YAML::Node> root = load_yaml_text(text, file);
  if (!root) return std::unexpected(root.error());
  return plan_from_yaml(*root, file);
}

Result<PlanFile> load_plan(const std::filesystem::path& path, const std::filesystem::path& profiles_root) {
  Result<YAML::Node> root = load_yaml_file(path.string());
  if (!root) return std::unexpected(root.error());
  Result<PlanFile> plan = plan_from_yaml(*root, path.string());
  if (!plan) return plan;
  // Issue 12 item 4: a plan someone sent may not make Stowage read
  // `model: ../../etc/shadow`; each refusal at the reference's own line.
  Diagnostics refused;
  for (auto [ref, field] : {std::pair{&plan->machine, "machine"}, std::pair{&plan->model, "model"},
                            std::pair{&plan->training, "training"}}) {
    Result<std::string> placed = confine_reference(path, *ref, profiles_root, field, "plan");
    if (placed) {
      *ref = std::move(*placed);
      continue;
    }
    Diagnostic d = placed.error().front();
    d.what = std::string(field) + ": " + d.what;
    refused.push_back(std::move(d));
  }
  if (refused.empty()) return plan;
  locate_in_plan(refused, plan->places);
  return std::unexpected(std::move(refused));
}

namespace {

// "policy.partitions[3].optimizer" -> "policy.partitions[3]" ->
// "policy.partitions" -> "policy" -> "".
std::string_view enclosing_field(std::string_view field) {
  const size_t cut = field.find_last_of(".[");
  return cut == std::string_view::npos ? std::string_view() : field.substr(0, cut);
}

bool starts_with_a_field(std::string_view what) {
  for (const std::string_view top : {"policy", "machine", "model", "training", "predicted"}) {
    if (what.starts_with(top) && what.size() > top.size() && (what[top.size()] == '.' || what[top.size()] == ':'))
      return true;
  }
  return false;
}

}  // namespace

void locate_in_plan(Diagnostics& diagnostics, const PlanPlaces& places) {
  if (places.file.empty()) return;
  for (Diagnostic& d : diagnostics) {
    if (!d.where.file.empty() || !starts_with_a_field(d.what)) continue;
    d.where = {places.file, 0, 0};
    for (std::string_view field = std::string_view(d.what).substr(0, d.what.find(": ")); !field.empty();
         field = enclosing_field(field)) {
      if (const auto at = places.fields.find(field); at != places.fields.end()) {
        d.where = at->second;
        break;
      }
    }
  }
}

std::vector<std::string> references_refused_on_reading(const PlanFile& plan,
                                                       const std::filesystem::path& plan_path,
                                                       const std::filesystem::path& profiles_root) {
  std::vector<std::string> out;
  for (auto [ref, field] : {std::pair{&plan.machine, "machine"}, std::pair{&plan.model, "model"},
                            std::pair{&plan.training, "training"}}) {
    if (confine_reference(plan_path, *ref, profiles_root, field, "plan")) continue;
    out.push_back(std::string(field) + ": '" + *ref + "' lies outside the folder of " + plan_path.string() +
                  " and the profile folder, so reading that plan back needs the file copied beside it or " +
                  kAllowProfilePathsVariable + "=1");
  }
  return out;
}

void locate_reference_problems(Diagnostics& diagnostics, std::string_view field, const PlanPlaces& places) {
  if (places.file.empty()) return;
  for (Diagnostic& d : diagnostics) {
    if (d.where.file.empty()) d.what = std::string(field) + ": " + d.what;
  }
  locate_in_plan(diagnostics, places);
}

PlanFile with_references_relative_to(PlanFile plan, const std::filesystem::path& plan_path) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::absolute(plan_path).parent_path().lexically_normal();
  for (std::string* ref : {&plan.machine, &plan.model, &plan.training}) {
    if (!is_path_reference(*ref)) continue;
    const fs::path target = fs::absolute(*ref).lexically_normal();
    const fs::path relative = target.lexically_relative(folder);
    *ref = relative.empty() ? target.string() : spelled_as_path(relative);
  }
  return plan;
}

}  // namespace stowage::core
