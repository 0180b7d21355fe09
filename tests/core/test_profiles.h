// Access to the bundled profiles from tests, failing loudly when one does
// not load.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "core/profile_catalog.h"

namespace stowage::core::testing {

inline ProfileCatalog bundled() { return ProfileCatalog(STOWAGE_PROFILES_DIR); }

template <class T>
T must(Result<T> r) {
  if (!r) {
    ADD_FAILURE() << to_string(r.error());
    throw std::runtime_error("profile failed to load");
  }
  return std::move(*r);
}

// A profile name as a parameterised test's name ("dgx-2" -> "dgx_2"):
// gtest takes only letters, digits and underscores.
inline std::string test_name_of(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace stowage::core::testing
