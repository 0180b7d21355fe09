// cuBLASLt's handles and descriptors, owned: destroyed by their own
// destroy call when the owner goes (whose status, at teardown, has no one
// to tell and is dropped).
#pragma once

#include <cublasLt.h>

#include <memory>
#include <type_traits>

namespace stowage::executor::cuda {

template <class T, cublasStatus_t (*kDestroy)(T)>
struct LtDeleter {
  void operator()(T handle) const { (void)kDestroy(handle); }
};

template <class T, cublasStatus_t (*kDestroy)(T)>
using LtOwner = std::unique_ptr<std::remove_pointer_t<T>, LtDeleter<T, kDestroy>>;

}  // namespace stowage::executor::cuda
