#include "pipecc/Dialect/Pipeline/PipelineDialect.h"
#include "pipecc/Dialect/Pipeline/PipelineAttrs.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"

using namespace mlir;
using namespace pipecc::pipeline;

#include "pipecc/Dialect/Pipeline/PipelineDialect.cpp.inc"

void PipelineDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "pipecc/Dialect/Pipeline/PipelineOps.cpp.inc"
      >();
  registerAttributes();
}
