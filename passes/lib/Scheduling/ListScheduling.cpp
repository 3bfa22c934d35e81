//===- ListScheduling.cpp - Fast pricing and greedy building of orders ----===//

#include "ListScheduling.h"

#include <algorithm>
#include <cmath>

using namespace pipecc::scheduling;
using namespace pipecc::scheduling::detail;

namespace {
constexpr double kEpsilon = 1e-9;

int kindSlot(ComputeKind kind) {
  switch (kind) {
  case ComputeKind::Forward:
    return 0;
  case ComputeKind::BackwardInput:
  case ComputeKind::Backward:
    return 1;
  case ComputeKind::BackwardWeight:
    return 2;
  }
  return 0;
}
} // namespace

ActionGraph::ActionGraph(const ScheduleProblem &problem,
                         const TimingModel &timing, const TensorSizes &sizes,
                         const std::vector<int64_t> &activationBytes,
                         const std::vector<int64_t> &stashBytes)
    : problemRef(problem) {
  const int V = problem.virtualStages(), M = problem.microbatches;
  virtualStageTable.assign(size_t(V), -1);
  for (int q = 0; q < V; ++q) {
    auto [rank, chunk] = problem.placement[q];
    virtualStageTable[size_t(rank) * problem.chunks + chunk] = q;
  }
  withBytes = !activationBytes.empty() || !stashBytes.empty();

  // A micro-batch unit of a rank is its activations through all of the
  // rank's virtual stages: by bytes when given, else equal shares.
  std::vector<double> rankTotal(problem.stages, 0);
  auto weightOf = [&](int q) {
    return activationBytes.empty() ? 1.0 : double(activationBytes[q]);
  };
  for (int q = 0; q < V; ++q)
    rankTotal[problem.placement[q].first] += weightOf(q);

  ComputeKind backward = problem.splitBackward ? ComputeKind::BackwardInput
                                               : ComputeKind::Backward;
  int kinds = problem.splitBackward ? 3 : 2;
  nodes.resize(size_t(kinds) * V * M);
  for (int kind = 0; kind < kinds; ++kind) {
    for (int q = 0; q < V; ++q) {
      auto [rank, chunk] = problem.placement[q];
      for (int m = 0; m < M; ++m) {
        Node &node = nodes[(size_t(kind) * V + q) * M + m];
        ComputeKind computeKind = kind == 0   ? ComputeKind::Forward
                                  : kind == 1 ? backward
                                              : ComputeKind::BackwardWeight;
        node.action = ComputeAction{computeKind, rank, chunk, m};
        node.virtualStage = q;
        node.duration = problem.duration(node.action);
        if (kind == 0) {
          double total = rankTotal[rank];
          node.microbatchUnits = total > 0 ? weightOf(q) / total : 0;
          node.activationBytes =
              activationBytes.empty() ? 0 : activationBytes[q];
          node.stashBytes = stashBytes.empty() ? 0 : stashBytes[q];
        }
      }
    }
  }
  auto placedOn = [&](int q) { return problem.placement[q].first; };
  for (int i = 0; i < size(); ++i) {
    Node &node = nodes[i];
    ComputeAction producer;
    if (!dependencyOf(problem, node.action, producer))
      continue;
    node.producer = id(producer);
    int q = node.virtualStage;
    int from = nodes[node.producer].virtualStage;
    if (placedOn(from) != placedOn(q)) {
      bool activation = node.action.kind == ComputeKind::Forward;
      int boundary = activation ? q - 1 : q;
      // The simulator's message time: the boundary's own seconds when
      // given, else latency + bytes / bandwidth.
      node.messageSeconds = timing.messageSeconds(
          boundary,
          activation ? sizes.activation(boundary) : sizes.gradient(boundary));
    }
    nodes[node.producer].consumers.push_back(i);
  }
}

int ActionGraph::id(const ComputeAction &action) const {
  const ScheduleProblem &problem = problemRef;
  int q =
      virtualStageTable[size_t(action.stage) * problem.chunks + action.chunk];
  return int((size_t(kindSlot(action.kind)) * problem.virtualStages() + q) *
                 problem.microbatches +
             action.microbatch);
}

int ActionGraph::forwardOf(int id) const {
  const Node &node = nodes[id];
  return node.virtualStage * problemRef.microbatches + node.action.microbatch;
}

bool Evaluation::within(const MemoryLimits &limits) const {
  for (double peak : peakMicrobatches)
    if (peak > limits.microbatches + kEpsilon)
      return false;
  if (limits.bytes > 0)
    for (int64_t peak : peakBytes)
      if (peak > limits.bytes)
        return false;
  return true;
}

double Evaluation::bubble() const {
  if (makespan <= 0 || busySeconds.empty())
    return 0;
  double idle = 0;
  for (double busy : busySeconds)
    idle += 1 - busy / makespan;
  return idle / double(busySeconds.size());
}

namespace {
/// Memory held on one rank as its actions run in order.
struct RankMemory {
  double units = 0, peakUnits = 0;
  int64_t bytes = 0, peakBytes = 0;

  /// Applies `id`'s effect; F takes, B trades activations for the stash,
  /// W (or a fused backward) releases.
  void apply(const ActionGraph &graph, int id) {
    const ActionGraph::Node &node = graph.node(id);
    const ActionGraph::Node &forward = node.action.kind == ComputeKind::Forward
                                           ? node
                                           : graph.node(graph.forwardOf(id));
    switch (node.action.kind) {
    case ComputeKind::Forward:
      units += forward.microbatchUnits;
      bytes += forward.activationBytes + forward.stashBytes;
      break;
    case ComputeKind::BackwardInput:
      bytes -= forward.activationBytes;
      break;
    case ComputeKind::BackwardWeight:
      units -= forward.microbatchUnits;
      bytes -= forward.stashBytes;
      break;
    case ComputeKind::Backward:
      units -= forward.microbatchUnits;
      bytes -= forward.activationBytes + forward.stashBytes;
      break;
    }
    peakUnits = std::max(peakUnits, units);
    peakBytes = std::max(peakBytes, bytes);
  }
};
} // namespace

Evaluation detail::evaluate(const ActionGraph &graph,
                            const Schedule &schedule) {
  const int ranks = graph.problem().stages;
  Evaluation result;
  result.busySeconds.assign(ranks, 0);
  result.firstStart.assign(ranks, -1);
  result.lastEnd.assign(ranks, 0);
  std::vector<double> end(graph.size(), -1);
  std::vector<size_t> next(ranks, 0);
  std::vector<double> clock(ranks, 0);
  std::vector<RankMemory> memory(ranks);
  bool progressed = true;
  size_t remaining = 0;
  for (const std::vector<ComputeAction> &actions : schedule.perRank)
    remaining += actions.size();
  while (progressed && remaining > 0) {
    progressed = false;
    for (int rank = 0; rank < ranks; ++rank) {
      const std::vector<ComputeAction> &actions = schedule.perRank[rank];
      while (next[rank] < actions.size()) {
        int id = graph.id(actions[next[rank]]);
        const ActionGraph::Node &node = graph.node(id);
        double ready = 0;
        if (node.producer >= 0) {
          if (end[node.producer] < 0)
            break;
          ready = end[node.producer] + node.messageSeconds;
        }
        double start = std::max(clock[rank], ready);
        if (result.firstStart[rank] < 0)
          result.firstStart[rank] = start;
        end[id] = clock[rank] = start + node.duration;
        result.busySeconds[rank] += node.duration;
        memory[rank].apply(graph, id);
        ++next[rank];
        --remaining;
        progressed = true;
      }
    }
  }
  result.complete = remaining == 0;
  for (int rank = 0; rank < ranks; ++rank) {
    result.lastEnd[rank] = clock[rank];
    result.makespan = std::max(result.makespan, clock[rank]);
    result.peakMicrobatches.push_back(memory[rank].peakUnits);
    result.peakBytes.push_back(memory[rank].peakBytes);
    if (result.firstStart[rank] < 0)
      result.firstStart[rank] = 0;
  }
  return result;
}

namespace {
/// Priority classes of the list scheduler; lower runs first.
int classOf(const ListPolicy &policy, ComputeKind kind) {
  switch (kind) {
  case ComputeKind::BackwardWeight:
    return policy.weightAfterBackward ? 0 : 3;
  case ComputeKind::Forward:
    return policy.backwardFirst ? 2 : 1;
  case ComputeKind::BackwardInput:
  case ComputeKind::Backward:
    return policy.backwardFirst ? 1 : 2;
  }
  return 3;
}
} // namespace

std::optional<Schedule> detail::listSchedule(const ActionGraph &graph,
                                             const ListPolicy &policy,
                                             const std::string &name) {
  const ScheduleProblem &problem = graph.problem();
  const int ranks = problem.stages, V = problem.virtualStages();
  const int M = problem.microbatches;

  // Units and bytes one micro-batch needs through each virtual stage and
  // the rank's later ones: reserved when admitting a forward, so a rank
  // full of early chunks can still move a micro-batch through later ones.
  std::vector<double> reserveUnits(V, 0);
  std::vector<int64_t> reserveBytes(V, 0);
  for (int q = V - 1; q >= 0; --q) {
    int rank = problem.placement[q].first;
    const ActionGraph::Node &forward = graph.node(graph.id(ComputeAction{
        ComputeKind::Forward, rank, problem.placement[q].second, 0}));
    reserveUnits[q] = forward.microbatchUnits;
    reserveBytes[q] = forward.activationBytes + forward.stashBytes;
    for (int later = q + 1; policy.reserveLaterStages && later < V; ++later) {
      if (problem.placement[later].first != rank)
        continue;
      reserveUnits[q] += reserveUnits[later];
      reserveBytes[q] += reserveBytes[later];
      break;
    }
  }

  std::vector<double> end(graph.size(), -1);
  std::vector<double> clock(ranks, 0);
  std::vector<RankMemory> memory(ranks);
  // Per rank, the actions whose producer has been scheduled.
  std::vector<std::vector<int>> candidates(ranks);
  for (int m = 0; m < M; ++m) {
    int id =
        graph.id(ComputeAction{ComputeKind::Forward, problem.placement[0].first,
                               problem.placement[0].second, m});
    candidates[problem.placement[0].first].push_back(id);
  }
  // Forwards of each virtual stage run in micro-batch order.
  std::vector<int> nextForward(V, 0);

  auto readyTime = [&](int id) {
    const ActionGraph::Node &node = graph.node(id);
    return node.producer < 0 ? 0.0 : end[node.producer] + node.messageSeconds;
  };
  auto admissible = [&](int rank, int id) {
    const ActionGraph::Node &node = graph.node(id);
    if (node.action.kind != ComputeKind::Forward)
      return true;
    if (node.action.microbatch != nextForward[node.virtualStage])
      return false;
    int q = node.virtualStage;
    if (!policy.microbatchCap.empty() &&
        memory[rank].units + reserveUnits[q] >
            policy.microbatchCap[rank] + kEpsilon)
      return false;
    if (!policy.byteCap.empty() &&
        memory[rank].bytes + reserveBytes[q] > policy.byteCap[rank])
      return false;
    return true;
  };
  // Lexicographic priority: class, then micro-batch, then stage order.
  auto better = [&](int a, int b) {
    const ActionGraph::Node &x = graph.node(a), &y = graph.node(b);
    int cx = classOf(policy, x.action.kind),
        cy = classOf(policy, y.action.kind);
    if (cx != cy)
      return cx < cy;
    bool forward = x.action.kind == ComputeKind::Forward;
    if (forward && policy.laterStageFirst && x.virtualStage != y.virtualStage)
      return x.virtualStage > y.virtualStage;
    if (x.action.microbatch != y.action.microbatch)
      return x.action.microbatch < y.action.microbatch;
    return x.virtualStage > y.virtualStage;
  };

  Schedule schedule{name, std::vector<std::vector<ComputeAction>>(ranks)};
  for (int scheduled = 0; scheduled < graph.size(); ++scheduled) {
    // The rank that can start something soonest.
    int bestRank = -1;
    double bestStart = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      for (int id : candidates[rank]) {
        if (!admissible(rank, id))
          continue;
        double start = std::max(clock[rank], readyTime(id));
        if (bestRank < 0 || start < bestStart - kEpsilon) {
          bestRank = rank;
          bestStart = start;
        }
      }
    }
    if (bestRank < 0)
      return std::nullopt;
    // Its choice among what is ready by then.
    std::vector<int> &list = candidates[bestRank];
    int chosen = -1;
    size_t chosenAt = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      int id = list[i];
      if (!admissible(bestRank, id) || readyTime(id) > bestStart + kEpsilon)
        continue;
      if (chosen < 0 || better(id, chosen)) {
        chosen = id;
        chosenAt = i;
      }
    }
    list.erase(list.begin() + chosenAt);
    const ActionGraph::Node &node = graph.node(chosen);
    end[chosen] = clock[bestRank] = bestStart + node.duration;
    memory[bestRank].apply(graph, chosen);
    if (node.action.kind == ComputeKind::Forward)
      ++nextForward[node.virtualStage];
    schedule.perRank[bestRank].push_back(node.action);
    for (int consumer : node.consumers)
      candidates[graph.node(consumer).action.stage].push_back(consumer);
  }
  return schedule;
}
