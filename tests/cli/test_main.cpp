// The command-line tests' main: on the same OpenBLAS kernels as the command
// (cli/main.cpp), since they compare results computed in this process with
// those of its processes bit for bit.
#include <gtest/gtest.h>

#include "executor/model/blas_kernels.h"

int main(int argc, char** argv) {
  stowage::executor::model::restart_on_better_blas_kernels(argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
