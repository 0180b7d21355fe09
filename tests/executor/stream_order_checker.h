// Holds the executor to the rule a GPU's streams impose (backend.h): a
// buffer that one lane wrote is read or written on another lane only after
// that lane waited on an event recorded behind the write, and a buffer one
// lane read is overwritten on another only behind the read. On the CPU
// backend every call finishes before it returns, so a missing event changes
// nothing there; on a GPU whose calls only enqueue it is a race. This
// backend forwards every call and keeps, as a race detector does, a vector
// clock per lane: how far into each lane's calls its own calls are ordered,
// through the events it waited on (and the events those lanes had waited
// on before recording theirs). It reports every access the clocks do not
// order. Accesses are by buffer (its first byte), the granularity of the
// backend's calls, and by NVMe region (a block write writes the region, a
// read reads it); a buffer allocated anew starts without history (that
// memory's reuse is the backend's to order: stream-ordered release).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "executor/forwarding_backend.h"

namespace stowage::executor::testing {

class StreamOrderChecker final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;

  // One line per access that no event ordered; empty when all were.
  [[nodiscard]] std::string violations() const {
    std::lock_guard lock(mutex_);
    std::string out;
    for (const std::string& v : violations_) out += v + "\n";
    if (unreported_ > 0) out += "and " + std::to_string(unreported_) + " more\n";
    return out;
  }
  [[nodiscard]] int64_t waits() const {
    std::lock_guard lock(mutex_);
    return waits_;
  }

  core::Result<Buffer> allocate(core::Tier tier, int64_t bytes, std::string what) override {
    auto b = ForwardingBackend::allocate(tier, bytes, std::move(what));
    std::lock_guard lock(mutex_);
    if (b && b->data != nullptr) history_.erase(key(b->data));
    return b;
  }
  core::Result<void> copy(core::Lane lane, const Buffer& dst, int64_t dst_offset, const Buffer& src,
                          int64_t src_offset, int64_t bytes) override {
    issue(lane, {{&src, kRead}, {&dst, kWrite}}, "copy");
    return ForwardingBackend::copy(lane, dst, dst_offset, src, src_offset, bytes);
  }
  core::Result<void> compute(core::Lane lane, std::string_view what, const LayerBuffers& buffers,
                             const std::function<void(const LayerWorkspace&)>& kernel) override {
    issue(lane,
          {{buffers.params32, kRead},
           {buffers.grads32, kWrite},
           {buffers.kept, kWrite},
           {buffers.scratch, kWrite}},
          "compute " + std::string(what));
    return ForwardingBackend::compute(lane, what, buffers, kernel);
  }
  core::Result<void> optimizer_step(core::Lane lane, const OptimizerWork& work) override {
    issue(lane, {{work.grad16, kRead}, {work.states, kWrite}, {work.param16_out, kWrite}}, "optimizer step");
    return ForwardingBackend::optimizer_step(lane, work);
  }
  core::Result<void> widen(core::Lane lane, const Buffer& src16, const Buffer& dst32, int64_t dst_offset,
                           core::Precision precision) override {
    issue(lane, {{&src16, kRead}, {&dst32, kWrite}}, "widen");
    return ForwardingBackend::widen(lane, src16, dst32, dst_offset, precision);
  }
  core::Result<void> narrow(core::Lane lane, const Buffer& src32, int64_t src_offset, const Buffer& dst16,
                            core::Precision precision) override {
    issue(lane, {{&src32, kRead}, {&dst16, kWrite}}, "narrow");
    return ForwardingBackend::narrow(lane, src32, src_offset, dst16, precision);
  }
  core::Result<void> accumulate(core::Lane lane, const Buffer& acc16, const Buffer& add16,
                                core::Precision precision) override {
    issue(lane, {{&add16, kRead}, {&acc16, kWrite}}, "accumulate");
    return ForwardingBackend::accumulate(lane, acc16, add16, precision);
  }
  core::Result<void> zero(core::Lane lane, const Buffer& buffer) override {
    issue(lane, {{&buffer, kWrite}}, "zero");
    return ForwardingBackend::zero(lane, buffer);
  }
  core::Result<GradientStats> gradient_stats(core::Lane lane, const Buffer& grad16,
                                             core::Precision precision) override {
    issue(lane, {{&grad16, kRead}}, "gradient statistics");
    return ForwardingBackend::gradient_stats(lane, grad16, precision);
  }
  core::Result<core::QueueDepth> block_write(core::Lane lane, const BlockIo& io) override {
    issue_at(lane,
             {{key(io.data.data()), kRead, "staged " + io.region}, {"nvme " + io.region, kWrite, io.region}},
             "block write");
    return ForwardingBackend::block_write(lane, io);
  }
  core::Result<core::QueueDepth> block_read(core::Lane lane, const BlockIo& io) override {
    issue_at(lane,
             {{"nvme " + io.region, kRead, io.region}, {key(io.data.data()), kWrite, "staged " + io.region}},
             "block read");
    return ForwardingBackend::block_read(lane, io);
  }

  core::Result<Event> record(core::Lane lane) override {
    auto event = ForwardingBackend::record(lane);
    if (!event) return event;
    std::lock_guard lock(mutex_);
    Clock c = clock_[index(lane)];
    c[index(lane)] = issued_[index(lane)];
    recorded_[event->sequence] = c;
    return event;
  }
  core::Result<void> wait(core::Lane lane, const Event& event) override {
    {
      std::lock_guard lock(mutex_);
      ++waits_;
      auto it = recorded_.find(event.sequence);
      if (it == recorded_.end() || event.lane == lane) {
        violations_.push_back(std::string(core::to_string(lane)) + " waited on an event " +
                              (it == recorded_.end() ? "never recorded" : "of its own lane"));
      } else {
        Clock& mine = clock_[index(lane)];
        for (size_t l = 0; l < mine.size(); ++l) mine[l] = std::max(mine[l], it->second[l]);
      }
    }
    return ForwardingBackend::wait(lane, event);
  }

 private:
  using Clock = std::array<uint64_t, core::kLaneCount>;
  enum Mode : uint8_t { kRead, kWrite };
  struct Access {
    const Buffer* buffer;
    Mode mode;
  };
  struct RawAccess {
    std::string at;  // key(): a buffer's first byte, or "nvme REGION"
    Mode mode;
    std::string what;
  };
  // What happened to a buffer last: its last write (lane and that lane's
  // call number) and, since, the last read by each lane.
  struct History {
    int writer = -1;
    uint64_t written = 0;
    Clock read{};
    std::string what;
  };

  static size_t index(core::Lane lane) { return static_cast<size_t>(lane); }
  static std::string key(const std::byte* at) {
    return "buffer " + std::to_string(reinterpret_cast<uintptr_t>(at));
  }

  void issue(core::Lane lane, std::initializer_list<Access> accesses, const std::string& call) {
    std::vector<RawAccess> raw;
    for (const Access& a : accesses) {
      if (a.buffer != nullptr && a.buffer->data != nullptr && a.buffer->bytes > 0)
        raw.push_back({key(a.buffer->data), a.mode, a.buffer->what});
    }
    issue_at(lane, raw, call);
  }
  void issue_at(core::Lane lane, const std::vector<RawAccess>& accesses, const std::string& call) {
    std::lock_guard lock(mutex_);
    const size_t me = index(lane);
    const uint64_t n = ++issued_[me];
    const Clock& seen = clock_[me];
    for (const RawAccess& a : accesses) {
      History& h = history_[a.at];
      auto unordered = [&](size_t other, uint64_t at, const char* what) {
        if (violations_.size() == kReported) {
          ++unreported_;
          return;
        }
        violations_.push_back(std::string(core::to_string(lane)) + " " + call + " " +
                              (a.mode == kRead ? "reads" : "writes") + " '" + a.what + "' " + what + " on " +
                              std::string(core::to_string(static_cast<core::Lane>(other))) + " (its call " +
                              std::to_string(at) + ", this lane has waited through " +
                              std::to_string(seen[other]) + ")");
      };
      if (h.writer >= 0 && static_cast<size_t>(h.writer) != me &&
          seen[static_cast<size_t>(h.writer)] < h.written)
        unordered(static_cast<size_t>(h.writer), h.written, "written");
      if (a.mode == kWrite) {
        for (size_t r = 0; r < h.read.size(); ++r) {
          if (r != me && seen[r] < h.read[r]) unordered(r, h.read[r], "read");
        }
        h = History{.writer = static_cast<int>(me), .written = n, .read = {}, .what = a.what};
      } else {
        h.read[me] = n;
      }
    }
  }

  mutable std::mutex mutex_;
  Clock issued_{};                               // calls issued on each lane so far
  std::array<Clock, core::kLaneCount> clock_{};  // by lane: how far into each lane it is ordered
  std::map<uint64_t, Clock> recorded_;           // by event: the recording lane's clock
  std::map<std::string, History> history_;       // by key()
  std::vector<std::string> violations_;          // the first kReported
  int64_t unreported_ = 0;
  int64_t waits_ = 0;
  static constexpr size_t kReported = 20;
};

}  // namespace stowage::executor::testing
