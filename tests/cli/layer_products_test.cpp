// `stowage run --products`: by default the plan's mixed precision where the
// cuda backend runs the layers on the device, fp32 wherever the host's
// kernels run them; an explicit choice as given.
#include "cli/layer_products.h"

#include <gtest/gtest.h>

namespace stowage::cli {
namespace {

using core::Precision;

TEST(LayerProducts, ByDefaultThePlansPrecisionOnTheDevicesLayers) {
  EXPECT_EQ(layer_products(kProductsAsPlanned, "cuda", "device", Precision::kBf16), "bf16");
  EXPECT_EQ(layer_products(kProductsAsPlanned, "cuda", "device", Precision::kFp16), "fp16");
}

TEST(LayerProducts, ByDefaultFp32WhereTheHostRunsTheLayers) {
  for (const Precision planned : {Precision::kBf16, Precision::kFp16}) {
    EXPECT_EQ(layer_products(kProductsAsPlanned, "cpu", "device", planned), "fp32");
    EXPECT_EQ(layer_products(kProductsAsPlanned, "cuda", "host", planned), "fp32");
  }
}

TEST(LayerProducts, AnExplicitChoiceWinsOverThePlan) {
  EXPECT_EQ(layer_products("fp32", "cuda", "device", Precision::kBf16), "fp32");
  EXPECT_EQ(layer_products("fp16", "cuda", "device", Precision::kBf16), "fp16");
  EXPECT_EQ(layer_products("bf16", "cuda", "device", Precision::kFp16), "bf16");
}

}  // namespace
}  // namespace stowage::cli
