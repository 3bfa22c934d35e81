#ifndef PIPECC_PASSES_PASSES_H
#define PIPECC_PASSES_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "pipecc/Dialect/Graph/GraphDialect.h"

namespace pipecc {

#define GEN_PASS_DECL
#include "pipecc/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "pipecc/Passes/Passes.h.inc"

} // namespace pipecc

#endif // PIPECC_PASSES_PASSES_H
