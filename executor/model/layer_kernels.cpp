#include "executor/model/layer_kernels.h"

#include "executor/model/cpu_layer_kernels.h"

namespace stowage::executor::model {
namespace {

thread_local LayerKernels* installed = nullptr;

}  // namespace

LayerKernels& layer_kernels() {
  static CpuLayerKernels host;
  return installed != nullptr ? *installed : host;
}

InstalledKernels::InstalledKernels(LayerKernels& kernels) : outer_(installed) {
  installed = &kernels;
}

InstalledKernels::~InstalledKernels() {
  installed = outer_;
}

}  // namespace stowage::executor::model
