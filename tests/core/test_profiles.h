// Access to the bundled profiles from tests, failing loudly when one does
// not load.
#pragma once

#include <gtest/gtest.h>

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

}  // namespace stowage::core::testing
