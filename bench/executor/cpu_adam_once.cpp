// One CPU Adam kernel at one size and thread count, for side-by-side runs
// with the peers (bench/peers/adam): allocates and touches the arrays, runs
// one untimed pass, then --repeat timed passes, and prints one line per
// pass that bench/peers/adam_table.py reads:
//
//   stowage kernel=adam params=16777216 threads=2 seconds=0.0205
//
//   cpu_adam_once --kernel=adam|roofline --params=N[,N...] --threads=T [--repeat=5]
//
// Several sizes are measured one after another, each on arrays of its own.
//
// Exit status: 0, or 2 on bad arguments.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bench/executor/adam_arrays.h"

namespace {

using stowage::bench::Kernel;

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "cpu_adam_once: %s\nusage: cpu_adam_once --kernel=adam|roofline --params=N --threads=T "
               "[--repeat=5]\n",
               problem.c_str());
  std::exit(2);
}

long long number(std::string_view text, std::string_view flag) {
  char* end = nullptr;
  const std::string s(text);
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 1) usage(std::string(flag) + " needs a positive integer, got '" + s + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  Kernel kernel = Kernel::kAdam;
  std::vector<long long> sizes;
  long long threads = 1, repeat = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto value = [&a](std::string_view flag) { return a.substr(flag.size()); };
    if (a == "--kernel=adam")
      kernel = Kernel::kAdam;
    else if (a == "--kernel=roofline")
      kernel = Kernel::kRoofline;
    else if (a.starts_with("--params=")) {
      std::string_view list = value("--params=");
      for (size_t comma; (comma = list.find(',')) != std::string_view::npos; list.remove_prefix(comma + 1))
        sizes.push_back(number(list.substr(0, comma), "--params"));
      sizes.push_back(number(list, "--params"));
    }
    else if (a.starts_with("--threads="))
      threads = number(value("--threads="), "--threads");
    else if (a.starts_with("--repeat="))
      repeat = number(value("--repeat="), "--repeat");
    else
      usage("unknown argument '" + std::string(a) + "'");
  }
  if (sizes.empty()) usage("--params is required");
  const auto t = static_cast<int>(threads);
  for (const long long params : sizes) {
    stowage::bench::AdamArrays arrays(static_cast<size_t>(params), t);
    arrays.pass(kernel, t, stowage::executor::Isa::kAuto);  // untimed
    for (long long r = 0; r < repeat; ++r) {
      const double seconds = arrays.pass(kernel, t, stowage::executor::Isa::kAuto);
      std::printf("stowage kernel=%s params=%lld threads=%d seconds=%.6f\n",
                  kernel == Kernel::kAdam ? "adam" : "roofline", params, t, seconds);
      std::fflush(stdout);
    }
  }
  return 0;
}
