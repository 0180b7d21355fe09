#include "executor/buffer_sides.h"

#include <string>

namespace stowage::executor {

core::Result<Side> one_side(std::string_view call, std::initializer_list<const Buffer*> buffers) {
  const Buffer* device = nullptr;
  const Buffer* host = nullptr;
  for (const Buffer* b : buffers) (b->tier == core::Tier::kGpu ? device : host) = b;
  if (device == nullptr) return Side::kHost;
  if (host == nullptr) return Side::kDevice;
  return core::fail({{},
                     std::string(call) + " of '" + device->what + "' (gpu) and '" + host->what + "' (" +
                         std::string(core::to_string(host->tier)) +
                         "): one is on the device and one is not (a bug in stowage)",
                     ""});
}

}  // namespace stowage::executor
