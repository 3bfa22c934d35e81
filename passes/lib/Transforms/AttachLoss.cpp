#include "PassUtils.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"

namespace pipecc {
#define GEN_PASS_DEF_ATTACHLOSS
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;

namespace {
struct AttachLossPass : pipecc::impl::AttachLossBase<AttachLossPass> {
  using AttachLossBase::AttachLossBase;

  void runOnOperation() override {
    func::FuncOp func = getModelFunction(getOperation());
    if (!func)
      return signalPassFailure();
    if (kind != "cross-entropy" && kind != "mse") {
      getOperation().emitError("unknown loss '")
          << kind << "'; expected cross-entropy or mse";
      return signalPassFailure();
    }
    auto ret = llvm::cast<func::ReturnOp>(func.front().getTerminator());
    if (ret.getNumOperands() == 0) {
      func.emitError("the model has no output to attach a loss to");
      return signalPassFailure();
    }
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(i, attrs::kInput);
          name && name.getValue() == labelInput) {
        func.emitError("the model already has an input named '")
            << labelInput << "'; choose another --label-input";
        return signalPassFailure();
      }

    Value prediction = ret.getOperand(0);
    auto predType = llvm::cast<RankedTensorType>(prediction.getType());
    Type labelType = predType;
    if (kind == "cross-entropy") {
      if (predType.getRank() < 2) {
        func.emitError("cross-entropy needs logits of rank 2 or more, the "
                       "model's first output is ")
            << predType;
        return signalPassFailure();
      }
      SmallVector<int64_t> shape(predType.getShape());
      shape.erase(shape.begin() + 1);
      labelType =
          RankedTensorType::get(shape, IntegerType::get(&getContext(), 64));
    }
    unsigned index = func.getNumArguments();
    func.insertArgument(
        index, labelType,
        DictionaryAttr::get(
            &getContext(),
            {NamedAttribute(StringAttr::get(&getContext(), attrs::kInput),
                            StringAttr::get(&getContext(), labelInput))}),
        func.getLoc());
    Value labels = func.getArgument(index);
    OpBuilder b(ret);
    Location loc = NameLoc::get(StringAttr::get(&getContext(), "loss"));
    Value loss;
    if (kind == "cross-entropy")
      loss = b.create<graph::CrossEntropyOp>(loc, prediction, labels,
                                             IntegerAttr());
    else
      loss = b.create<graph::MSELossOp>(loc, prediction, labels);
    b.create<func::ReturnOp>(ret.getLoc(), loss);
    ret.erase();
    func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                   {loss.getType()}));
    func.setAllResultAttrs(ArrayRef<DictionaryAttr>{DictionaryAttr::get(
        &getContext(),
        {NamedAttribute(StringAttr::get(&getContext(), attrs::kOutput),
                        StringAttr::get(&getContext(), "loss"))})});
  }
};
} // namespace
