//===- ListScheduling.h - Fast pricing and greedy building of orders ------===//
//
// Library-private: what the zero-bubble generators and the `auto` search
// use to price and build per-rank orders quickly, without materialising
// sends and receives.
//
// The pricing is compute-only: an action starts when its rank is free and
// its one producer (Problem.h) has ended, plus the message time of the
// boundary when the producer runs on another rank (sends are posted, so the
// sender does not wait). Memory is counted in program order on each rank,
// as the simulator counts it.
//
// The rule is the simulator's simulateSchedule (Simulator.h); this copy
// prices over a graph built once per problem, because the search prices
// thousands of orders of one problem. SearchTest's
// PricingAgreesWithTheSimulator holds the two to one answer.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_LIB_SCHEDULING_LISTSCHEDULING_H
#define PIPECC_LIB_SCHEDULING_LISTSCHEDULING_H

#include "pipecc/Scheduling/Program.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace pipecc::scheduling::detail {

/// Per-rank memory limits; infinity / 0 mean none.
struct MemoryLimits {
  /// In micro-batches of activations: one unit is one micro-batch's
  /// activations through all of a rank's virtual stages (1F1B's rank 0
  /// holds P, GPipe's M), held from the start of F until its W (or fused
  /// backward) ends, since W still reads them.
  double microbatches = std::numeric_limits<double>::infinity();
  /// Bytes: a virtual stage's activation bytes held from F until B ends,
  /// then its stash bytes until W ends.
  int64_t bytes = 0;
};

/// Every compute action of a problem, numbered densely, with what pricing
/// and building need: rank, duration, producer and message time.
class ActionGraph {
public:
  /// `activationBytes` / `stashBytes`: per virtual stage, may be empty.
  ActionGraph(const ScheduleProblem &problem, const TimingModel &timing,
              const TensorSizes &sizes,
              const std::vector<int64_t> &activationBytes = {},
              const std::vector<int64_t> &stashBytes = {});

  struct Node {
    ComputeAction action;
    int virtualStage = 0;
    double duration = 0;
    int producer = -1;         // node id, -1 for F of virtual stage 0
    double messageSeconds = 0; // added to the producer's end
    std::vector<int> consumers;
    double microbatchUnits = 0; // held F..W, on F nodes
    int64_t activationBytes = 0, stashBytes = 0;
  };

  const ScheduleProblem &problem() const { return problemRef; }
  int size() const { return int(nodes.size()); }
  const Node &node(int id) const { return nodes[id]; }
  /// Node id of an in-range action.
  int id(const ComputeAction &action) const;
  /// The F node whose memory `id` (a B, W or fused backward) releases.
  int forwardOf(int id) const;
  bool hasBytes() const { return withBytes; }

private:
  const ScheduleProblem &problemRef;
  std::vector<Node> nodes;
  std::vector<int> virtualStageTable;
  bool withBytes = false;
};

struct Evaluation {
  /// False when the ranks cannot run their lists (a wait cycle).
  bool complete = false;
  double makespan = 0;
  std::vector<double> busySeconds, firstStart, lastEnd;
  std::vector<double> peakMicrobatches;
  std::vector<int64_t> peakBytes;

  bool within(const MemoryLimits &limits) const;
  /// Mean over ranks of 1 - busy / makespan (the simulator's bubble).
  double bubble() const;
};

/// Prices `schedule` (which must hold each action once on its rank).
Evaluation evaluate(const ActionGraph &graph, const Schedule &schedule);

/// How the greedy list scheduler picks a rank's next action among the ready
/// ones when the rank becomes free.
struct ListPolicy {
  /// Per rank: at most this many micro-batch units live (empty: none).
  std::vector<double> microbatchCap;
  /// Per rank: at most this many bytes live (empty: none).
  std::vector<int64_t> byteCap;
  /// B before F when both are ready (else F before B); W only fills,
  /// unless weightAfterBackward runs it right after its B.
  bool backwardFirst = true;
  bool weightAfterBackward = false;
  /// Among ready forwards, the later virtual stage first (a micro-batch
  /// already on its way through the rank before a new one).
  bool laterStageFirst = true;
  /// Admit a forward only if the caps also leave room for one micro-batch
  /// through the rank's later virtual stages (avoids filling a rank with
  /// early chunks, at the price of one slot).
  bool reserveLaterStages = true;
};

/// Builds per-rank orders by simulated time: each time a rank is free it
/// runs the policy's choice among the actions whose inputs have arrived; a
/// forward only when the rank's caps leave room for it (and, when asked,
/// for one micro-batch through the rank's later virtual stages). Forwards of a
/// virtual stage go in micro-batch order. Null when the caps stall every
/// rank.
std::optional<Schedule> listSchedule(const ActionGraph &graph,
                                     const ListPolicy &policy,
                                     const std::string &name);

} // namespace pipecc::scheduling::detail

#endif // PIPECC_LIB_SCHEDULING_LISTSCHEDULING_H
