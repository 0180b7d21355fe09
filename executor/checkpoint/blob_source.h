// One piece of state handed to save_checkpoint: a name, a free-form tier
// and its bytes, either as a span already in host memory or as a producer
// that streams them in chunks (a device arena copied out through a pinned
// staging buffer), so the executor never holds a second full copy.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <variant>

namespace stowage::executor {

// Receives a blob's bytes in order, in chunks of any size. write() throws
// CheckpointWriteError when the disk refuses; a producer lets it propagate.
class BlobSink {
 public:
  virtual void write(std::span<const std::byte> chunk) = 0;

 protected:
  ~BlobSink() = default;
};

// Writes the whole blob into the sink, then returns. Called once, on the
// saving thread. Its size is whatever it wrote.
using BlobProducer = std::function<void(BlobSink& sink)>;

struct BlobSource {
  std::string name;  // unique within a checkpoint: "layer3.adam_m"
  std::string tier;  // free-form, stored as given: "gpu", "cpu", "nvme"
  // The bytes must stay valid and unchanged until save_checkpoint returns.
  std::variant<std::span<const std::byte>, BlobProducer> content;
};

}  // namespace stowage::executor
