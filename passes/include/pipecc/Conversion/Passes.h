#ifndef PIPECC_CONVERSION_PASSES_H
#define PIPECC_CONVERSION_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace pipecc {

#define GEN_PASS_DECL
#include "pipecc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pipecc/Conversion/Passes.h.inc"

} // namespace pipecc

#endif // PIPECC_CONVERSION_PASSES_H
