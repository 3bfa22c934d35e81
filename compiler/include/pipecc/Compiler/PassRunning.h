//===- PassRunning.h - Pass managers under the command line's options -----===//
//
// Every pass manager the driver runs (one per phase, one per rank's
// lowering) honours the same command-line options: --mlir-timing,
// --mlir-print-ir-after-all, the crash reproducer, ...
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_COMPILER_PASSRUNNING_H
#define PIPECC_COMPILER_PASSRUNNING_H

#include "mlir/Pass/PassManager.h"

namespace pipecc {

/// Applies the command line's pass-manager and timing options to `pm` and
/// runs it on `op`.
mlir::LogicalResult runWithCommandLineOptions(mlir::PassManager &pm,
                                              mlir::Operation *op);

} // namespace pipecc

#endif // PIPECC_COMPILER_PASSRUNNING_H
