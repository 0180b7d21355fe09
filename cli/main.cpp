// The `stowage` command. All wiring; the work happens in the libraries.
#include <iostream>

#include "cli/app.h"
#include "cli/exit_codes.h"
#include "executor/model/blas_kernels.h"

int main(int argc, char** argv) {
  // OpenBLAS's generic kernels where it does not know this CPU are 2.7x
  // slower than the ones it has for it (executor/model/blas_kernels.h).
  stowage::executor::model::restart_on_better_blas_kernels(argv);
  try {
    return stowage::cli::run_stowage(argc, argv, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return stowage::cli::kExitInternal;
  }
}
