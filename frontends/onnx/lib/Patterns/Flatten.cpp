//===- Flatten.cpp - Flatten (interim) ------------------------------------===//
//
// Interim Flatten for the CNN exports until the static-shape patterns
// (helper B's StaticShape.cpp) land: drop this file and its three
// registration lines then.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;

/// The dimensions before `axis` into the first, the rest into the second.
static LogicalResult convertFlatten(NodeContext &ctx,
                                    SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  RankedTensorType type = ctx.getOperandType(0);
  int64_t rank = type.getRank(), axis = ctx.getInt("axis", 1);
  // Flatten's axis may equal the rank (everything in the first dimension).
  if (axis < -rank || axis > rank)
    return ctx.fail(llvm::formatv("attribute 'axis' {0} is out of range for "
                                  "rank {1}",
                                  axis, rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= type.getDimSize(d);
  FailureOr<Value> flat = ctx.reshape(ctx.getOperand(0), {outer, inner});
  if (failed(flat))
    return failure();
  results.push_back(*flat);
  return success();
}

void pipecc::frontend::detail::populateFlattenPatterns(
    PatternRegistry &registry) {
  registry.add("Flatten", 1, convertFlatten);
}
