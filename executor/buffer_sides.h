// A seam rule of element-wise calls (Backend::optimizer_step, widen,
// narrow, accumulate): their buffers are all on the device or all on the
// host. A GPU runs such a call as a kernel over device memory or hands it to
// the host, and nothing does half of each; no op of a schedule mixes them,
// so a mix is a bug in the caller. Both backends check it here, so that the
// CPU backend's tests find a mix the CUDA backend would refuse on a GPU.
#pragma once

#include <initializer_list>
#include <string_view>

#include "core/diagnostic.h"
#include "executor/backend.h"

namespace stowage::executor {

enum class Side : uint8_t { kHost, kDevice };

// Where all of `buffers` are (the GPU tier is the device); a diagnostic
// naming `call` and two buffers that disagree, where they do.
[[nodiscard]] core::Result<Side> one_side(std::string_view call,
                                          std::initializer_list<const Buffer*> buffers);

}  // namespace stowage::executor
