#ifndef PIPECC_DIALECT_PIPELINE_PIPELINEDIALECT_H
#define PIPECC_DIALECT_PIPELINE_PIPELINEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "pipecc/Dialect/Pipeline/PipelineDialect.h.inc"

#endif // PIPECC_DIALECT_PIPELINE_PIPELINEDIALECT_H
