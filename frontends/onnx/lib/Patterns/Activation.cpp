//===- Activation.cpp - Sigmoid, Sin, Cos ---------------------------------===//
//
// SiLU exports as Mul(x, Sigmoid(x)) and imports as exactly that; rotary
// embeddings compute Sin and Cos of positions, which fold to constants when
// the positions are static. (LogSoftmax shares Softmax's conversion in
// Loss.cpp.)
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

void pipecc::frontend::detail::populateActivationPatterns(
    PatternRegistry &registry) {
  registry.add("Sigmoid", 6, convertFloatUnary<graph::SigmoidOp>);
  registry.add("Sin", 7, convertFloatUnary<graph::SinOp>);
  registry.add("Cos", 7, convertFloatUnary<graph::CosOp>);
}
