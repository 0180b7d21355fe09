// The stowage command run in-process with captured output, as the CLI
// tests call it.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace stowage::cli::testing {

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

inline Outcome stowage(std::vector<std::string> args) {
  args.insert(args.begin(), "stowage");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = run_stowage(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

}  // namespace stowage::cli::testing
