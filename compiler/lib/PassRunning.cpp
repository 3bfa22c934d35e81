#include "pipecc/Compiler/PassRunning.h"

#include "mlir/Support/Timing.h"

using namespace mlir;

LogicalResult pipecc::runWithCommandLineOptions(PassManager &pm,
                                                Operation *op) {
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope rootTiming = timing.getRootScope();
  pm.enableTiming(rootTiming);
  return pm.run(op);
}
