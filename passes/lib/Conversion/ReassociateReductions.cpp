//===- ReassociateReductions.cpp - Let reductions vectorize ---------------===//
//
// A floating-point sum in program order is a serial chain: LLVM's loop
// vectorizer keeps it scalar unless the additions may be reassociated
// (summed in vector lanes, the lanes added at the end). The stage
// functions' reductions (softmax and log-softmax rows, LayerNorm's mean and
// variance, column sums of bias gradients) ran one element per instruction,
// their exp polynomials included: about half of the GPT benchmark's time
// outside the matmuls. No contract fixes that order (ONNX's ReduceSum,
// Softmax and LayerNormalization do not; PyTorch's CPU kernels sum in
// vector lanes too), so the float arithmetic of every reduction gets
// `reassoc`: the body of a linalg.generic with a reduction iterator and of
// an scf.for that carries a float value. Nothing else changes: no `nnan`
// or `ninf` (non-finite values must still propagate to the checks that
// report them) and no `contract` outside reductions. The order is still
// fixed by the compiled code, so results are deterministic run to run.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace pipecc {
#define GEN_PASS_DEF_REASSOCIATEREDUCTIONS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
bool carriesFloat(scf::ForOp loop) {
  return llvm::any_of(loop.getInitArgs(), [](Value value) {
    return isa<FloatType>(value.getType());
  });
}

bool hasReductionIterator(linalg::GenericOp generic) {
  return llvm::any_of(generic.getIteratorTypesArray(),
                      [](utils::IteratorType type) {
                        return type == utils::IteratorType::reduction;
                      });
}

struct ReassociateReductionsPass
    : pipecc::impl::ReassociateReductionsBase<ReassociateReductionsPass> {
  void runOnOperation() override {
    auto reassociate = [&](Region &body) {
      body.walk([&](arith::ArithFastMathInterface op) {
        // Optional on some ops (truncf, extf: a bf16 loop's conversions).
        arith::FastMathFlagsAttr attr = op.getFastMathFlagsAttr();
        arith::FastMathFlags flags =
            attr ? attr.getValue() : arith::FastMathFlags::none;
        if ((flags & arith::FastMathFlags::reassoc) ==
            arith::FastMathFlags::reassoc)
          return;
        op->setAttr(op.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(
                        &getContext(), flags | arith::FastMathFlags::reassoc));
        ++numMarked;
      });
    };
    getOperation()->walk([&](Operation *op) {
      if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
        if (hasReductionIterator(generic))
          reassociate(generic.getRegion());
      } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
        if (carriesFloat(loop))
          reassociate(loop.getRegion());
      }
    });
  }
};
} // namespace
