#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace pipecc {
#define GEN_PASS_DEF_COPYALIASEDRESULTS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
struct CopyAliasedResultsPass
    : pipecc::impl::CopyAliasedResultsBase<CopyAliasedResultsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 8> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<RankedTensorType>(value.getType());
        bool aliased = isa<BlockArgument>(value) || !seen.insert(value).second;
        if (!type || !aliased)
          continue;
        Value init = b.create<tensor::EmptyOp>(ret.getLoc(), type.getShape(),
                                               type.getElementType());
        operand.set(
            b.create<linalg::CopyOp>(ret.getLoc(), value, init).getResult(0));
      }
    });
  }
};
} // namespace
