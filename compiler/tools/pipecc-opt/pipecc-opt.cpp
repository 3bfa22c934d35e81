// pipecc-opt: mlir-opt with pipecc's dialects and passes, for lit tests.
#include "pipecc/Compiler/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  pipecc::registerAllPipeccDialects(registry);
  pipecc::registerAllPipeccPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "pipecc optimizer driver\n", registry));
}
