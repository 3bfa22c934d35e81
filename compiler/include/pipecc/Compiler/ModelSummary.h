#ifndef PIPECC_COMPILER_MODELSUMMARY_H
#define PIPECC_COMPILER_MODELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace pipecc {
/// Prints a human-readable summary of a graph-dialect module: inputs,
/// outputs, parameters, op counts and the forward cost from CostOpInterface.
void printModelSummary(mlir::ModuleOp module, llvm::raw_ostream &os);
} // namespace pipecc

#endif // PIPECC_COMPILER_MODELSUMMARY_H
