//===- Timeline.h - Timed events of a pipeline step, as trace and SVG -----===//
//
// A Timeline is the list of timed events of one training step, one row per
// rank: compute (F, B, W, fused BW), sends and receives, waits, all-reduces
// and the optimizer step. It is built from a simulation (the prediction) or
// read from a trace written by the runtime (the measurement), and written as
//   - Chrome/Perfetto trace JSON (docs/cli.md, "Timelines": tid = rank,
//     ts/dur in microseconds, cat = the event kind), and
//   - an SVG Gantt chart: a row per rank, compute kinds coloured, micro-batch
//     numbers in the boxes, messages thin and waits hatched, a time axis.
// Two timelines can share one chart (predicted above measured), on one time
// scale.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_TIMELINE_TIMELINE_H
#define PIPECC_TIMELINE_TIMELINE_H

#include "pipecc/Scheduling/Simulator.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace pipecc::timeline {

enum class EventKind {
  Forward,
  BackwardInput,
  BackwardWeight,
  Backward, // B and W fused
  Send,
  Recv,
  Wait, // a rank blocked at a send or receive until its peer arrives
  AllReduce,
  Optimizer,
};

/// The trace category: "F", "B", "W", "BW", "send", "recv", "wait",
/// "allreduce", "optimizer".
llvm::StringRef categoryName(EventKind kind);
std::optional<EventKind> parseCategory(llvm::StringRef category);
bool isCompute(EventKind kind);

struct Event {
  int rank = 0;
  EventKind kind = EventKind::Forward;
  int microbatch = -1;   // -1 when none
  int virtualStage = -1; // compute only; -1 when unknown
  int chunk = -1;        // compute only; -1 when unknown
  double start = 0;      // seconds from the step's start
  double end = 0;
  /// "F3" for compute, a short text otherwise ("send act.q1 m3").
  std::string label;
};

struct Timeline {
  /// "predicted" or "measured" (otherData.source).
  std::string source = "predicted";
  std::string schedule;
  int ranks = 0;
  int chunks = 1;
  int microbatches = 0;
  double makespan = 0; // seconds
  /// Mean over ranks of the idle fraction; computed from the events when
  /// a trace does not give it.
  double bubble = 0;
  /// Per rank, the peak of activations held, in micro-batches of the rank's
  /// virtual stages; empty when unknown.
  std::vector<double> peakActivationMicrobatches;
  /// By rank, then start time.
  std::vector<Event> events;
};

/// The events of `programs` as `simulation` timed them: every compute, each
/// message that takes time, the wait before a message whose peer came later,
/// and the optimizer step. Waits are what a blocking rendezvous costs.
Timeline buildTimeline(const scheduling::ScheduleProblem &problem,
                       const std::vector<scheduling::Program> &programs,
                       const scheduling::SimulationResult &simulation,
                       llvm::StringRef schedule);

/// Per rank, the simulator's peak of micro-batches held (from F until W), in
/// micro-batches of the rank's virtual stages (1F1B's rank 0: P, GPipe's:
/// M): the unit of `--memory-limit`. buildTimeline records it.
std::vector<double>
peakActivationMicrobatches(const scheduling::SimulationResult &simulation);

/// Chrome/Perfetto trace JSON (one thread per rank, named "rank <r>").
void writeTraceJson(const Timeline &timeline, llvm::raw_ostream &os);

/// Reads a trace written by writeTraceJson or by the runtime (`out/launch
/// --trace`). Complete events ("ph": "X") become events; metadata is
/// skipped. On error returns nullopt and sets `error` to one line naming the
/// offending member ("traceEvents[3]: 'dur' must be a non-negative number").
std::optional<Timeline> readTraceJson(llvm::StringRef text,
                                      std::string &error);

/// An SVG Gantt chart of one timeline, or several stacked on one time scale
/// (each titled by its source and schedule).
void writeSvg(llvm::ArrayRef<const Timeline *> timelines,
              llvm::raw_ostream &os);

} // namespace pipecc::timeline

#endif // PIPECC_TIMELINE_TIMELINE_H
