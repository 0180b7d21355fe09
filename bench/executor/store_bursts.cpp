// Reads beside writes through the executor's NVMe store, continuous and in
// bursts: what a region of each direction takes alone and beside the other
// when each caller moves one 32 MiB region after another (gap 0) or rests
// GAP ms after each (the executor's lanes move a partition's states and
// then wait for the next layer's compute). On the development VM
// (docs/fidelity.md, session 38) continuous reads starve writes (writes
// 0.49-0.61 GB/s beside reads, 1.46-2.44 alone) while with gaps of 20 or
// 50 ms both directions ran at the reads' alone rate (1.1-1.25 GB/s each):
// why the profile's continuous probes find a duplex near 1 and the
// executor's traces fit 1.7-2.0.
//
//   store_bursts DIR [GAP_MS ...]   (default gaps: 0 20)
//
// Works in DIR/store-bursts-<pid>, created and removed. Prints, per gap,
// twice: the median region time and rate of reads alone, writes alone and
// both at once. Exit status 0; 1 on an I/O error; 2 on bad arguments.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/units.h"
#include "executor/nvme/aligned_buffer.h"
#include "executor/nvme/block_store.h"

namespace {

using namespace stowage;
using Clock = std::chrono::steady_clock;
constexpr int64_t kRegion = int64_t{32} << 20;
constexpr int kRegions = 16;  // per direction

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::ranges::sort(v);
  return v[v.size() / 2];
}

struct Side {
  std::vector<executor::Extent> regions;
  executor::AlignedBuffer buffer{static_cast<size_t>(kRegion)};
  std::vector<double> seconds;  // per region, of the last pass
};

// One caller per direction that runs, each region then `gap` of rest.
void pass(executor::BlockStore& store, Side* reads, Side* writes, std::chrono::milliseconds gap) {
  auto run = [&](Side& side, bool write) {
    side.seconds.clear();
    const std::span<std::byte> data = side.buffer.span().first(static_cast<size_t>(kRegion));
    for (const executor::Extent& e : side.regions) {
      const auto start = Clock::now();
      if (write) {
        (void)store.write(e, data);
      } else {
        (void)store.read(e, data);
      }
      side.seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      std::this_thread::sleep_for(gap);
    }
  };
  std::thread r, w;
  if (reads) r = std::thread([&] { run(*reads, false); });
  if (writes) w = std::thread([&] { run(*writes, true); });
  if (r.joinable()) r.join();
  if (w.joinable()) w.join();
}

std::string column(const Side* side) {
  if (side == nullptr) return "-";
  const double s = median(side->seconds);
  char text[64];
  std::snprintf(text, sizeof text, "%.1f ms (%.2f GB/s)", s * 1e3, static_cast<double>(kRegion) / s / 1e9);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: store_bursts DIR [GAP_MS ...]\n");
    return 2;
  }
  std::vector<int> gaps;
  for (int i = 2; i < argc; ++i) {
    char* end = nullptr;
    const long gap = std::strtol(argv[i], &end, 10);
    if (*end != '\0' || gap < 0 || gap > 10'000) {
      std::fprintf(stderr, "store_bursts: GAP_MS '%s': expected milliseconds, 0 to 10000\n", argv[i]);
      return 2;
    }
    gaps.push_back(static_cast<int>(gap));
  }
  if (gaps.empty()) gaps = {0, 20};
  const std::filesystem::path dir = std::filesystem::path(argv[1]) / ("store-bursts-" + std::to_string(::getpid()));
  int status = 0;
  try {
    executor::BlockStoreOptions options;
    options.directories = {dir};
    core::Result<executor::BlockStore> opened = executor::BlockStore::open(options);
    if (!opened) {
      std::fprintf(stderr, "store_bursts: %s\n", core::to_string(opened.error()).c_str());
      return 1;
    }
    executor::BlockStore& store = *opened;
    Side reads, writes;
    std::memset(writes.buffer.data(), 0x5a, writes.buffer.size());
    for (int i = 0; i < kRegions; ++i) {
      reads.regions.push_back(store.reserve("read " + std::to_string(i), core::Bytes(kRegion)));
      writes.regions.push_back(store.reserve("write " + std::to_string(i), core::Bytes(kRegion)));
    }
    for (const executor::Extent& e : reads.regions) (void)store.write(e, writes.buffer.span().first(static_cast<size_t>(kRegion)));
    std::printf("%-7s %-9s %-24s %-24s\n", "gap", "running", "read region", "write region");
    for (const int gap : gaps) {
      for (int round = 0; round < 2; ++round) {
        const std::chrono::milliseconds g(gap);
        pass(store, &reads, nullptr, g);
        std::printf("%4d ms %-9s %-24s %-24s\n", gap, "reads", column(&reads).c_str(), "-");
        pass(store, nullptr, &writes, g);
        std::printf("%4d ms %-9s %-24s %-24s\n", gap, "writes", "-", column(&writes).c_str());
        pass(store, &reads, &writes, g);
        std::printf("%4d ms %-9s %-24s %-24s\n", gap, "both", column(&reads).c_str(), column(&writes).c_str());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "store_bursts: %s\n", e.what());
    status = 1;
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return status;
}
