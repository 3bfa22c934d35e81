//===- MemoryPlan.cpp - Slots, offsets and the arena of one rank ----------===//

#include "pipecc/MemoryPlan/MemoryPlan.h"

#include <algorithm>
#include <limits>
#include <numeric>

using namespace pipecc;
using namespace pipecc::memory;

const char *memory::kindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::Weight:
    return "weight";
  case BufferKind::WeightCopy:
    return "weight-copy";
  case BufferKind::Gradient:
    return "gradient";
  case BufferKind::OptimizerState:
    return "optimizer-state";
  case BufferKind::DataInput:
    return "data-input";
  case BufferKind::Activation:
    return "activation";
  case BufferKind::Transfer:
    return "transfer";
  case BufferKind::Workspace:
    return "workspace";
  case BufferKind::Output:
    return "output";
  }
  return "?";
}

namespace {

constexpr int64_t kUnset = -1;

/// Alive from before the first action of the first step to after the last.
bool isPersistent(BufferKind kind) {
  return kind == BufferKind::Weight || kind == BufferKind::WeightCopy ||
         kind == BufferKind::Gradient || kind == BufferKind::OptimizerState;
}

int64_t alignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

struct Interval {
  int64_t first = kUnset, last = kUnset;
  bool empty() const { return first == kUnset; }
  void touch(int64_t action) {
    if (first == kUnset)
      first = action;
    last = action;
  }
  bool overlaps(const Interval &other) const {
    return !empty() && !other.empty() && first <= other.last &&
           other.first <= last;
  }
};

/// The most intervals containing one action.
int64_t peakOverlap(const std::vector<Interval> &intervals) {
  std::vector<std::pair<int64_t, int>> events;
  for (const Interval &interval : intervals)
    if (!interval.empty()) {
      events.push_back({interval.first, +1});
      events.push_back({interval.last + 1, -1});
    }
  // Ends before starts at the same position: [a, b] and [b + 1, c] are
  // disjoint.
  std::sort(events.begin(), events.end(),
            [](auto &a, auto &b) {
              return a.first != b.first ? a.first < b.first
                                        : a.second < b.second;
            });
  int64_t live = 0, peak = 0;
  for (auto [position, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

/// Whether micro-batches sharing a copy (equal modulo `slots`) never live at
/// the same time.
bool moduloConflictFree(const std::vector<Interval> &perMicrobatch,
                        int64_t slots) {
  int64_t count = static_cast<int64_t>(perMicrobatch.size());
  for (int64_t m1 = 0; m1 < count; ++m1)
    for (int64_t m2 = m1 + slots; m2 < count; m2 += slots)
      if (perMicrobatch[m1].overlaps(perMicrobatch[m2]))
        return false;
  return true;
}

/// Places blocks of `size` bytes with lifetime `life` at the lowest offset
/// not overlapping any placed block that lives at the same time (greedy by
/// size, as TFLite's arena planner does).
class ArenaPlacer {
public:
  explicit ArenaPlacer(bool reuse) : reuse(reuse) {}

  int64_t place(int64_t size, Interval life) {
    int64_t offset = 0;
    if (!reuse) {
      offset = end;
    } else {
      std::vector<std::pair<int64_t, int64_t>> taken;
      for (const Block &block : blocks)
        if (block.life.overlaps(life))
          taken.push_back({block.offset, block.offset + block.size});
      std::sort(taken.begin(), taken.end());
      for (auto [begin, finish] : taken) {
        if (offset + size <= begin)
          break;
        offset = std::max(offset, finish);
      }
    }
    blocks.push_back({offset, size, life});
    end = std::max(end, offset + size);
    return offset;
  }
  int64_t size() const { return end; }

private:
  struct Block {
    int64_t offset, size;
    Interval life;
  };
  bool reuse;
  std::vector<Block> blocks;
  int64_t end = 0;
};

} // namespace

Result<MemoryPlan> memory::planMemory(const std::vector<BufferRecord> &buffers,
                                      const std::vector<ActionRecord> &actions,
                                      const PlanOptions &options) {
  using support::Diagnostic;
  if (options.microbatches < 1)
    return Diagnostic{"memory plan: " + std::to_string(options.microbatches) +
                      " micro-batches; at least 1 expected"};
  if (options.alignment < 1)
    return Diagnostic{"memory plan: alignment must be positive"};
  int64_t numBuffers = static_cast<int64_t>(buffers.size());
  int64_t microbatches = options.microbatches;
  for (const BufferRecord &buffer : buffers)
    if (buffer.bytes < 0)
      return Diagnostic{"memory plan: buffer '" + buffer.name +
                        "' has a negative size"};

  // Lifetimes: per micro-batch for per-micro-batch buffers, else one.
  std::vector<std::vector<Interval>> lives(numBuffers);
  for (int64_t id = 0; id < numBuffers; ++id)
    lives[id].resize(buffers[id].perMicrobatch ? microbatches : 1);
  for (int64_t index = 0; index < static_cast<int64_t>(actions.size());
       ++index) {
    const ActionRecord &action = actions[index];
    if (action.microbatch < -1 || action.microbatch >= microbatches)
      return Diagnostic{"memory plan: action " + std::to_string(index) +
                        " (" + action.label + ") has micro-batch " +
                        std::to_string(action.microbatch) + ", outside [0, " +
                        std::to_string(microbatches) + ")"};
    for (const auto *list : {&action.defines, &action.uses})
      for (int64_t id : *list) {
        if (id < 0 || id >= numBuffers)
          return Diagnostic{"memory plan: action " + std::to_string(index) +
                            " (" + action.label + ") names buffer " +
                            std::to_string(id) + ", but there are " +
                            std::to_string(numBuffers)};
        if (!buffers[id].perMicrobatch) {
          lives[id][0].touch(index);
          continue;
        }
        if (action.microbatch < 0)
          return Diagnostic{"memory plan: action " + std::to_string(index) +
                            " (" + action.label +
                            ") belongs to no micro-batch but touches "
                            "per-micro-batch buffer '" +
                            buffers[id].name + "'"};
        lives[id][action.microbatch].touch(index);
      }
  }

  MemoryPlan plan;
  plan.buffers.resize(numBuffers);
  int64_t lastAction = std::max<int64_t>(0, actions.size() - 1);
  Interval wholeRun{0, lastAction};
  for (int64_t id = 0; id < numBuffers; ++id) {
    const BufferRecord &buffer = buffers[id];
    BufferPlacement &placement = plan.buffers[id];
    placement.stride = alignUp(buffer.bytes, options.alignment);
    Interval life;
    for (const Interval &interval : lives[id])
      if (!interval.empty()) {
        life.first = life.empty() ? interval.first
                                  : std::min(life.first, interval.first);
        life.last = std::max(life.last, interval.last);
      }
    // Untouched buffers (the runtime may still write them) and outputs (read
    // after the step) keep a copy per micro-batch, alive for the whole step.
    bool wholeStep = isPersistent(buffer.kind) ||
                     buffer.kind == BufferKind::Output || life.empty();
    if (buffer.perMicrobatch) {
      placement.peakLive = peakOverlap(lives[id]);
      if (wholeStep) {
        placement.slots = microbatches;
      } else {
        // Multiples of slotMultiple, or M copies (always conflict-free, and
        // a group of consecutive micro-batches never wraps).
        int64_t step = std::max<int64_t>(1, buffer.slotMultiple);
        auto next = [&](int64_t slots) {
          slots = (slots + step - 1) / step * step;
          return std::min<int64_t>(slots, microbatches);
        };
        int64_t slots = next(std::max<int64_t>(1, placement.peakLive));
        while (slots < microbatches && !moduloConflictFree(lives[id], slots))
          slots = next(slots + 1);
        placement.slots = slots;
      }
    } else {
      placement.peakLive = 1;
    }
    if (wholeStep)
      life = wholeRun;
    placement.firstAction = life.first;
    placement.lastAction = life.last;
    plan.bytesByKind[static_cast<int>(buffer.kind)] +=
        placement.slots * buffer.bytes;
    plan.unsharedBytes += placement.slots * placement.stride;
  }

  // Whole-run buffers first, so they pack at the start; then largest first.
  std::vector<int64_t> order(numBuffers);
  std::iota(order.begin(), order.end(), 0);
  auto wholeRunFirst = [&](int64_t id) {
    return plan.buffers[id].firstAction == 0 &&
           plan.buffers[id].lastAction == lastAction;
  };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    bool wa = wholeRunFirst(a), wb = wholeRunFirst(b);
    if (wa != wb)
      return wa;
    return plan.buffers[a].slots * plan.buffers[a].stride >
           plan.buffers[b].slots * plan.buffers[b].stride;
  });
  ArenaPlacer placer(options.reuse);
  for (int64_t id : order) {
    BufferPlacement &placement = plan.buffers[id];
    Interval life{placement.firstAction, placement.lastAction};
    placement.offset = placer.place(placement.slots * placement.stride, life);
  }
  plan.arenaBytes = placer.size();
  return plan;
}
