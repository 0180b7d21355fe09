// The hover text of an op names every tensor class it moves: an NVMe state
// write carries master32, adam_m and adam_v of its partition.
#include "gui/op_tooltip.h"

#include <gtest/gtest.h>

namespace stowage::gui {
namespace {

TEST(OpTooltip, AStateWriteNamesAllThreeOptimizerStates) {
  // 3.78 GB of states: 1.26 GB each of master32, adam_m and adam_v (4 bytes
  // per parameter each, core/lower.cpp).
  const TraceOp write{.kind = core::OpKind::kWriteStates,
                      .lane = core::Lane::kNvmeWrite,
                      .end = 1'000'000'000,
                      .tensor_class = core::TensorClass::kMaster32,
                      .bytes = core::Bytes(3'780'000'000)};
  EXPECT_EQ(tensor_classes_moved(write), (std::vector{core::TensorClass::kMaster32, core::TensorClass::kAdamM,
                                                      core::TensorClass::kAdamV}));
  const std::string text = op_tooltip(write, "write states layers.3 s1");
  EXPECT_NE(text.find("tensor classes: master32 + adam_m + adam_v (1.26 GB each)"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("tensor class: master32\n"), std::string::npos) << text;
}

TEST(OpTooltip, AParameterUploadNamesItsOneClass) {
  const TraceOp upload{.kind = core::OpKind::kUploadParams,
                       .lane = core::Lane::kPcieH2d,
                       .end = 1000,
                       .tensor_class = core::TensorClass::kParam16,
                       .bytes = core::Bytes(2'000'000)};
  EXPECT_NE(op_tooltip(upload, "h2d").find("tensor class: param16\n"), std::string::npos);
  const TraceOp compute{.kind = core::OpKind::kForward, .end = 1000};
  EXPECT_TRUE(tensor_classes_moved(compute).empty());
}

}  // namespace
}  // namespace stowage::gui
