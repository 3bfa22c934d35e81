//===- GraphNLLLoss.cpp - nll_loss and its gradient -----------------------===//
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace pipecc::graph;

static bool isReduction(StringRef reduction) {
  return reduction == "mean" || reduction == "sum" || reduction == "none";
}

/// Checks that `labels` has `input`'s shape without dimension 1.
static LogicalResult verifyLabels(std::optional<Location> loc,
                                  RankedTensorType input,
                                  RankedTensorType labels) {
  if (input.getRank() < 2)
    return emitOptionalError(loc, "input must be [N, C, ...], got ", input);
  SmallVector<int64_t> expected(input.getShape());
  expected.erase(expected.begin() + 1);
  if (labels.getShape() != ArrayRef<int64_t>(expected))
    return emitOptionalError(loc, "labels of type ", labels,
                             " do not match input of type ", input,
                             ": expected the input's shape without "
                             "dimension 1");
  return success();
}

/// The loss's type: rank 0, or one element per label position for "none".
static RankedTensorType lossType(StringRef reduction, RankedTensorType input,
                                 RankedTensorType labels) {
  if (reduction == "none")
    return RankedTensorType::get(labels.getShape(), input.getElementType());
  return RankedTensorType::get({}, input.getElementType());
}

LogicalResult NLLLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
  auto labels = llvm::cast<RankedTensorType>(adaptor.getLabels().getType());
  if (failed(verifyLabels(loc, input, labels)))
    return failure();
  types.push_back(lossType(adaptor.getReduction(), input, labels));
  return success();
}

LogicalResult NLLLossOp::verify() {
  if (!isReduction(getReduction()))
    return emitOpError("reduction '")
           << getReduction() << "' is not one of mean, sum, none";
  return success();
}

LogicalResult NLLLossGradOp::verify() {
  if (!isReduction(getReduction()))
    return emitOpError("reduction '")
           << getReduction() << "' is not one of mean, sum, none";
  RankedTensorType input = getType(), labels = getLabels().getType();
  if (failed(verifyLabels(getLoc(), input, labels)))
    return failure();
  RankedTensorType expected = lossType(getReduction(), input, labels);
  if (getLossGrad().getType() != expected)
    return emitOpError("loss_grad ")
           << getLossGrad().getType() << " is not of the loss's type "
           << expected;
  return success();
}

/// nll_loss(log_softmax(x, axis 1), labels) with the mean reduction is
/// graph.cross_entropy(x, labels): one op whose lowering and gradient never
/// materialise the log-probabilities.
LogicalResult NLLLossOp::canonicalize(NLLLossOp op, PatternRewriter &rewriter) {
  auto logSoftmax = op.getInput().getDefiningOp<LogSoftmaxOp>();
  if (!logSoftmax || op.getReduction() != "mean" ||
      logSoftmax.getAxisAttr().getInt() != 1 || !logSoftmax->hasOneUse())
    return failure();
  rewriter.replaceOpWithNewOp<CrossEntropyOp>(
      op, op.getType(), logSoftmax.getInput(), op.getLabels(),
      op.getIgnoreIndexAttr());
  return success();
}

LogicalResult NLLLossOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<NLLLossGradOp>(
      getLoc(), getInput().getType(), getLabels(), resultGrads[0],
      getReductionAttr(), getIgnoreIndexAttr()));
  grads.push_back(Value()); // integer labels carry no gradient
  return success();
}

// One read and one addition per label position.
OpCost NLLLossOp::getCost() {
  OpCost cost = pipecc::graph::detail::elementwiseCost(*this, 0, 0);
  int64_t positions = getLabels().getType().getNumElements();
  cost.flops = positions;
  cost.bytesRead = getLabels().getType().getNumElements() *
                       (getLabels().getType().getElementTypeBitWidth() / 8) +
                   positions * (getInput().getType().getElementTypeBitWidth() / 8);
  return cost;
}

// A compare and a select per element of the input's gradient.
OpCost NLLLossGradOp::getCost() { return pipecc::graph::detail::elementwiseCost(*this, 2, 0); }
