// Work on the items of a list computed ahead on other threads and taken in
// the list's order, so that a loop which decides item by item (the search's
// branch and bound) gets the same answers on any number of cores: each
// item's work is a pure function of the item, and the loop still decides,
// in order, what to do with it. The search simulates the next candidates
// while it judges the current one.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace stowage::planner {

template <class Result>
class RunAhead {
 public:
  // `work(i)` computes item i's result (on another thread: it must not touch
  // what the loop changes); `wanted(i)`, asked on the loop's thread when
  // item i comes within reach, says whether it may still be needed (one the
  // loop will certainly skip is not started). `threads` workers take the
  // items within reach in order, as many as 2 per thread past the one being
  // taken, so a slow item does not leave the others idle; with `threads`
  // <= 1 nothing runs ahead.
  RunAhead(size_t count, int threads, std::function<bool(size_t)> wanted, std::function<Result(size_t)> work)
      : reach_(2 * static_cast<size_t>(std::max(threads, 1))),
        wanted_(std::move(wanted)),
        work_(std::move(work)),
        items_(count) {
    if (threads <= 1) return;
    for (int t = 0; t < threads; ++t) {
      try {
        workers_.emplace_back([this] { serve(); });
      } catch (const std::system_error&) {
        break;  // fewer threads: the loop computes what none took
      }
    }
  }
  RunAhead(const RunAhead&) = delete;
  RunAhead& operator=(const RunAhead&) = delete;
  // Lets the items running finish (they read the loop's data) and joins.
  ~RunAhead() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
      queue_.clear();
    }
    more_.notify_all();
    workers_.clear();  // joins
  }

  // Item i's result, i taken in increasing order: computed ahead when it was
  // wanted as it came within reach, otherwise now, on this thread. An
  // exception of the work is thrown here, as computing it now would throw it.
  Result take(size_t i) {
    std::unique_lock lock(mutex_);
    bring_within_reach(i);
    Item& item = items_[i];
    if (item.state == State::kQueued) std::erase(queue_, i);
    if (item.state == State::kNone || item.state == State::kQueued) {
      item.state = State::kTaken;
      lock.unlock();
      return work_(i);
    }
    finished_.wait(lock, [&] { return item.state == State::kDone; });
    item.state = State::kTaken;
    if (item.error) std::rethrow_exception(item.error);
    return std::move(*item.result);
  }

 private:
  enum class State { kNone, kQueued, kRunning, kDone, kTaken };
  struct Item {
    State state = State::kNone;
    std::optional<Result> result;
    std::exception_ptr error;
  };

  // Queues the wanted items after i, up to reach_ of them (i itself is
  // being taken). Under the lock.
  void bring_within_reach(size_t i) {
    if (workers_.empty()) return;
    next_ = std::max(next_, i + 1);
    const size_t last = std::min(items_.size(), i + 1 + reach_);
    bool queued = false;
    for (; next_ < last; ++next_) {
      if (!wanted_(next_)) continue;
      items_[next_].state = State::kQueued;
      queue_.push_back(next_);
      queued = true;
    }
    if (queued) more_.notify_all();
  }

  void serve() {
    std::unique_lock lock(mutex_);
    for (;;) {
      more_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      const size_t i = queue_.front();
      queue_.pop_front();
      Item& item = items_[i];
      item.state = State::kRunning;
      lock.unlock();
      std::optional<Result> result;
      std::exception_ptr error;
      try {
        result.emplace(work_(i));
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      item.result = std::move(result);
      item.error = error;
      item.state = State::kDone;
      finished_.notify_all();
    }
  }

  const size_t reach_;
  const std::function<bool(size_t)> wanted_;
  const std::function<Result(size_t)> work_;
  std::mutex mutex_;
  std::condition_variable more_;      // an item queued, or stopping
  std::condition_variable finished_;  // an item done
  std::deque<size_t> queue_;          // wanted items within reach, in order, not yet started
  std::vector<Item> items_;
  size_t next_ = 0;  // the first item not yet brought within reach
  bool stopping_ = false;
  std::vector<std::jthread> workers_;  // last: joined before the rest is destroyed
};

}  // namespace stowage::planner
