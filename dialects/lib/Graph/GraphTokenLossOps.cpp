//===- GraphTokenLossOps.cpp - label_count: verifier ----------------------===//
#include "pipecc/Dialect/Graph/GraphOps.h"

using namespace mlir;
using namespace pipecc::graph;

LogicalResult LabelCountOp::verify() {
  if (getType().getRank() != 0)
    return emitOpError("result must be a scalar, not ") << getType();
  return success();
}
