#ifndef PIPECC_DIALECT_PIPELINE_PIPELINEATTRS_H
#define PIPECC_DIALECT_PIPELINE_PIPELINEATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "pipecc/Dialect/Pipeline/PipelineDialect.h"

#define GET_ATTRDEF_CLASSES
#include "pipecc/Dialect/Pipeline/PipelineAttrs.h.inc"

namespace pipecc::pipeline {
/// The module attribute split-stages writes and readStageTable reads.
inline constexpr llvm::StringLiteral kStageTableAttrName =
    "pipeline.stage_table";
} // namespace pipecc::pipeline

#endif // PIPECC_DIALECT_PIPELINE_PIPELINEATTRS_H
