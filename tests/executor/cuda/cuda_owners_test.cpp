// The RAII owners on a device: the arena caps and fails as the CPU backend
// does, pinned buffers round-trip, an event recorded on one lane's stream
// orders another's, released memory waits for the work before it, the
// device's clock reads marks on the host's.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "executor/cuda/cuda_event.h"
#include "executor/cuda/cuda_stream.h"
#include "executor/cuda/device_arena.h"
#include "executor/cuda/device_clock.h"
#include "executor/cuda/pinned_buffer.h"
#include "executor/cuda/stream_ordered_release.h"
#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

TEST(DeviceArena, CapsAtItsCapacityAndNamesTheShortfall) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  DeviceArena arena(1 << 20);  // 1 MiB
  auto a = arena.allocate(600 << 10);
  ASSERT_TRUE(a);
  EXPECT_NE(a->data, nullptr);
  const auto b = arena.allocate(500 << 10);  // 600 + 500 KiB > 1024 KiB
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().bytes, 500 << 10);
  EXPECT_EQ(b.error().in_use, 600 << 10);
  EXPECT_EQ(b.error().capacity, 1 << 20);
  arena.release(*a);
  EXPECT_EQ(arena.in_use(), 0);
  EXPECT_TRUE(arena.allocate(1 << 20));
}

TEST(PinnedBuffer, RoundTripsThroughTheDeviceOnALaneStream) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  constexpr int64_t kBytes = 1 << 20;
  PinnedBuffer in(kBytes);
  PinnedBuffer out(kBytes);
  for (int64_t i = 0; i < kBytes; ++i) in.data()[i] = static_cast<std::byte>(i * 7);
  DeviceMemory device(kBytes);
  LaneStreams lanes;
  CudaEvent uploaded(EventTiming::kTimed);
  CudaEvent start(EventTiming::kTimed);
  // h2d on pcie.h2d, then d2h on pcie.d2h ordered by the event alone.
  start.record(lanes[core::Lane::kPcieH2d]);
  STOWAGE_CUDA(
      cudaMemcpyAsync(device.data(), in.data(), kBytes, cudaMemcpyHostToDevice, lanes[core::Lane::kPcieH2d]));
  uploaded.record(lanes[core::Lane::kPcieH2d]);
  uploaded.wait_on(lanes[core::Lane::kPcieD2h]);
  STOWAGE_CUDA(cudaMemcpyAsync(out.data(), device.data(), kBytes, cudaMemcpyDeviceToHost,
                               lanes[core::Lane::kPcieD2h]));
  lanes.synchronize_all();
  EXPECT_EQ(std::memcmp(in.data(), out.data(), kBytes), 0);
  EXPECT_GE(elapsed_ms(start, uploaded), 0.0f);
}

// Memory released behind work still on a stream is not given back until
// that work has run: a host function holding one lane's stream for 200 ms
// keeps the release parked however often the host asks, and waiting for
// everything gives it back only after the hold.
TEST(StreamOrderedRelease, GivesMemoryBackOnlyAfterTheWorkEnqueuedBeforeIt) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  LaneStreams lanes;
  StreamOrderedRelease released(lanes, std::make_shared<EventPool>());
  std::atomic<bool> held{true};
  auto hold = [](void* flag) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    static_cast<std::atomic<bool>*>(flag)->store(false);
  };
  STOWAGE_CUDA(cudaLaunchHostFunc(lanes[core::Lane::kPcieD2h], hold, &held));
  bool given_back = false;
  released.park([&] { given_back = true; });
  EXPECT_FALSE(released.collect(StreamOrderedRelease::Until::kCompleted));
  EXPECT_FALSE(given_back);
  // Asking left no error behind for the next launch's check to find.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_TRUE(released.collect(StreamOrderedRelease::Until::kAll));
  EXPECT_TRUE(given_back);
  EXPECT_FALSE(held.load());  // the hold had ended when the memory came back
  EXPECT_FALSE(released.collect(StreamOrderedRelease::Until::kAll));  // nothing left
}

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Marks on an idle stream complete as they are enqueued, so each reads as
// the host's time then, whether the clock keeps one anchor or takes a
// fresh one before every mark (as it does once an anchor is old): two
// marks 20 ms apart are as far apart as the host's times just before each,
// to within a millisecond, and each within the host's times around it.
TEST(DeviceClock, ReadsMarksOnTheHostsClockAcrossFreshAnchors) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const auto reanchor_after :
       {std::chrono::nanoseconds(0), std::chrono::nanoseconds(std::chrono::hours(1))}) {
    SCOPED_TRACE(reanchor_after.count() == 0 ? "an anchor a mark" : "one anchor");
    DeviceClock clock(reanchor_after);
    CudaStream stream;
    const int64_t before = steady_ns();
    const auto first = clock.mark(stream.get());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int64_t between = steady_ns();
    const auto second = clock.mark(stream.get());
    const int64_t after = steady_ns();
    const int64_t a = clock.host_ns(first), b = clock.host_ns(second);
    constexpr int64_t kMs = 1'000'000;
    EXPECT_GE(a, before - kMs);
    EXPECT_LE(b, after + kMs);
    EXPECT_NEAR(static_cast<double>(b - a), static_cast<double>(between - before), 1.0 * kMs);
    EXPECT_EQ(clock.anchors(), reanchor_after.count() == 0 ? 3 : 1);
  }
}

TEST(DeviceMemory, AskingForMoreThanTheDeviceHasNamesCudaMalloc) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  try {
    DeviceMemory too_much(int64_t{1} << 50);  // 1 PiB
    FAIL() << "cudaMalloc of 1 PiB succeeded";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cudaMalloc("), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), static_cast<int>(cudaErrorMemoryAllocation));
  }
  (void)cudaGetLastError();
}

}  // namespace
}  // namespace stowage::executor::cuda
