#include "core/profile_catalog.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

namespace fs = std::filesystem;
using testing::bundled;
using testing::must;

TEST(ProfileCatalog, EveryBundledProfileLoads) {
  const ProfileCatalog catalog = bundled();
  int loaded = 0;
  for (const std::string& n : catalog.names(ProfileKind::kGpu)) loaded += must(catalog.gpu(n)).memory.count() > 0;
  for (const std::string& n : catalog.names(ProfileKind::kNvme)) loaded += must(catalog.nvme(n)).capacity.count() > 0;
  for (const std::string& n : catalog.names(ProfileKind::kHost)) loaded += must(catalog.host(n)).dram.count() > 0;
  for (const std::string& n : catalog.names(ProfileKind::kMachine)) loaded += must(catalog.machine(n)).gpu_count > 0;
  for (const std::string& n : catalog.names(ProfileKind::kModel)) loaded += must(catalog.model(n)).layers > 0;
  for (const std::string& n : catalog.names(ProfileKind::kTraining)) loaded += must(catalog.training(n)).micro_batch > 0;
  EXPECT_GE(loaded, 55);
}

TEST(ProfileCatalog, BundlesTheProfilesTheIssueAsksFor) {
  const ProfileCatalog c = bundled();
  auto has = [&](ProfileKind k, const std::vector<std::string>& want) {
    const std::vector<std::string> names = c.names(k);
    for (const std::string& w : want) {
      EXPECT_TRUE(std::find(names.begin(), names.end(), w) != names.end()) << w;
    }
  };
  has(ProfileKind::kGpu, {"v100-sxm2-32gb", "a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "l4", "t4",
                          "a10", "l40s", "rtx-3090", "rtx-4090", "rtx-5090"});
  has(ProfileKind::kNvme, {"samsung-980-pro-2tb", "samsung-990-pro-2tb", "wd-sn850x-2tb", "micron-7450-pro-3840gb",
                           "crucial-t705-2tb"});
  has(ProfileKind::kMachine, {"workstation-24gb-1nvme", "workstation-24gb-4nvme", "dgx-2", "dgx-a100", "h100-node",
                              "cloud-t4-vm"});
  has(ProfileKind::kModel, {"gpt2", "gpt2-xl", "opt-1.3b", "opt-175b", "gpt3-175b", "llama-2-7b", "llama-2-13b",
                            "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-405b", "mistral-7b",
                            "mixtral-8x7b", "tiny-gpt", "tiny-llama"});
}

// The executor's rotary embeddings take the profile's base: each model's
// config.json rope_theta (issue 17), not Llama 2's 10000 for everyone.
TEST(ProfileCatalog, RopeModelsCarryTheirConfigRopeTheta) {
  const ProfileCatalog catalog = bundled();
  const std::map<std::string, double> expected = {
      {"llama-2-7b", 1e4},     {"llama-2-13b", 1e4}, {"llama-2-70b", 1e4},     {"mistral-7b", 1e4},
      {"llama-3-8b", 5e5},     {"llama-3-70b", 5e5}, {"llama-3.1-405b", 5e5}, {"mixtral-8x7b", 1e6}};
  for (const auto& [name, theta] : expected) EXPECT_EQ(must(catalog.model(name)).rope_theta, theta) << name;
}

TEST(ProfileCatalog, MachinesResolveTheirParts) {
  const MachineSpec dgx2 = must(bundled().machine("dgx-2"));
  EXPECT_EQ(dgx2.gpu_count, 16);
  EXPECT_EQ(dgx2.gpu.memory, Bytes(int64_t{32} << 30));
  EXPECT_EQ(dgx2.host.dram, Bytes(int64_t{1536} << 30));  // 1.5 TiB
  EXPECT_EQ(dgx2.nvme_count, 8);
  const MachineSpec t4 = must(bundled().machine("cloud-t4-vm"));
  EXPECT_EQ(t4.host.dram, Bytes(208'000'000'000));
  EXPECT_EQ(t4.nvme_count, 4);
}

// Every bundled GPU names the device the CUDA driver reports for it, and
// no two claim the same device: `stowage profile --gpu auto` and
// bench/gpu/this-machine find a GPU's profile by that name, exactly.
TEST(ProfileCatalog, EachBundledGpuIsFoundByItsOwnDeviceName) {
  const ProfileCatalog catalog = bundled();
  std::set<std::string> seen;
  for (const std::string& name : catalog.names(ProfileKind::kGpu)) {
    const GpuSpec gpu = must(catalog.gpu(name));
    EXPECT_FALSE(gpu.device_names.empty()) << name;
    for (const std::string& device : gpu.device_names) {
      EXPECT_TRUE(seen.insert(device).second) << device << " is claimed twice";
      const std::optional<GpuSpec> found = catalog.gpu_for_device(device);
      ASSERT_TRUE(found.has_value()) << device;
      EXPECT_EQ(found->name, name);
    }
  }
  EXPECT_EQ(catalog.gpu_for_device("NVIDIA H200")->name, "h200");
  EXPECT_EQ(catalog.gpu_for_device("NVIDIA H100 80GB HBM3")->name, "h100-sxm");
  EXPECT_FALSE(catalog.gpu_for_device("NVIDIA H100 NVL").has_value());  // other figures: no neighbour's guess
  EXPECT_FALSE(catalog.gpu_for_device("nvidia h200").has_value());      // exact names only
}

TEST(ProfileCatalog, UnknownNameSuggestsTheNearest) {
  auto r = bundled().gpu("a100-80g");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error()[0].what, "unknown gpu profile 'a100-80g'");
  EXPECT_TRUE(r.error()[0].expected.starts_with("did you mean 'a100-80gb'?")) << r.error()[0].expected;
}

// A name's first part suggests the names it begins, before any one-edit
// typo: "workstation" said only "known machine profiles: ...", and "h100"
// would be one edit from "h200".
TEST(ProfileCatalog, UnknownPrefixSuggestsTheNamesItBegins) {
  auto machine = bundled().machine("workstation");
  ASSERT_FALSE(machine);
  EXPECT_TRUE(machine.error()[0].expected.starts_with(
      "did you mean one of 'workstation-24gb-1nvme', 'workstation-24gb-4nvme'? known machine profiles: "))
      << machine.error()[0].expected;
  auto gpu = bundled().gpu("h100");
  ASSERT_FALSE(gpu);
  EXPECT_TRUE(gpu.error()[0].expected.starts_with("did you mean one of 'h100-pcie', 'h100-sxm'?"))
      << gpu.error()[0].expected;
  auto one = bundled().machine("cloud");
  ASSERT_FALSE(one);
  EXPECT_TRUE(one.error()[0].expected.starts_with("did you mean 'cloud-t4-vm'?")) << one.error()[0].expected;
}

class TempProfiles : public ::testing::Test {
 protected:
  fs::path root = fs::temp_directory_path() / ("stowage-catalog-" + std::to_string(::getpid()));
  void SetUp() override {
    fs::remove_all(root);
    for (const char* d : {"gpus", "hosts", "machines", "nvme"}) fs::create_directories(root / d);
    fs::copy_file(fs::path(STOWAGE_PROFILES_DIR) / "hosts" / "dgx-a100-host.yaml", root / "hosts" / "h.yaml");
  }
  void TearDown() override { fs::remove_all(root); }
  void write(const fs::path& rel, const std::string& text) { std::ofstream(root / rel) << text; }
};

TEST_F(TempProfiles, MissingReferenceIsReportedWhereTheMachineNamesIt) {
  write("machines/m.yaml", "format: stowage/machine/v1\nlabel: m\nsource: s\ngpu: a100-80gb\ngpu_count: 1\nhost: h\nnvme_count: 0\n");
  auto r = ProfileCatalog(root).machine("m");
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 1u);
  EXPECT_EQ(r.error()[0].where.file, (root / "machines" / "m.yaml").string());
  EXPECT_EQ(r.error()[0].where.line, 4);
  EXPECT_EQ(r.error()[0].what, "gpu: unknown gpu profile 'a100-80gb'");
}

TEST_F(TempProfiles, BrokenReferencedProfileIsReportedWithItsOwnLine) {
  write("gpus/g.yaml", "format: stowage/gpu/v1\nlabel: g\nsource: s\nmemory: lots\n");
  write("machines/m.yaml", "format: stowage/machine/v1\nlabel: m\nsource: s\ngpu: g\ngpu_count: 1\nhost: h\nnvme_count: 0\n");
  auto r = ProfileCatalog(root).machine("m");
  ASSERT_FALSE(r);
  ASSERT_GE(r.error().size(), 2u);
  EXPECT_EQ(r.error()[0].what, "gpu: the referenced profile has errors");
  EXPECT_EQ(r.error()[1].where.file, (root / "gpus" / "g.yaml").string());
  EXPECT_EQ(r.error()[1].where.line, 4);
}

TEST_F(TempProfiles, LoadsByPath) {
  write("gpus/g.yaml", "format: stowage/gpu/v1\nlabel: g\nsource: s\nmemory: 16 GiB\nmemory_bandwidth: 320 GB/s\n"
                       "fp16_rate: 65 TFLOP/s\nfp32_rate: 8.1 TFLOP/s\npcie_generation: 3\npcie_lanes: 16\n");
  auto r = ProfileCatalog("/nonexistent").gpu((root / "gpus" / "g.yaml").string());
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->name, "g");
}

TEST_F(TempProfiles, MissingFileIsReportedByPath) {
  auto r = ProfileCatalog(root).gpu("gpus/none.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error()[0].to_string(), "gpus/none.yaml: no such file (a path to a gpu profile)");
}

// Issue 12: a directory or FIFO given as a profile said "unknown profile",
// a symlink loop "internal error" (an exception out of is_regular_file).
TEST_F(TempProfiles, APathThatIsNotAFileSaysWhatItIs) {
  ASSERT_EQ(::mkfifo((root / "gpus" / "fifo.yaml").c_str(), 0600), 0);
  fs::create_symlink(root / "gpus" / "b.yaml", root / "gpus" / "a.yaml");
  fs::create_symlink(root / "gpus" / "a.yaml", root / "gpus" / "b.yaml");
  const ProfileCatalog catalog(root);
  const auto what = [&](const fs::path& p) {
    auto r = catalog.gpu(p.string());
    return r ? std::string("loaded") : r.error()[0].what;
  };
  EXPECT_EQ(what(root / "gpus" / ""), "it is a directory, not a profile file");
  EXPECT_EQ(what(root / "gpus" / "fifo.yaml"), "it is a FIFO, not a profile file");
  EXPECT_EQ(what("/dev/null"), "it is a device, not a profile file");
  fs::create_symlink("/dev/zero", root / "gpus" / "zero.yaml");
  EXPECT_EQ(what(root / "gpus" / "zero.yaml"), "it is a device, not a profile file");
  EXPECT_NE(what(root / "gpus" / "a.yaml").find("cannot use it: Too many levels of symbolic links"),
            std::string::npos);
}

// The same by name: `--gpu fifo` found profiles/gpus/fifo.yaml, which is no
// file, and said "unknown gpu profile 'fifo' (did you mean ...)"; and a
// symlink loop anywhere in the folder made every unknown name an internal
// error (listing the known names threw).
TEST_F(TempProfiles, ANameWhoseFileIsNotAFileSaysWhatItIs) {
  ASSERT_EQ(::mkfifo((root / "gpus" / "fifo.yaml").c_str(), 0600), 0);
  fs::create_directories(root / "gpus" / "folder.yaml");
  fs::create_symlink("/dev/zero", root / "gpus" / "zero.yaml");
  fs::create_symlink(root / "gpus" / "loop.yaml", root / "gpus" / "loop.yaml");
  const ProfileCatalog catalog(root);
  const auto said = [&](const char* name) {
    auto r = catalog.gpu(name);
    return r ? std::string("loaded") : r.error()[0].to_string();
  };
  const std::string at = (root / "gpus").string() + "/";
  EXPECT_EQ(said("fifo"), at + "fifo.yaml: it is a FIFO, not a profile file (a gpu profile file)");
  EXPECT_EQ(said("folder"), at + "folder.yaml: it is a directory, not a profile file (a gpu profile file)");
  EXPECT_EQ(said("zero"), at + "zero.yaml: it is a device, not a profile file (a gpu profile file)");
  EXPECT_NE(said("loop").find("loop.yaml: cannot use it: Too many levels of symbolic links"), std::string::npos)
      << said("loop");
  EXPECT_TRUE(said("nothing-here").starts_with("unknown gpu profile 'nothing-here'")) << said("nothing-here");
}

}  // namespace
}  // namespace stowage::core

namespace stowage::core {
namespace {

constexpr const char* kAllowProfilePathsVariable = "STOWAGE_ALLOW_PROFILE_PATHS";  // README, docs/formats/profiles.md

// Issue 12 item 4: `gpu: ../../../../etc/shadow` in a machine profile was
// read, and every line of it came back as an "unknown key" error.
class ProfileReferences : public TempProfiles {
 protected:
  void SetUp() override {
    TempProfiles::SetUp();
    ::unsetenv(kAllowProfilePathsVariable);
    outside = root.parent_path() / ("stowage-outside-" + std::to_string(::getpid()));
    fs::create_directories(outside);
    std::ofstream(outside / "secret.yaml") << "root:$6$hash-of-a-password:19000:0:99999:7:::\n";
    std::ofstream(outside / "g.yaml") << kGpu;
  }
  void TearDown() override {
    ::unsetenv(kAllowProfilePathsVariable);
    fs::remove_all(outside);
    TempProfiles::TearDown();
  }
  void machine_naming(const std::string& gpu) {
    write("machines/m.yaml", "format: stowage/machine/v1\nlabel: m\nsource: s\ngpu: " + gpu +
                                 "\ngpu_count: 1\nhost: h\nnvme_count: 0\n");
  }
  static constexpr const char* kGpu =
      "format: stowage/gpu/v1\nlabel: g\nsource: s\nmemory: 16 GiB\nmemory_bandwidth: 320 GB/s\n"
      "fp16_rate: 65 TFLOP/s\nfp32_rate: 8.1 TFLOP/s\npcie_generation: 3\npcie_lanes: 16\n";
  fs::path outside;
};

TEST_F(ProfileReferences, APathOutsideTheProfileFoldersIsNotRead) {
  const std::string escape = "../../" + outside.filename().string() + "/secret.yaml";
  machine_naming(escape);
  auto r = ProfileCatalog(root).machine("m");
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 1u) << to_string(r.error());
  EXPECT_EQ(r.error()[0].where.file, (root / "machines" / "m.yaml").string());
  EXPECT_EQ(r.error()[0].where.line, 4);
  EXPECT_TRUE(r.error()[0].what.starts_with("gpu: the reference '" + escape + "' lies outside")) << r.error()[0].what;
  EXPECT_NE(r.error()[0].expected.find("STOWAGE_ALLOW_PROFILE_PATHS=1"), std::string::npos);
  EXPECT_EQ(to_string(r.error()).find("hash-of-a-password"), std::string::npos);
  machine_naming((outside / "g.yaml").string());  // an absolute path outside, too
  EXPECT_FALSE(ProfileCatalog(root).machine("m"));
}

TEST_F(ProfileReferences, PathsInsideTheProfileFolderOrBesideTheMachineAreRead) {
  write("gpus/g.yaml", kGpu);
  machine_naming("../gpus/g.yaml");  // beside the machine file, inside the profile folder
  auto r = ProfileCatalog(root).machine("m");
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->gpu.name, "g");
  // A machine file elsewhere reads its parts beside it, whatever the working directory.
  fs::copy_file(root / "hosts" / "h.yaml", outside / "h.yaml");
  std::ofstream(outside / "m.yaml") << "format: stowage/machine/v1\nlabel: m\nsource: s\ngpu: ./g.yaml\n"
                                       "gpu_count: 1\nhost: ./h.yaml\nnvme_count: 0\n";
  auto beside = ProfileCatalog("/nonexistent").machine((outside / "m.yaml").string());
  ASSERT_TRUE(beside) << to_string(beside.error());
  EXPECT_EQ(beside->gpu.name, "g");
}

TEST_F(ProfileReferences, TheVariableAllowsAnyPath) {
  machine_naming((outside / "g.yaml").string());
  ::setenv(kAllowProfilePathsVariable, "1", 1);
  auto r = ProfileCatalog(root).machine("m");
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->gpu.name, "g");
}

TEST_F(ProfileReferences, AFileThatIsNoProfileIsNotEchoedBack) {
  // Given by the user, the file is read, but its lines (keys of no field) are not printed.
  auto r = ProfileCatalog(root).gpu((outside / "secret.yaml").string());
  ASSERT_FALSE(r);
  const std::string text = to_string(r.error());
  EXPECT_EQ(text.find("hash-of-a-password"), std::string::npos) << text;
  EXPECT_EQ(text.find("root:"), std::string::npos) << text;
  EXPECT_NE(text.find((outside / "secret.yaml").string() + ":1:1: unknown key (not shown: it is not a field name)"),
            std::string::npos)
      << text;
}

TEST_F(ProfileReferences, AMisspelledFieldIsStillNamed) {
  write("gpus/g.yaml", std::string(kGpu) + "pcie_lanse: 16\n");
  auto r = ProfileCatalog(root).gpu((root / "gpus" / "g.yaml").string());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error()[0].what, "unknown key 'pcie_lanse'");
}

}  // namespace
}  // namespace stowage::core

namespace stowage::core {
namespace {

// Issue 12: a million unknown keys took 35 s and 1.6 GB, a suggestion built
// for each; only the first 50 (all the CLI prints) get one, every key still
// counts.
TEST_F(TempProfiles, OnlyTheFirstFiftyUnknownKeysGetASuggestion) {
  std::string text = "format: stowage/gpu/v1\nlabel: g\nsource: s\nmemory: 16 GiB\nmemory_bandwidth: 320 GB/s\n"
                     "fp16_rate: 65 TFLOP/s\nfp32_rate: 8.1 TFLOP/s\npcie_generation: 3\npcie_lanes: 16\n";
  for (int i = 0; i < 70; ++i) text += "memroy_" + std::to_string(i) + ": 1\n";
  write("gpus/g.yaml", text);
  auto r = ProfileCatalog(root).gpu((root / "gpus" / "g.yaml").string());
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 70u);
  EXPECT_FALSE(r.error()[49].expected.empty());
  EXPECT_TRUE(r.error()[50].expected.empty());
  EXPECT_EQ(r.error()[69].what, "unknown key 'memroy_69'");
}

}  // namespace
}  // namespace stowage::core
