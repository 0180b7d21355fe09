// The `stowage` command. All wiring; the work happens in the libraries.
#include <iostream>

#include "cli/app.h"
#include "cli/exit_codes.h"

int main(int argc, char** argv) {
  try {
    return stowage::cli::run_stowage(argc, argv, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return stowage::cli::kExitInternal;
  }
}
