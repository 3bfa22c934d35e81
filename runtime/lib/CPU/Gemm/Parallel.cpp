//===- Parallel.cpp - The packed GEMM's threads ---------------------------===//
#include "Parallel.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace pipecc::rt::gemm {
namespace {

/// How long a thread of the team spins for the next product before it
/// sleeps: a step's products come tens to hundreds of microseconds apart,
/// a wake-up from sleep takes tens of microseconds on a VM.
constexpr auto kSpinTime = std::chrono::microseconds(500);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// N - 1 threads beside the caller. Each product bumps the generation;
/// every thread of the team answers every generation (running its part if
/// it has one), so that none can still be reading a product's task when
/// the caller posts the next.
class Team {
public:
  ~Team() { resize(1); }

  int size() const { return size_; }

  void resize(int threads) {
    threads = threads < 1 ? 1 : threads;
    if (threads == size_)
      return;
    stopThreads();
    size_ = threads;
    // A new thread answers the generations after this one only.
    uint64_t current = generation_.load();
    for (int index = 1; index < threads; ++index)
      threads_.emplace_back([this, index, current] { serve(index, current); });
  }

  void run(int parts, void (*body)(void *, int), void *context) {
    body_ = body;
    context_ = context;
    parts_ = parts;
    pending_.store(size_ - 1);
    post();
    body(context, 0);
    // Parts beyond the team (a caller asking more than threads()) run here.
    for (int part = size_; part < parts; ++part)
      body(context, part);
    while (pending_.load() != 0)
      relax();
  }

private:
  void post() {
    generation_.fetch_add(1);
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
  }

  void serve(int index, uint64_t seen) {
    for (;;) {
      seen = awaitGeneration(seen);
      if (stopping_.load())
        return;
      if (index < parts_)
        body_(context_, index);
      pending_.fetch_sub(1);
    }
  }

  uint64_t awaitGeneration(uint64_t seen) {
    auto until = std::chrono::steady_clock::now() + kSpinTime;
    for (unsigned spins = 1;; ++spins) {
      uint64_t now = generation_.load();
      if (now != seen)
        return now;
      if (spins % 256 == 0 && std::chrono::steady_clock::now() > until)
        break;
      relax();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return generation_.load() != seen; });
    sleepers_.fetch_sub(1);
    return generation_.load();
  }

  void stopThreads() {
    if (threads_.empty())
      return;
    stopping_.store(true);
    post();
    for (std::thread &thread : threads_)
      thread.join();
    threads_.clear();
    stopping_.store(false);
  }

  int size_ = 1;
  std::vector<std::thread> threads_;
  // The task of the current generation: written before the generation is
  // bumped and read after it is seen (both sequentially consistent).
  void (*body_)(void *, int) = nullptr;
  void *context_ = nullptr;
  int parts_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

Team &team() {
  static Team instance;
  return instance;
}
} // namespace

void setThreads(int threads) { team().resize(threads); }

int threads() { return team().size(); }

namespace {
std::atomic<int64_t> splitCount{0};
} // namespace

int64_t splitRuns() { return splitCount.load(); }

namespace detail {
void runParts(int parts, void (*body)(void *, int), void *context) {
  splitCount.fetch_add(1, std::memory_order_relaxed);
  team().run(parts, body, context);
}
} // namespace detail

} // namespace pipecc::rt::gemm
