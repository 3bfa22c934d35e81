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
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace pipecc {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
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
    // (fmaf, floorf) on a baseline x86-64 target: expanded into arithmetic.
    populateExpandFmaFPattern(patterns);
    populateExpandFloorFPattern(patterns);
    // Only the ops collected (and what their rewrites create) are touched.
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    if (failed(applyOpPatternsAndFold(ops, std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace
