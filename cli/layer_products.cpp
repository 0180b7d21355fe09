#include "cli/layer_products.h"

namespace stowage::cli {

std::string layer_products(std::string_view asked, std::string_view backend, std::string_view layers,
                           core::Precision planned) {
  if (asked != kProductsAsPlanned) return std::string(asked);
  if (backend != "cuda" || layers != "device") return "fp32";
  return planned == core::Precision::kBf16 ? "bf16" : "fp16";
}

}  // namespace stowage::cli
