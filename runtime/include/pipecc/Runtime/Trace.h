//===- Trace.h - The measured timeline of one training step -----*- C++ -*-===//
//
// `--trace FILE` records, on every rank, the start and end of each action of
// one step (compute F/B/W/BW from the generated code's
// pipecc_rt_trace_begin/end, messages, waits, all-reduces and the optimizer
// from inside the runtime's calls) against a monotonic clock whose zero is
// the step's start. Rank 0 gathers the ranks' records and writes one Chrome
// / Perfetto trace in the format the compiler's predicted timelines use
// (docs/cli.md, "Timelines"): otherData.source = "measured", one thread per
// rank, ts/dur in microseconds.
//
// Clock alignment: the ranks meet in a barrier right before the step, and
// each takes its own zero when it leaves it; events of different ranks are
// as aligned as the barrier's exits (microseconds on one node).
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_TRACE_H
#define PIPECC_RUNTIME_TRACE_H

#include <cstdint>
#include <string>
#include <vector>

namespace pipecc::rt {

/// What one recorded action is; the names are the trace's categories.
enum class TraceCategory : uint8_t {
  Forward,        // "F"
  BackwardInput,  // "B"
  BackwardWeight, // "W"
  Backward,       // "BW" (B and W fused)
  Send,
  Recv,
  Wait,
  AllReduce,
  Optimizer,
};

const char *traceCategoryName(TraceCategory category);

struct TraceEvent {
  TraceCategory category = TraceCategory::Forward;
  /// Compute: the virtual stage and its chunk on the rank. -1 otherwise.
  int64_t stage = -1, chunk = -1;
  /// -1 when the action is not about one micro-batch.
  int64_t microbatch = -1;
  /// Compute: the micro-batches microbatch, microbatch + 1, ... it ran (a
  /// grouped weight gradient runs several in one call).
  int64_t microbatches = 1;
  /// Messages: the other rank and the bytes moved. -1 / 0 otherwise.
  int32_t peer = -1;
  int64_t bytes = 0;
  /// Messages and all-reduces: the buffer's name (may be empty).
  std::string label;
  /// Seconds since the step's start.
  double start = 0, end = 0;
};

/// One rank's record of the traced step.
class StepTrace {
public:
  /// `step`: 0-based index of the step to record.
  explicit StepTrace(int64_t step) : step_(step) {}

  int64_t step() const { return step_; }

  /// The step starts now (`now`: seconds of the monotonic clock).
  void start(double now);
  /// The rank's step (optimizer included) ended at `now`.
  void finish(double now) { end_ = now - zero_; }

  /// Opens a compute action; compute actions do not nest. Throws on an
  /// action already open (a broken host program).
  void beginCompute(TraceCategory category, int64_t stage, int64_t chunk,
                    int64_t microbatch, double now);
  /// The open compute action runs `count` consecutive micro-batches from
  /// its own; throws when none is open.
  void setMicrobatches(int64_t count);
  /// Closes the open compute action; throws when none is open.
  void endCompute(double now);
  /// Records a whole action the runtime timed itself.
  void record(TraceEvent event, double startedAt, double endedAt);

  /// This rank's events as text for rank 0 (see parseRankRecord).
  std::string serialize(int rank) const;

private:
  int64_t step_;
  double zero_ = 0;
  double end_ = 0;
  bool open_ = false;
  std::vector<TraceEvent> events_;
};

/// What the trace says about the run besides the events.
struct TraceRunInfo {
  std::string schedule;
  int ranks = 1;
  int microbatches = 1;
  /// 1-based step number, for the document's otherData.
  int64_t step = 1;
};

/// The Chrome trace document from every rank's serialize() output (indexed
/// by rank). The chunk count is the largest chunk any compute action names,
/// plus one; the makespan is the latest rank's step end.
std::string buildTraceDocument(const TraceRunInfo &info,
                               const std::vector<std::string> &rankRecords);

/// The schedule name in the compiler's manifest (pipeline.json) at `path`.
/// Throws RuntimeError naming the file when it cannot say.
std::string scheduleFromManifest(const std::string &path);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_TRACE_H
