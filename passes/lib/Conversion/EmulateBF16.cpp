//===- EmulateBF16.cpp - bf16 arithmetic computed in f32 ------------------===//
//
// Upstream's pieces in one pass, so that a target's pipeline adds one line:
// math ops on bf16 are legalized to f32 (math-legalize-to-f32), arith ops
// on bf16 are emulated in f32 (arith-emulate-unsupported-floats), and the
// remaining bf16 <-> f32 extf/truncf are expanded to bit operations
// (arith-expand{include-bf16}; without it LLVM's x86 backend calls
// __truncsfbf2, which not every libgcc has).
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace pipecc {
#define GEN_PASS_DEF_EMULATEBF16
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
struct EmulateBF16Pass : pipecc::impl::EmulateBF16Base<EmulateBF16Pass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    MLIRContext *ctx = &getContext();
    bool anyBF16 = false;
    root->walk([&](Operation *op) {
      auto isBF16 = [](Type type) { return getElementTypeOrSelf(type).isBF16(); };
      if (llvm::any_of(op->getOperandTypes(), isBF16) ||
          llvm::any_of(op->getResultTypes(), isBF16))
        anyBF16 = true;
      return anyBF16 ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (!anyBF16)
      return;

    {
      TypeConverter converter;
      math::populateLegalizeToF32TypeConverter(converter);
      ConversionTarget target(*ctx);
      math::populateLegalizeToF32ConversionTarget(target, converter);
      RewritePatternSet patterns(ctx);
      math::populateLegalizeToF32Patterns(patterns, converter);
      if (failed(applyPartialConversion(root, target, std::move(patterns))))
        return signalPassFailure();
    }
    {
      TypeConverter converter;
      Type bf16 = BFloat16Type::get(ctx), f32 = Float32Type::get(ctx);
      arith::populateEmulateUnsupportedFloatsConversions(converter, {bf16},
                                                         f32);
      ConversionTarget target(*ctx);
      arith::populateEmulateUnsupportedFloatsLegality(target, converter);
      RewritePatternSet patterns(ctx);
      arith::populateEmulateUnsupportedFloatsPatterns(patterns, converter);
      if (failed(applyPartialConversion(root, target, std::move(patterns))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(ctx);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(root, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
