//===- FuseNorms.cpp - The pipecc-fuse-norms pass -------------------------===//
//
// Recognises decomposed layer and RMS normalisations on the graph dialect
// and replaces each with one graph.layer_norm or graph.rms_norm. Three
// patterns compose: the core (centre, mean of squares, epsilon, square
// root, divide or multiply by the reciprocal) becomes a norm without scale
// or bias; a following Mul by a row-shaped tensor becomes its scale and a
// following Add (layer norm only) its bias. Matching graph ops rather than
// ONNX nodes makes every opset and exporter spelling that imports to the
// same ops fuse alike.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Dialect/Graph/Normalization.h"
#include "pipecc/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace pipecc {
#define GEN_PASS_DEF_FUSENORMS
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc::graph;

namespace {

/// The value of a constant whose elements are all one number, if `value` is
/// one.
std::optional<double> getSplat(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = llvm::dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// `reduce_mean(input)` over the trailing dimensions from some axis on,
/// with kept dimensions: the statistic of a row.
struct RowMean {
  Value input;
  int64_t axis;
};

std::optional<RowMean> matchRowMean(Value value) {
  auto mean = value.getDefiningOp<ReduceMeanOp>();
  if (!mean || !mean.getKeepDims())
    return std::nullopt;
  int64_t rank = mean.getInput().getType().getRank();
  SmallVector<int64_t> axes;
  for (int64_t axis : mean.getAxes())
    axes.push_back(axis < 0 ? axis + rank : axis);
  llvm::sort(axes);
  if (axes.empty() || axes.back() != rank - 1)
    return std::nullopt;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return std::nullopt;
  return RowMean{mean.getInput(), axes.front()};
}

/// What the core of a decomposed norm computes.
struct NormMatch {
  bool centred; // layer norm (x - mean(x)); else RMS norm
  Value input;
  int64_t axis;
  double epsilon;
  /// The ops the fused norm replaces, besides the root.
  SmallVector<Operation *> inner;
};

/// Whether every use of the values `ops` define lies inside `ops` or
/// `root`: then the fused op replaces all of them.
bool isSelfContained(ArrayRef<Operation *> ops, Operation *root) {
  llvm::SmallPtrSet<Operation *, 8> set(ops.begin(), ops.end());
  set.insert(root);
  for (Operation *op : ops)
    for (Operation *user : op->getUsers())
      if (!set.contains(user))
        return false;
  return true;
}

/// `root` as `a / sqrt(mean(a*a) + eps)` or `a * (1 / sqrt(...))` (either
/// operand order), with `a = x - mean(x)` for a layer norm.
std::optional<NormMatch> matchNormCore(Operation *root) {
  Value numerator, root2;
  SmallVector<Operation *> inner;
  if (auto div = llvm::dyn_cast<DivOp>(root)) {
    numerator = div.getLhs();
    root2 = div.getRhs();
  } else if (auto mul = llvm::dyn_cast<MulOp>(root)) {
    for (auto [a, r] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      auto reciprocal = r.getDefiningOp<DivOp>();
      if (reciprocal && getSplat(reciprocal.getLhs()) == 1.0) {
        numerator = a;
        root2 = reciprocal.getRhs();
        inner.push_back(reciprocal);
        break;
      }
    }
  }
  if (!numerator)
    return std::nullopt;
  auto sqrt = root2.getDefiningOp<SqrtOp>();
  if (!sqrt)
    return std::nullopt;
  auto add = sqrt.getInput().getDefiningOp<AddOp>();
  if (!add || add.getType() != sqrt.getType())
    return std::nullopt;
  Value meanSquare = add.getLhs();
  std::optional<double> epsilon = getSplat(add.getRhs());
  if (!epsilon) {
    meanSquare = add.getRhs();
    epsilon = getSplat(add.getLhs());
  }
  if (!epsilon || meanSquare.getType() != add.getType())
    return std::nullopt;
  std::optional<RowMean> variance = matchRowMean(meanSquare);
  if (!variance)
    return std::nullopt;
  auto square = variance->input.getDefiningOp<MulOp>();
  if (!square || square.getLhs() != square.getRhs() ||
      square.getLhs() != numerator ||
      root->getResult(0).getType() != numerator.getType())
    return std::nullopt;
  inner.append({sqrt, add, meanSquare.getDefiningOp(), square});

  NormMatch match{false, numerator, variance->axis, *epsilon, inner};
  // A layer norm centres first: numerator = x - mean(x) over the same rows.
  if (auto sub = numerator.getDefiningOp<SubOp>()) {
    std::optional<RowMean> mean = matchRowMean(sub.getRhs());
    if (mean && mean->input == sub.getLhs() &&
        mean->axis == variance->axis && sub.getType() == sub.getLhs().getType()) {
      match.centred = true;
      match.input = sub.getLhs();
      match.inner.append({sub, sub.getRhs().getDefiningOp()});
    }
  }
  if (!isSelfContained(match.inner, root))
    return std::nullopt;
  return match;
}

struct FuseNormCore : RewritePattern {
  FuseNormCore(MLIRContext *ctx, llvm::Statistic &layerNorms,
               llvm::Statistic &rmsNorms)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        layerNorms(layerNorms), rmsNorms(rmsNorms) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!llvm::isa<DivOp, MulOp>(op))
      return failure();
    std::optional<NormMatch> match = matchNormCore(op);
    if (!match)
      return failure();
    Type type = op->getResult(0).getType();
    IntegerAttr axis = rewriter.getI64IntegerAttr(match->axis);
    FloatAttr epsilon = rewriter.getF64FloatAttr(match->epsilon);
    if (match->centred) {
      rewriter.replaceOpWithNewOp<LayerNormOp>(op, type, match->input, Value(),
                                               Value(), axis, epsilon);
      ++layerNorms;
    } else {
      rewriter.replaceOpWithNewOp<RmsNormOp>(op, type, match->input, Value(),
                                             axis, epsilon);
      ++rmsNorms;
    }
    return success();
  }

  llvm::Statistic &layerNorms, &rmsNorms;
};

/// The norm operand of a binary op and the other operand, if one operand
/// is an `OpTy` read only there.
template <typename OpTy>
std::optional<std::pair<OpTy, Value>> matchNormOperand(Operation *op) {
  for (unsigned i = 0; i < 2; ++i) {
    auto norm = op->getOperand(i).getDefiningOp<OpTy>();
    if (norm && norm->hasOneUse() &&
        op->getResult(0).getType() == norm.getType())
      return std::pair(norm, op->getOperand(1 - i));
  }
  return std::nullopt;
}

/// norm(x) * w -> norm(x) with scale w, for a norm without scale or bias.
struct AbsorbScale : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    if (auto match = matchNormOperand<LayerNormOp>(mul)) {
      auto [norm, scale] = *match;
      if (norm.getScale() || norm.getBias() ||
          !isRowOperand(scale, norm.getType(), norm.getAxis()))
        return failure();
      Value row = buildRowOperand(rewriter, mul.getLoc(), scale,
                                  norm.getType(), norm.getAxis());
      rewriter.replaceOpWithNewOp<LayerNormOp>(
          mul, norm.getType(), norm.getInput(), row, Value(),
          norm.getAxisAttr(), norm.getEpsilonAttr());
      return success();
    }
    if (auto match = matchNormOperand<RmsNormOp>(mul)) {
      auto [norm, scale] = *match;
      if (norm.getScale() ||
          !isRowOperand(scale, norm.getType(), norm.getAxis()))
        return failure();
      Value row = buildRowOperand(rewriter, mul.getLoc(), scale,
                                  norm.getType(), norm.getAxis());
      rewriter.replaceOpWithNewOp<RmsNormOp>(mul, norm.getType(),
                                             norm.getInput(), row,
                                             norm.getAxisAttr(),
                                             norm.getEpsilonAttr());
      return success();
    }
    return failure();
  }
};

/// layer_norm(x) + b -> layer_norm(x) with bias b.
struct AbsorbBias : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto match = matchNormOperand<LayerNormOp>(add);
    if (!match)
      return failure();
    auto [norm, bias] = *match;
    if (norm.getBias() || !isRowOperand(bias, norm.getType(), norm.getAxis()))
      return failure();
    Value row = buildRowOperand(rewriter, add.getLoc(), bias, norm.getType(),
                                norm.getAxis());
    rewriter.replaceOpWithNewOp<LayerNormOp>(
        add, norm.getType(), norm.getInput(), norm.getScale(), row,
        norm.getAxisAttr(), norm.getEpsilonAttr());
    return success();
  }
};

struct FuseNormsPass : pipecc::impl::FuseNormsBase<FuseNormsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseNormCore>(&getContext(), numLayerNorms, numRmsNorms);
    patterns.add<AbsorbScale, AbsorbBias>(&getContext());
    // The fused op takes the location of the op it replaces, the last of
    // its chain: the ONNX node a stage cut after the norm names.
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
