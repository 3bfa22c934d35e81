#include "pipecc/Dialect/Graph/GraphDialect.h"
#include "pipecc/Dialect/Graph/GraphEvaluation.h"
#include "pipecc/Dialect/Graph/GraphOps.h"

using namespace mlir;
using namespace pipecc::graph;

#include "pipecc/Dialect/Graph/GraphDialect.cpp.inc"
#include "pipecc/Dialect/Graph/GraphInterfaces.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "pipecc/Dialect/Graph/GraphOps.cpp.inc"
      >();
  // Ops on constants fold through the constant evaluator.
  detail::addGraphFoldInterface(this);
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}
