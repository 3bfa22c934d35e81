//===- Search.cpp - The `auto` schedule -----------------------------------===//
//
// See Search.h for the algorithm. Everything is priced first by the fast
// compute-only evaluation of ListScheduling.h; the final choice among the
// seeds and the best searched orders is priced by materialising the sends
// and receives and simulating them, as the schedule pass reports.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Search.h"
#include "ListScheduling.h"
#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Simulator.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

using namespace pipecc::scheduling;
using detail::ActionGraph;
using detail::Evaluation;

namespace {
constexpr double kEpsilon = 1e-9;
/// Searched orders simulated with communication at the end.
constexpr size_t kFinalists = 4;

struct Candidate {
  Schedule schedule;
  std::string origin;
  Evaluation evaluation;
};

/// Orders compared by makespan, then by the sum of the ranks' ends (which
/// lets local search cross plateaus of equal makespan).
bool shorter(const Evaluation &a, const Evaluation &b) {
  if (a.makespan < b.makespan - kEpsilon)
    return true;
  if (a.makespan > b.makespan + kEpsilon)
    return false;
  double sumA = 0, sumB = 0;
  for (double end : a.lastEnd)
    sumA += end;
  for (double end : b.lastEnd)
    sumB += end;
  return sumA < sumB - kEpsilon;
}

Status checkOptions(const ScheduleProblem &problem,
                    const ScheduleSearchOptions &options) {
  size_t V = size_t(problem.virtualStages());
  for (const std::vector<int64_t> *bytes :
       {&options.activationBytes, &options.stashBytes})
    if (!bytes->empty() && bytes->size() != V)
      return Status::failure("auto: per-virtual-stage memory sizes list " +
                             std::to_string(bytes->size()) +
                             " stages, the problem has " + std::to_string(V));
  if (options.memoryLimitBytes > 0 && options.activationBytes.empty() &&
      options.stashBytes.empty())
    return Status::failure("auto: a memory limit in bytes needs the "
                           "activation sizes of the virtual stages");
  if (!(options.memoryLimitMicrobatches > 0))
    return Status::failure("auto: the memory limit must be positive");
  for (const std::vector<int64_t> *bytes :
       {&options.sizes.activationBytes, &options.sizes.gradientBytes})
    if (!bytes->empty() && bytes->size() + 1 != V)
      return Status::failure(
          "auto: message sizes list " + std::to_string(bytes->size()) +
          " boundaries, the problem has " + std::to_string(V - 1));
  return Status::success();
}

class Search {
public:
  Search(const ScheduleProblem &problem, const ScheduleSearchOptions &options)
      : problem(problem), options(options),
        graph(problem, options.timing, options.sizes, options.activationBytes,
              options.stashBytes) {
    limits.microbatches = options.memoryLimitMicrobatches;
    limits.bytes = options.memoryLimitBytes;
  }

  Result<ScheduleSearchResult> run() {
    ScheduleSearchResult result;
    std::vector<Candidate> pool;
    // 1. The fixed schedules that accept the problem and fit.
    std::string leastMemory;
    double leastPeak = std::numeric_limits<double>::infinity();
    for (const std::string &name : generatorNames()) {
      const ScheduleGenerator *generator = lookupGenerator(name);
      if (name == "auto" || !generator->accepts(problem))
        continue;
      Result<Schedule> schedule = generator->generate(problem);
      if (!schedule || !schedule->verify(problem))
        continue;
      Evaluation evaluation = detail::evaluate(graph, *schedule);
      double peak = *std::max_element(evaluation.peakMicrobatches.begin(),
                                      evaluation.peakMicrobatches.end());
      if (peak < leastPeak) {
        leastPeak = peak;
        leastMemory = name;
      }
      if (evaluation.complete && evaluation.within(limits))
        pool.push_back({*schedule, name, evaluation});
    }
    size_t fixedCount = pool.size();

    // 2. Greedy list scheduling under several policies.
    std::vector<Candidate> searched;
    for (const detail::ListPolicy &policy : policies()) {
      std::optional<Schedule> schedule =
          detail::listSchedule(graph, policy, "auto");
      if (!schedule)
        continue;
      Evaluation evaluation = detail::evaluate(graph, *schedule);
      if (evaluation.complete && evaluation.within(limits))
        searched.push_back({*schedule, "search", evaluation});
    }
    for (const Candidate &fixed : pool)
      searched.push_back({fixed.schedule, "search", fixed.evaluation});
    if (searched.empty()) {
      std::ostringstream error;
      error << "auto found no order within the memory limit of ";
      if (options.memoryLimitBytes > 0)
        error << options.memoryLimitBytes << " bytes and ";
      error << options.memoryLimitMicrobatches
            << " micro-batches of activations per rank";
      if (!leastMemory.empty())
        error << "; the least a fixed schedule needs is " << leastPeak << " ("
              << leastMemory << ")";
      return Diagnostic{error.str()};
    }
    // The best few distinct orders, by the fast pricing.
    std::stable_sort(searched.begin(), searched.end(),
                     [](const Candidate &a, const Candidate &b) {
                       return shorter(a.evaluation, b.evaluation);
                     });
    std::vector<Candidate> finalists;
    for (Candidate &candidate : searched) {
      bool seen = false;
      for (const Candidate &finalist : finalists)
        seen = seen || finalist.schedule.perRank == candidate.schedule.perRank;
      if (!seen)
        finalists.push_back(std::move(candidate));
      if (finalists.size() == kFinalists)
        break;
    }

    // 3. Local search from the two best, splitting the budget; 4. branch
    // and bound from the best on small problems.
    size_t improvedCount = std::min<size_t>(2, finalists.size());
    for (size_t i = 0; i < improvedCount; ++i) {
      Candidate improved = finalists[i];
      localSearch(improved,
                  options.localSearchEvaluations / int(improvedCount));
      finalists.push_back(std::move(improved));
    }
    if (graph.size() <= options.exactActions) {
      Candidate exact = finalists.front();
      result.proven = branchAndBound(exact);
      finalists.push_back(std::move(exact));
    }
    for (Candidate &finalist : finalists)
      pool.push_back(std::move(finalist));

    // 5. The final choice, simulated with communication.
    std::optional<size_t> winner;
    std::vector<double> makespans(pool.size(), 0);
    for (size_t i = 0; i < pool.size(); ++i) {
      Result<double> makespan = simulatedMakespan(pool[i].schedule);
      makespans[i] =
          makespan ? *makespan : std::numeric_limits<double>::infinity();
      if (i < fixedCount && makespans[i] < result.bestFixedMakespan) {
        result.bestFixedMakespan = makespans[i];
        result.bestFixed = pool[i].origin;
      }
      // A fixed schedule is kept unless the search is strictly better.
      if (!winner || makespans[i] < makespans[*winner] - kEpsilon)
        winner = i;
    }
    if (!std::isfinite(makespans[*winner]))
      return Diagnostic{"auto: no candidate order simulates"};
    const Candidate &chosen = pool[*winner];
    result.schedule = chosen.schedule;
    result.schedule.name = "auto";
    result.origin = chosen.origin;
    result.makespan = makespans[*winner];
    result.peakMicrobatches = chosen.evaluation.peakMicrobatches;
    if (graph.hasBytes())
      result.peakBytes = chosen.evaluation.peakBytes;
    Result<SimulationResult> simulation = simulateFull(result.schedule);
    if (simulation)
      result.bubble = simulation->bubbleFraction;
    return result;
  }

private:
  std::vector<detail::ListPolicy> policies() const {
    const int P = problem.stages, M = problem.microbatches;
    double limit = options.memoryLimitMicrobatches;
    std::set<double> caps;
    for (double cap : {1.0, double(P), 2.0 * P - 1, 2.0 * P, double(M), limit})
      if (std::isfinite(cap) && cap > 0)
        caps.insert(std::min(cap, limit));
    std::vector<detail::ListPolicy> result;
    for (double cap : caps) {
      for (int slope : {0, 1, 2}) {
        if (slope > 0 && cap <= 1)
          continue;
        for (int flags = 0; flags < 8; ++flags) {
          detail::ListPolicy policy;
          for (int rank = 0; rank < P; ++rank)
            policy.microbatchCap.push_back(
                std::min(limit, std::max(1.0, cap - slope * rank)));
          if (options.memoryLimitBytes > 0)
            policy.byteCap.assign(P, options.memoryLimitBytes);
          policy.backwardFirst = flags & 1;
          policy.weightAfterBackward = flags & 2;
          policy.laterStageFirst = !(flags & 4);
          if (!problem.splitBackward && policy.weightAfterBackward)
            continue;
          result.push_back(std::move(policy));
        }
      }
    }
    return result;
  }

  /// Moves one action at a time within its rank's order by up to `reach`
  /// places, keeping each move that shortens the order, until a full pass
  /// finds none or the evaluation budget is spent.
  void localSearch(Candidate &current, int budget) {
    const int reach = 3;
    bool improved = true;
    while (improved && budget > 0) {
      improved = false;
      for (int rank = 0; rank < problem.stages && budget > 0; ++rank) {
        std::vector<ComputeAction> &order = current.schedule.perRank[rank];
        for (int i = 0; i < int(order.size()) && budget > 0; ++i) {
          for (int shift = -reach; shift <= reach && budget > 0; ++shift) {
            int j = i + shift;
            if (shift == 0 || j < 0 || j >= int(order.size()))
              continue;
            moveWithin(order, i, j);
            --budget;
            Evaluation evaluation = detail::evaluate(graph, current.schedule);
            if (evaluation.complete && evaluation.within(limits) &&
                shorter(evaluation, current.evaluation)) {
              current.evaluation = evaluation;
              improved = true;
              break;
            }
            moveWithin(order, j, i);
          }
        }
      }
    }
  }

  static void moveWithin(std::vector<ComputeAction> &order, int from, int to) {
    if (from < to)
      std::rotate(order.begin() + from, order.begin() + from + 1,
                  order.begin() + to + 1);
    else
      std::rotate(order.begin() + to, order.begin() + from,
                  order.begin() + from + 1);
  }

  /// Branch and bound over active schedules; improves `best` in place.
  /// Whether it finished within the node budget.
  bool branchAndBound(Candidate &best) {
    const int N = graph.size(), P = problem.stages;
    // Longest chain from each action to the end, its own duration included.
    tail.assign(N, 0);
    // Consumers come later in the dependency chain; relax to a fixpoint.
    for (bool changed = true; changed;) {
      changed = false;
      for (int i = 0; i < N; ++i) {
        double longest = 0;
        for (int consumer : graph.node(i).consumers)
          longest = std::max(longest, graph.node(consumer).messageSeconds +
                                          tail[consumer]);
        double value = graph.node(i).duration + longest;
        if (value > tail[i] + kEpsilon) {
          tail[i] = value;
          changed = true;
        }
      }
    }
    state.end.assign(N, -1);
    state.clock.assign(P, 0);
    state.remaining.assign(P, 0);
    state.units.assign(P, 0);
    state.bytes.assign(P, 0);
    state.nextForward.assign(problem.virtualStages(), 0);
    state.orders.assign(P, {});
    for (int i = 0; i < N; ++i)
      state.remaining[graph.node(i).action.stage] += graph.node(i).duration;
    incumbent = best.evaluation.makespan;
    improvedOrder.reset();
    nodes = 0;
    explore(0);
    if (improvedOrder) {
      Schedule schedule{"auto", *improvedOrder};
      Evaluation evaluation = detail::evaluate(graph, schedule);
      if (evaluation.complete && evaluation.within(limits) &&
          shorter(evaluation, best.evaluation))
        best = {schedule, "search", evaluation};
    }
    return nodes <= options.exactNodes;
  }

  struct State {
    std::vector<double> end, clock, remaining, units;
    std::vector<int64_t> bytes;
    std::vector<int> nextForward;
    std::vector<std::vector<ComputeAction>> orders;
  };

  double readyTime(int id) const {
    const ActionGraph::Node &node = graph.node(id);
    return node.producer < 0 ? 0
                             : state.end[node.producer] + node.messageSeconds;
  }

  bool admissible(int id) const {
    const ActionGraph::Node &node = graph.node(id);
    if (state.end[id] >= 0)
      return false;
    if (node.producer >= 0 && state.end[node.producer] < 0)
      return false;
    if (node.action.kind != ComputeKind::Forward)
      return true;
    int rank = node.action.stage;
    return node.action.microbatch == state.nextForward[node.virtualStage] &&
           state.units[rank] + node.microbatchUnits <=
               limits.microbatches + kEpsilon &&
           (limits.bytes <= 0 ||
            state.bytes[rank] + node.activationBytes + node.stashBytes <=
                limits.bytes);
  }

  void explore(int scheduled) {
    if (++nodes > options.exactNodes)
      return;
    const int N = graph.size(), P = problem.stages;
    if (scheduled == N) {
      double makespan =
          *std::max_element(state.clock.begin(), state.clock.end());
      if (makespan < incumbent - kEpsilon) {
        incumbent = makespan;
        improvedOrder = state.orders;
      }
      return;
    }
    // Lower bound and the Giffler-Thompson conflict set.
    double bound = 0;
    for (int rank = 0; rank < P; ++rank)
      bound = std::max(bound, state.clock[rank] + state.remaining[rank]);
    double soonestEnd = std::numeric_limits<double>::infinity();
    int soonestRank = -1;
    std::vector<int> open;
    for (int id = 0; id < N; ++id) {
      if (!admissible(id))
        continue;
      open.push_back(id);
      int rank = graph.node(id).action.stage;
      double start = std::max(state.clock[rank], readyTime(id));
      bound = std::max(bound, start + tail[id]);
      double finish = start + graph.node(id).duration;
      if (finish < soonestEnd) {
        soonestEnd = finish;
        soonestRank = rank;
      }
    }
    if (open.empty() || bound >= incumbent - kEpsilon)
      return;
    std::vector<int> conflict;
    for (int id : open) {
      int rank = graph.node(id).action.stage;
      if (rank == soonestRank &&
          std::max(state.clock[rank], readyTime(id)) < soonestEnd - kEpsilon)
        conflict.push_back(id);
    }
    // Backwards first: the usual best guess, so good orders come early.
    std::stable_sort(conflict.begin(), conflict.end(), [&](int a, int b) {
      auto rankOf = [&](int id) {
        ComputeKind kind = graph.node(id).action.kind;
        return kind == ComputeKind::Forward          ? 1
               : kind == ComputeKind::BackwardWeight ? 2
                                                     : 0;
      };
      return rankOf(a) < rankOf(b);
    });
    for (int id : conflict) {
      const ActionGraph::Node &node = graph.node(id);
      int rank = node.action.stage;
      double savedClock = state.clock[rank], savedUnits = state.units[rank];
      int64_t savedBytes = state.bytes[rank];
      double start = std::max(savedClock, readyTime(id));
      state.end[id] = state.clock[rank] = start + node.duration;
      state.remaining[rank] -= node.duration;
      applyMemory(id, rank);
      if (node.action.kind == ComputeKind::Forward)
        ++state.nextForward[node.virtualStage];
      state.orders[rank].push_back(node.action);
      explore(scheduled + 1);
      state.orders[rank].pop_back();
      if (node.action.kind == ComputeKind::Forward)
        --state.nextForward[node.virtualStage];
      state.units[rank] = savedUnits;
      state.bytes[rank] = savedBytes;
      state.remaining[rank] += node.duration;
      state.clock[rank] = savedClock;
      state.end[id] = -1;
      if (nodes > options.exactNodes)
        return;
    }
  }

  void applyMemory(int id, int rank) {
    const ActionGraph::Node &node = graph.node(id);
    const ActionGraph::Node &forward = node.action.kind == ComputeKind::Forward
                                           ? node
                                           : graph.node(graph.forwardOf(id));
    switch (node.action.kind) {
    case ComputeKind::Forward:
      state.units[rank] += forward.microbatchUnits;
      state.bytes[rank] += forward.activationBytes + forward.stashBytes;
      break;
    case ComputeKind::BackwardInput:
      state.bytes[rank] -= forward.activationBytes;
      break;
    case ComputeKind::BackwardWeight:
      state.units[rank] -= forward.microbatchUnits;
      state.bytes[rank] -= forward.stashBytes;
      break;
    case ComputeKind::Backward:
      state.units[rank] -= forward.microbatchUnits;
      state.bytes[rank] -= forward.activationBytes + forward.stashBytes;
      break;
    }
  }

  Result<SimulationResult> simulateFull(const Schedule &schedule) const {
    Result<std::vector<Program>> programs = materializeCommunication(
        problem, schedule, options.sizes, options.timing);
    if (!programs)
      return Diagnostic{programs.message()};
    return simulate(problem, *programs, options.timing);
  }

  Result<double> simulatedMakespan(const Schedule &schedule) const {
    Result<SimulationResult> simulation = simulateFull(schedule);
    if (!simulation)
      return Diagnostic{simulation.message()};
    return simulation->makespan;
  }

  const ScheduleProblem &problem;
  const ScheduleSearchOptions &options;
  ActionGraph graph;
  detail::MemoryLimits limits;
  // Branch and bound.
  std::vector<double> tail;
  State state;
  double incumbent = 0;
  std::optional<std::vector<std::vector<ComputeAction>>> improvedOrder;
  int64_t nodes = 0;
};

class AutoGenerator : public ScheduleGenerator {
public:
  explicit AutoGenerator(ScheduleSearchOptions options)
      : options(std::move(options)) {}

  std::string name() const override { return "auto"; }

  /// A split backward only widens the search: a W may still follow its B.
  bool splitsBackwardByDefault() const override { return true; }
  Result<PlacementKind> placementFor(int chunks) const override {
    if (chunks == 1)
      return PlacementKind::Linear;
    if (chunks == 2)
      return PlacementKind::VShape;
    return PlacementKind::Interleaved;
  }

  /// Any placement, split or fused, within the options' sizes.
  Status accepts(const ScheduleProblem &problem) const override {
    if (Status status = problem.check(); !status)
      return status;
    return checkOptions(problem, options);
  }

  Result<Schedule> generate(const ScheduleProblem &problem) const override {
    Result<ScheduleSearchResult> result = searchOrdering(problem, options);
    if (!result)
      return Diagnostic{result.message()};
    return result->schedule;
  }

private:
  ScheduleSearchOptions options;
};
} // namespace

double OrderPricing::spanBubble() const {
  if (busySeconds.empty())
    return 0;
  double idle = 0;
  for (size_t rank = 0; rank < busySeconds.size(); ++rank) {
    double span = lastEnd[rank] - firstStart[rank];
    idle += span > 0 ? 1 - busySeconds[rank] / span : 0;
  }
  return idle / double(busySeconds.size());
}

Result<OrderPricing>
pipecc::scheduling::priceOrder(const ScheduleProblem &problem,
                               const Schedule &schedule,
                               const ScheduleSearchOptions &options) {
  if (Status status = schedule.verify(problem); !status)
    return status;
  if (Status status = checkOptions(problem, options); !status)
    return status;
  ActionGraph graph(problem, options.timing, options.sizes,
                    options.activationBytes, options.stashBytes);
  Evaluation evaluation = detail::evaluate(graph, schedule);
  OrderPricing pricing;
  pricing.makespan = evaluation.makespan;
  pricing.bubble = evaluation.bubble();
  pricing.busySeconds = evaluation.busySeconds;
  pricing.firstStart = evaluation.firstStart;
  pricing.lastEnd = evaluation.lastEnd;
  pricing.peakMicrobatches = evaluation.peakMicrobatches;
  if (graph.hasBytes())
    pricing.peakBytes = evaluation.peakBytes;
  return pricing;
}

Result<ScheduleSearchResult>
pipecc::scheduling::searchOrdering(const ScheduleProblem &problem,
                                   const ScheduleSearchOptions &options) {
  if (Status status = problem.check(); !status)
    return status;
  if (Status status = checkOptions(problem, options); !status)
    return status;
  return Search(problem, options).run();
}

Result<ScheduleSpaceResult>
pipecc::scheduling::searchSchedule(const ScheduleSearchSpace &space,
                                   const ScheduleSearchOptions &options) {
  if (!space.build)
    return Diagnostic{"schedule search: no problem builder"};
  if (space.chunks.empty() || space.microbatches.empty())
    return Diagnostic{"schedule search: no chunks or micro-batches to try"};
  AutoGenerator placements{ScheduleSearchOptions{}};
  std::optional<ScheduleSpaceResult> best;
  std::vector<ScheduleSpaceResult::Tried> tried;
  for (int chunks : space.chunks) {
    for (int microbatches : space.microbatches) {
      ScheduleSpaceResult::Tried entry;
      entry.chunks = chunks;
      entry.microbatches = microbatches;
      Result<PlacementKind> placement = placements.placementFor(chunks);
      Result<ScheduleCandidateProblem> candidate =
          chunks > 0 && placement
              ? space.build(*placement, chunks, microbatches)
              : Result<ScheduleCandidateProblem>(
                    Diagnostic{"chunks must be positive"});
      if (!candidate) {
        entry.skipped = candidate.message();
        tried.push_back(entry);
        continue;
      }
      ScheduleSearchOptions local = options;
      if (!candidate->sizes.activationBytes.empty() ||
          !candidate->sizes.gradientBytes.empty())
        local.sizes = candidate->sizes;
      if (!candidate->activationBytes.empty())
        local.activationBytes = candidate->activationBytes;
      if (!candidate->stashBytes.empty())
        local.stashBytes = candidate->stashBytes;
      Result<ScheduleSearchResult> found =
          searchOrdering(candidate->problem, local);
      if (!found) {
        entry.skipped = found.message();
        tried.push_back(entry);
        continue;
      }
      entry.makespan = found->makespan;
      entry.origin = found->origin;
      tried.push_back(entry);
      if (!best || found->makespan < best->best.makespan - kEpsilon) {
        best = ScheduleSpaceResult{};
        best->chunks = chunks;
        best->microbatches = microbatches;
        best->problem = candidate->problem;
        best->best = *found;
      }
    }
  }
  if (!best) {
    std::ostringstream error;
    error << "schedule search: no candidate fits";
    for (const ScheduleSpaceResult::Tried &entry : tried)
      error << "; v=" << entry.chunks << " M=" << entry.microbatches << ": "
            << entry.skipped;
    return Diagnostic{error.str()};
  }
  best->tried = std::move(tried);
  return *best;
}

std::unique_ptr<ScheduleGenerator>
pipecc::scheduling::createAutoGenerator(ScheduleSearchOptions options) {
  return std::make_unique<AutoGenerator>(std::move(options));
}
