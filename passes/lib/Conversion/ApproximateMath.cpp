//===- ApproximateMath.cpp - Inline f32 exp, erf and tanh ------------------===//
//
// math.exp, math.erf and math.tanh would each become one libm call per
// element (expf, erff, tanhf): the loop around them cannot vectorize and
// pays a call per element in softmax, GELU and tanh. Upstream's polynomial
// approximations replace them by inline arithmetic (their fma and floor
// expanded too). Measured against libm in double precision over float32
// inputs: exp is within 1 ulp over the normal range and flushes results
// below 2^-126 (x < -87.3) to zero; erf within 5 ulp; tanh within 6 ulp,
// saturating at +-(1 - 1.8e-7). Only these three ops are rewritten: the
// others keep libm's accuracy.
//
// The polynomials' math.floor is expanded here rather than by upstream's
// populateExpandFloorFPattern, whose truncation goes through i64: x86-64
// without AVX-512 has no vector f32 <-> i64 conversion, so LLVM scalarized
// every exp and erf of a vectorized loop (GELU's backward ran at 3 ns per
// element). Through i32 the loop keeps its vector lanes (cvttps2dq), and
// the result is floorf's, bit for bit.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace pipecc {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
/// floor(x) for f32 (scalar or vector) without a libm call and without i64:
///   t = sitofp(fptosi_i32(x))            x truncated toward zero
///   f = t - (t > x ? 1 : 0)              one lower for a negative fraction
///   floor = |x| < 2^23 ? copysign(f, x) : x
/// A float of magnitude 2^23 or more (and inf) is an integer already, NaN
/// fails the compare and stays itself, so the i32 conversion is only used
/// where it is exact; copysign keeps floor(-0.0) = -0.0.
struct ExpandFloorThroughI32 : OpRewritePattern<math::FloorOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::FloorOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    Type intType = i32;
    if (auto shaped = dyn_cast<ShapedType>(type))
      intType = shaped.clone(i32);
    auto constant = [&](float value) -> Value {
      Attribute attr = rewriter.getF32FloatAttr(value);
      if (auto shaped = dyn_cast<ShapedType>(type))
        attr = DenseElementsAttr::get(shaped, attr);
      return rewriter.create<arith::ConstantOp>(loc, type,
                                                cast<TypedAttr>(attr));
    };
    Value x = op.getOperand();
    Value truncated = rewriter.create<arith::SIToFPOp>(
        loc, type, rewriter.create<arith::FPToSIOp>(loc, intType, x));
    Value above = rewriter.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OGT, truncated, x);
    Value step = rewriter.create<arith::SelectOp>(loc, above, constant(1.0f),
                                                  constant(0.0f));
    Value lowered = rewriter.create<arith::SubFOp>(loc, truncated, step);
    Value signed_ = rewriter.create<math::CopySignOp>(loc, lowered, x);
    Value magnitude = rewriter.create<math::AbsFOp>(loc, x);
    Value small = rewriter.create<arith::CmpFOp>(
        loc, arith::CmpFPredicate::OLT, magnitude, constant(8388608.0f));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, small, signed_, x);
    return success();
  }
};

/// fma(a, b, c) as a * b + c whose two ops may be contracted: one vfmadd
/// where the target CPU has FMA, a multiply and an add where it has not
/// (llvm.fmuladd's meaning). Upstream's expansion drops the contraction, so
/// the polynomials of a native build ran twice the instructions.
struct ExpandFmaContractible : OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &rewriter) const override {
    auto contract = arith::FastMathFlagsAttr::get(
        rewriter.getContext(), arith::FastMathFlags::contract);
    Value product = rewriter.create<arith::MulFOp>(
        op.getLoc(), op.getA(), op.getB(), contract);
    rewriter.replaceOpWithNewOp<arith::AddFOp>(op, product, op.getC(),
                                               contract);
    return success();
  }
};

struct ApproximateMathPass
    : pipecc::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::ExpOp, math::ErfOp, math::TanhOp>(op) &&
          op->getResult(0).getType().isF32())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    // The polynomials use math.fma and math.floor, which are libm calls
    // (fmaf, floorf) on a baseline x86-64 target: expanded into arithmetic
    // (fma as a contractible multiply-add, floor through i32, see the file
    // comment).
    patterns.add<ExpandFmaContractible>(&getContext(), /*benefit=*/2);
    patterns.add<ExpandFloorThroughI32>(&getContext(), /*benefit=*/2);
    // Only the ops collected (and what their rewrites create) are touched.
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    if (failed(applyOpPatternsAndFold(ops, std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
