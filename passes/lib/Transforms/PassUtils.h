#ifndef PIPECC_PASSES_LIB_TRANSFORMS_PASSUTILS_H
#define PIPECC_PASSES_LIB_TRANSFORMS_PASSUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace pipecc {
/// The model function: `@main`, or the module's only function. Emits an
/// error on the module and returns null when there is none.
mlir::func::FuncOp getModelFunction(mlir::ModuleOp module);
} // namespace pipecc

#endif // PIPECC_PASSES_LIB_TRANSFORMS_PASSUTILS_H
