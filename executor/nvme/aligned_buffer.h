// A heap buffer aligned for O_DIRECT: the kernel rejects direct I/O whose
// memory address, file offset or length is not a multiple of the logical
// block size, and 4096 covers every device we target (512e and 4Kn drives).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>

namespace stowage::executor {

inline constexpr size_t kDirectIoAlignment = 4096;

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // `bytes` rounded up to kDirectIoAlignment; zero-filled. Throws std::bad_alloc.
  explicit AlignedBuffer(size_t bytes)
      : size_((bytes + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment),
        data_(static_cast<std::byte*>(
            std::aligned_alloc(kDirectIoAlignment, size_ == 0 ? kDirectIoAlignment : size_))) {
    if (data_ == nullptr) throw std::bad_alloc();
    std::fill_n(data_.get(), size_, std::byte{0});
  }

  [[nodiscard]] std::byte* data() const { return data_.get(); }
  [[nodiscard]] size_t size() const { return size_; }
  [[nodiscard]] std::span<std::byte> span() const { return {data_.get(), size_}; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  size_t size_ = 0;
  std::unique_ptr<std::byte, Free> data_;
};

}  // namespace stowage::executor
