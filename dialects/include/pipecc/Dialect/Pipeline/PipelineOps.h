#ifndef PIPECC_DIALECT_PIPELINE_PIPELINEOPS_H
#define PIPECC_DIALECT_PIPELINE_PIPELINEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#include "pipecc/Dialect/Pipeline/PipelineDialect.h"

#define GET_OP_CLASSES
#include "pipecc/Dialect/Pipeline/PipelineOps.h.inc"

#endif // PIPECC_DIALECT_PIPELINE_PIPELINEOPS_H
