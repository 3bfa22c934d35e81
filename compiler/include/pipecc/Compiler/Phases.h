#ifndef PIPECC_COMPILER_PHASES_H
#define PIPECC_COMPILER_PHASES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace pipecc {

/// The compiler's phases in execution order (docs/design.md describes each).
/// `--compile-to=<phase>` stops after a phase, `--emit=<phase>` prints the IR
/// it leaves.
enum class Phase {
  Graph,     // ONNX import into the graph dialect, cleaned up.
  Autodiff,  // loss, reverse-mode gradients, B/W split, optimizer update.
  Partition, // stage cuts chosen over the cost model.
  Schedule,  // per-rank programs in the pipeline dialect, verified.
  Lower,     // per-rank modules lowered to the LLVM dialect.
  Codegen,   // objects and linked rank executables.
};

llvm::StringRef phaseName(Phase phase);
/// Parses a phase name; `import` is accepted for `graph`.
std::optional<Phase> parsePhase(llvm::StringRef name);
llvm::ArrayRef<Phase> allPhases();
/// Whether this build of the compiler implements the phase.
bool isPhaseImplemented(Phase phase);

} // namespace pipecc

#endif // PIPECC_COMPILER_PHASES_H
