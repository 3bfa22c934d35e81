//===- RecordStageAbi.cpp - Stage bindings that survive the lowering ------===//
//
// The host program pass runs after the stage lowering, when a stage function
// is an llvm.func of bare pointers with no argument attributes left. What it
// needs to know about each pointer (which tensor, input or parameter it is,
// its type, whether it holds class ids) is written here into one function
// attribute, which the upstream conversions carry over to the llvm.func.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Conversion/StageAbi.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"

#include "mlir/IR/Builders.h"

namespace pipecc {
#define GEN_PASS_DEF_RECORDSTAGEABI
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;

namespace {

/// `attrs` (an argument's or result's pipeline.* attributes) plus `type`.
NamedAttrList bindingOf(DictionaryAttr attrs, Type type) {
  NamedAttrList binding(attrs);
  binding.set(attrs::kAbiType, TypeAttr::get(type));
  return binding;
}

struct RecordStageAbiPass
    : public pipecc::impl::RecordStageAbiBase<RecordStageAbiPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      std::optional<pipeline::StageFunctionRole> role =
          pipeline::getStageFunctionRole(func);
      if (!role)
        continue;
      StringAttr kind =
          b.getStringAttr(pipeline::stageFunctionKindName(role->kind));
      SmallVector<Attribute> args, results;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        BlockArgument arg = func.getArgument(i);
        NamedAttrList binding =
            bindingOf(func.getArgAttrDict(i), arg.getType());
        // Class ids for --synthetic and the runtime's range check: the class
        // count of the loss reading them.
        for (Operation *user : arg.getUsers())
          if (auto ce = llvm::dyn_cast<graph::CrossEntropyOp>(user)) {
            binding.set(attrs::kAbiNumClasses,
                        b.getI64IntegerAttr(
                            ce.getLogits().getType().getDimSize(1)));
            if (std::optional<int64_t> ignore = ce.getIgnoreIndex())
              binding.set(attrs::kAbiIgnoreIndex, b.getI64IntegerAttr(*ignore));
          }
        args.push_back(binding.getDictionary(&getContext()));
      }
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        results.push_back(bindingOf(func.getResultAttrDict(i),
                                    func.getResultTypes()[i])
                              .getDictionary(&getContext()));
      func->setAttr(attrs::kStageAbi,
                    b.getDictionaryAttr({
                        b.getNamedAttr(attrs::kAbiKind, kind),
                        b.getNamedAttr(attrs::kAbiArgs, b.getArrayAttr(args)),
                        b.getNamedAttr(attrs::kAbiResults,
                                       b.getArrayAttr(results)),
                    }));
      func.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
      func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
      for (StringRef name : {attrs::kRecv, attrs::kSend, attrs::kFunctionKind,
                             attrs::kFunctionStage})
        func->removeAttr(name);
    }
  }
};

} // namespace
