// The stream-order checker (stream_order_checker.h) finds what it is there
// to find: a buffer shared between lanes with no event between them, in
// either direction (read after write, write after read), and accepts the
// orders events make, directly or through a third lane.
#include "tests/executor/stream_order_checker.h"

#include <gtest/gtest.h>

#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

using core::Lane;
using testing::StreamOrderChecker;

struct Shared {
  std::unique_ptr<CpuBackend> cpu = testing::backend("stream-order");
  StreamOrderChecker checked{*cpu};
  Buffer a = *checked.allocate(core::Tier::kGpu, 64, "a");
  Buffer b = *checked.allocate(core::Tier::kGpu, 64, "b");
  ~Shared() {
    checked.release(a);
    checked.release(b);
  }
  void write_a(Lane lane) { ASSERT_TRUE(checked.zero(lane, a)); }
  void read_a(Lane lane) { ASSERT_TRUE(checked.copy(lane, b, 0, a, 0, 64)); }
  void order(Lane from, Lane to) {
    auto e = checked.record(from);
    ASSERT_TRUE(e);
    ASSERT_TRUE(checked.wait(to, *e));
  }
};

TEST(StreamOrderChecker, AReadOnAnotherLaneWithoutAnEventIsReported) {
  Shared s;
  s.write_a(Lane::kPcieH2d);
  s.read_a(Lane::kGpuCompute);
  EXPECT_NE(s.checked.violations().find("gpu.compute copy reads 'a' written on pcie.h2d"), std::string::npos)
      << s.checked.violations();
}

TEST(StreamOrderChecker, AnOverwriteOfWhatAnotherLaneReadIsReported) {
  Shared s;
  s.write_a(Lane::kGpuCompute);
  s.read_a(Lane::kPcieD2h);  // not ordered: reported too, then the overwrite
  s.write_a(Lane::kGpuCompute);
  EXPECT_NE(s.checked.violations().find("gpu.compute zero writes 'a' read on pcie.d2h"), std::string::npos)
      << s.checked.violations();
}

TEST(StreamOrderChecker, AnEventRecordedBeforeTheWriteDoesNotOrderIt) {
  Shared s;
  auto early = s.checked.record(Lane::kPcieH2d);
  ASSERT_TRUE(early);
  s.write_a(Lane::kPcieH2d);
  ASSERT_TRUE(s.checked.wait(Lane::kGpuCompute, *early));
  s.read_a(Lane::kGpuCompute);
  EXPECT_NE(s.checked.violations(), "");
}

TEST(StreamOrderChecker, EventsOrderDirectlyAndThroughAThirdLane) {
  Shared s;
  s.write_a(Lane::kPcieH2d);
  s.order(Lane::kPcieH2d, Lane::kGpuCompute);
  s.read_a(Lane::kGpuCompute);
  s.order(Lane::kGpuCompute, Lane::kPcieD2h);  // carries what gpu.compute had waited for
  s.read_a(Lane::kPcieD2h);
  s.order(Lane::kPcieD2h, Lane::kCpuOptim);
  s.order(Lane::kGpuCompute, Lane::kCpuOptim);
  s.write_a(Lane::kCpuOptim);  // behind both reads
  EXPECT_EQ(s.checked.violations(), "");
}

TEST(StreamOrderChecker, OneLaneIsOrderedByItself) {
  Shared s;
  s.write_a(Lane::kGpuCompute);
  s.read_a(Lane::kGpuCompute);
  s.write_a(Lane::kGpuCompute);
  EXPECT_EQ(s.checked.violations(), "");
}

}  // namespace
}  // namespace stowage::executor
