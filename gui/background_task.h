// A background task's body, run so that nothing it throws reaches Qt.
// QtConcurrent rethrows a task's exception in the GUI thread as
// QUnhandledException, which aborted the GUI (issue 12: std::bad_alloc from
// a plan with gradient_accumulation: 1000000). Here it becomes a diagnostic
// that the window reports like any other failed input.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "core/diagnostic.h"

namespace stowage::gui {

// `body()` returns core::Result<T>; a throw becomes one diagnostic at
// `file` (the input being worked on, may be empty) saying what failed.
template <class T, class Body>
core::Result<T> without_throwing(const std::string& file, const std::string& task, Body&& body) noexcept {
  try {
    try {
      return std::forward<Body>(body)();
    } catch (const std::bad_alloc&) {
      return core::fail({{file, 0, 0}, task + ": out of memory (std::bad_alloc)",
                         "an input whose model and schedule fit in this machine's memory"});
    } catch (const std::exception& e) {
      return core::fail({{file, 0, 0}, task + ": " + e.what(), ""});
    } catch (...) {
      return core::fail({{file, 0, 0}, task + ": an unknown exception", ""});
    }
  } catch (...) {  // making the diagnostic failed too (no memory left): say less
    return std::unexpected(core::Diagnostics{});
  }
}

}  // namespace stowage::gui
