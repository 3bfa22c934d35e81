//===- Parallel.cpp - The packed GEMM's threads ---------------------------===//
#include "Parallel.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace pipecc::rt::gemm {
namespace {

using Clock = std::chrono::steady_clock;

/// How long a thread of the team waits for the next product before it
/// sleeps: a step's products come tens to hundreds of microseconds apart,
/// a wake-up from sleep takes tens of microseconds on a VM.
constexpr auto kAwakeTime = std::chrono::microseconds(500);

/// How long a wait spins on the core before it yields it at each turn:
/// where threads outnumber the cores (ranks x threads, or a launcher that
/// binds a rank to one core) the thread waited for may need this core.
constexpr auto kSpinTime = std::chrono::microseconds(20);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Waits until `done()`: spinning, then yielding the core at each turn.
template <typename Done> void awaitYielding(Done done) {
  auto yieldFrom = Clock::now() + kSpinTime;
  for (unsigned turn = 1; !done(); ++turn) {
    if (turn % 64 == 0 && Clock::now() > yieldFrom)
      std::this_thread::yield();
    else
      relax();
  }
}

/// N - 1 threads beside the caller. Each product bumps the generation;
/// every thread of the team answers every generation (running its part if
/// it has one), so that none can still be reading a product's task when
/// the caller posts the next.
class Team {
public:
  ~Team() { stopThreads(); }

  int size() const { return size_; }

  void resize(int threads) {
    threads = threads < 1 ? 1 : threads;
    if (threads == size_)
      return;
    stopThreads();
    size_ = 1;
    // A new thread answers the generations after this one only.
    uint64_t current = generation_.load();
    std::vector<std::thread> started;
    try {
      for (int index = 1; index < threads; ++index)
        started.emplace_back(
            [this, index, current] { serve(index, current); });
    } catch (...) {
      threads_ = std::move(started);
      stopThreads();
      throw;
    }
    threads_ = std::move(started);
    size_ = threads;
  }

  void run(int parts, void (*body)(void *, int), void *context) {
    body_ = body;
    context_ = context;
    parts_ = parts;
    failure_ = nullptr;
    pending_.store(size_ - 1);
    post();
    std::exception_ptr own;
    try {
      body(context, 0);
      // Parts beyond the team (a caller asking more than threads()).
      for (int part = size_; part < parts; ++part)
        body(context, part);
    } catch (...) {
      own = std::current_exception();
    }
    // Every part ends before the task (on the caller's stack) goes away.
    awaitYielding([&] { return pending_.load() == 0; });
    if (own)
      std::rethrow_exception(own);
    if (failure_)
      std::rethrow_exception(failure_);
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
      if (index < parts_) {
        try {
          body_(context_, index);
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex_);
          if (!failure_)
            failure_ = std::current_exception();
        }
      }
      pending_.fetch_sub(1);
    }
  }

  uint64_t awaitGeneration(uint64_t seen) {
    auto sleepFrom = Clock::now() + kAwakeTime;
    bool asleep = false;
    awaitYielding([&] {
      if (generation_.load() != seen)
        return true;
      asleep = Clock::now() > sleepFrom;
      return asleep;
    });
    if (!asleep)
      return generation_.load();
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1);
    wake_.wait(lock, [&] { return generation_.load() != seen; });
    sleepers_.fetch_sub(1);
    return generation_.load();
  }

  void stopThreads() {
    if (!threads_.empty()) {
      stopping_.store(true);
      post();
      for (std::thread &thread : threads_)
        thread.join();
      threads_.clear();
      stopping_.store(false);
    }
    size_ = 1;
  }

  int size_ = 1;
  std::vector<std::thread> threads_;
  // The task of the current generation: written before the generation is
  // bumped and read after it is seen (both sequentially consistent).
  void (*body_)(void *, int) = nullptr;
  void *context_ = nullptr;
  int parts_ = 0;
  std::exception_ptr failure_; // the first part that threw (under mutex_)
  // Each on a cache line of its own: the waiting threads read them in a
  // loop, and the caller and the parts write them.
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  alignas(64) std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
};

Team &team() {
  static Team instance;
  return instance;
}

std::atomic<int64_t> splitCount{0};
} // namespace

void setThreads(int threads) { team().resize(threads); }

int threads() { return team().size(); }

int64_t splitRuns() { return splitCount.load(); }

namespace detail {
void runParts(int parts, void (*body)(void *, int), void *context) {
  splitCount.fetch_add(1, std::memory_order_relaxed);
  team().run(parts, body, context);
}
} // namespace detail

} // namespace pipecc::rt::gemm
