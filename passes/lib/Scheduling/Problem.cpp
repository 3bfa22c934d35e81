//===- Problem.cpp - Schedule problem construction and checks -------------===//

#include "pipecc/Scheduling/Problem.h"

#include <cmath>
#include <sstream>

using namespace pipecc::scheduling;

const char *pipecc::scheduling::kindName(ComputeKind kind) {
  switch (kind) {
  case ComputeKind::Forward:
    return "F";
  case ComputeKind::BackwardInput:
    return "B";
  case ComputeKind::BackwardWeight:
    return "W";
  case ComputeKind::Backward:
    return "BW";
  }
  return "?";
}

std::string pipecc::scheduling::describe(const ComputeAction &action) {
  std::ostringstream out;
  out << kindName(action.kind) << "(s" << action.stage << " c" << action.chunk
      << " m" << action.microbatch << ")";
  return out.str();
}

int ScheduleProblem::virtualStageOf(int stage, int chunk) const {
  for (size_t q = 0; q < placement.size(); ++q)
    if (placement[q].first == stage && placement[q].second == chunk)
      return int(q);
  return -1;
}

const ChunkDurations &ScheduleProblem::durationsOf(int stage, int chunk) const {
  static const ChunkDurations unit;
  if (durations.empty())
    return unit;
  return durations[size_t(stage) * chunks + chunk];
}

double ScheduleProblem::duration(const ComputeAction &action) const {
  const ChunkDurations &d = durationsOf(action.stage, action.chunk);
  switch (action.kind) {
  case ComputeKind::Forward:
    return d.forward;
  case ComputeKind::BackwardInput:
    return d.backwardInput;
  case ComputeKind::BackwardWeight:
    return d.backwardWeight;
  case ComputeKind::Backward:
    return d.backwardInput + d.backwardWeight;
  }
  return 0;
}

Status ScheduleProblem::check() const {
  std::ostringstream error;
  if (stages < 1 || chunks < 1 || microbatches < 1) {
    error << "stages, chunks and micro-batches must be positive, got "
          << stages << ", " << chunks << ", " << microbatches;
    return Status::failure(error.str());
  }
  if (int(placement.size()) != virtualStages()) {
    error << "the placement lists " << placement.size()
          << " virtual stages, expected stages x chunks = " << virtualStages();
    return Status::failure(error.str());
  }
  std::vector<int> holder(virtualStages(), -1);
  for (int q = 0; q < virtualStages(); ++q) {
    auto [stage, chunk] = placement[q];
    if (stage < 0 || stage >= stages || chunk < 0 || chunk >= chunks) {
      error << "virtual stage " << q << " is placed on (stage " << stage
            << ", chunk " << chunk << "), outside " << stages << " x "
            << chunks;
      return Status::failure(error.str());
    }
    int &previous = holder[size_t(stage) * chunks + chunk];
    if (previous >= 0) {
      error << "virtual stages " << previous << " and " << q
            << " are both placed on (stage " << stage << ", chunk " << chunk
            << ")";
      return Status::failure(error.str());
    }
    previous = q;
  }
  if (!durations.empty()) {
    if (int(durations.size()) != virtualStages()) {
      error << "expected durations for " << virtualStages()
            << " (stage, chunk) pairs, got " << durations.size();
      return Status::failure(error.str());
    }
    for (size_t i = 0; i < durations.size(); ++i) {
      for (double seconds : {durations[i].forward, durations[i].backwardInput,
                             durations[i].backwardWeight}) {
        if (!std::isfinite(seconds) || seconds < 0) {
          error << "durations of (stage " << i / chunks << ", chunk "
                << i % chunks << ") must be finite and non-negative";
          return Status::failure(error.str());
        }
      }
    }
  }
  return Status::success();
}

ScheduleProblem ScheduleProblem::linear(int stages, int microbatches,
                                        bool splitBackward) {
  return interleaved(stages, 1, microbatches, splitBackward);
}

ScheduleProblem ScheduleProblem::interleaved(int stages, int chunks,
                                             int microbatches,
                                             bool splitBackward) {
  ScheduleProblem problem;
  problem.stages = stages;
  problem.chunks = chunks;
  problem.microbatches = microbatches;
  problem.splitBackward = splitBackward;
  for (int q = 0; q < stages * chunks; ++q)
    problem.placement.push_back({q % stages, q / stages});
  return problem;
}

const char *pipecc::scheduling::placementName(PlacementKind kind) {
  switch (kind) {
  case PlacementKind::Linear:
    return "linear";
  case PlacementKind::Interleaved:
    return "interleaved";
  case PlacementKind::VShape:
    return "v";
  }
  return "linear";
}

ScheduleProblem ScheduleProblem::withPlacement(PlacementKind kind, int ranks,
                                               int chunks, int microbatches,
                                               bool splitBackward) {
  switch (kind) {
  case PlacementKind::Linear:
    return linear(ranks, microbatches, splitBackward);
  case PlacementKind::Interleaved:
    return interleaved(ranks, chunks, microbatches, splitBackward);
  case PlacementKind::VShape:
    return vShape(ranks, microbatches, splitBackward);
  }
  return linear(ranks, microbatches, splitBackward);
}

ScheduleProblem ScheduleProblem::vShape(int stages, int microbatches,
                                        bool splitBackward) {
  ScheduleProblem problem;
  problem.stages = stages;
  problem.chunks = 2;
  problem.microbatches = microbatches;
  problem.splitBackward = splitBackward;
  for (int s = 0; s < stages; ++s)
    problem.placement.push_back({s, 0});
  for (int s = stages - 1; s >= 0; --s)
    problem.placement.push_back({s, 1});
  return problem;
}

bool pipecc::scheduling::dependencyOf(const ScheduleProblem &problem,
                                      const ComputeAction &action,
                                      ComputeAction &dependency) {
  int q = problem.virtualStageOf(action.stage, action.chunk);
  ComputeKind backward = problem.splitBackward ? ComputeKind::BackwardInput
                                               : ComputeKind::Backward;
  auto at = [&](ComputeKind kind, int virtualStage) {
    auto [stage, chunk] = problem.placement[virtualStage];
    return ComputeAction{kind, stage, chunk, action.microbatch};
  };
  switch (action.kind) {
  case ComputeKind::Forward:
    if (q == 0)
      return false;
    dependency = at(ComputeKind::Forward, q - 1);
    return true;
  case ComputeKind::BackwardInput:
  case ComputeKind::Backward:
    dependency = q + 1 < problem.virtualStages() ? at(backward, q + 1)
                                                 : at(ComputeKind::Forward, q);
    return true;
  case ComputeKind::BackwardWeight:
    dependency = at(ComputeKind::BackwardInput, q);
    return true;
  }
  return false;
}
