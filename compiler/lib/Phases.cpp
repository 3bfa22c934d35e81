#include "pipecc/Compiler/Phases.h"

#include "llvm/ADT/StringSwitch.h"

using namespace pipecc;

llvm::StringRef pipecc::phaseName(Phase phase) {
  switch (phase) {
  case Phase::Graph:
    return "graph";
  case Phase::Autodiff:
    return "autodiff";
  case Phase::Partition:
    return "partition";
  case Phase::Schedule:
    return "schedule";
  case Phase::Lower:
    return "lower";
  case Phase::Codegen:
    return "codegen";
  }
  return "unknown";
}

std::optional<Phase> pipecc::parsePhase(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Cases("graph", "import", Phase::Graph)
      .Case("autodiff", Phase::Autodiff)
      .Case("partition", Phase::Partition)
      .Case("schedule", Phase::Schedule)
      .Case("lower", Phase::Lower)
      .Case("codegen", Phase::Codegen)
      .Default(std::nullopt);
}

llvm::ArrayRef<Phase> pipecc::allPhases() {
  static const Phase phases[] = {Phase::Graph,    Phase::Autodiff,
                                 Phase::Partition, Phase::Schedule,
                                 Phase::Lower,    Phase::Codegen};
  return phases;
}

bool pipecc::isPhaseImplemented(Phase) { return true; }
