//===- AccumulateGradients.cpp - Weight gradients into the accumulator ----===//
//
// Without this, every W (or fused BW) call writes a micro-batch's weight
// gradient into scratch and the runtime adds the scratch into the
// parameter's accumulator: a second pass over every gradient per
// micro-batch. Here the function adds into the accumulator itself: the
// weight-gradient GEMM runs with beta = 1 on it (MatmulToBlas and
// MatmulToCublas use beta = 1 when no zero fill precedes the matmul), a bias
// gradient's sum reduction starts from the accumulator's value.
//
//===----------------------------------------------------------------------===//
#include "GemmOperands.h"
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Conversion/StageAbi.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringSet.h"

namespace pipecc {
#define GEN_PASS_DEF_ACCUMULATEGRADIENTS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;

namespace {

/// A linalg op that adds its result into its only init `out` and reads
/// `out` nowhere else: a matmul, or a generic whose payload yields
/// `out + x` (a sum reduction).
bool addsInto(Operation *op, Value out) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getDpsInitOperand(0)->get() != out ||
      llvm::is_contained(linalgOp.getDpsInputs(), out))
    return false;
  if (conversion::classifyGemm(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return false;
  Block &body = generic.getRegion().front();
  BlockArgument acc = body.getArguments().back();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!acc.hasOneUse() || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  return add && add->getBlock() == &body &&
         (add.getLhs() == acc || add.getRhs() == acc);
}

/// A zero `linalg.fill` of `out` followed only by ops adding into it, all
/// directly in the function body: the fill, or null.
linalg::FillOp droppableZeroFill(Value out) {
  SmallVector<Operation *> users(out.getUsers());
  Block *body = cast<BlockArgument>(out).getOwner();
  if (users.size() < 2 || llvm::any_of(users, [&](Operation *user) {
        return user->getBlock() != body;
      }))
    return nullptr;
  llvm::sort(users, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  auto fill = dyn_cast<linalg::FillOp>(users.front());
  if (!fill || fill.getOutputs()[0] != out ||
      !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return nullptr;
  for (Operation *user : ArrayRef(users).drop_front())
    if (!addsInto(user, out))
      return nullptr;
  return fill;
}

/// The general case: the function writes the gradient to a temporary, and
/// one loop before each return adds it into `out`.
void addThroughTemporary(func::FuncOp func, BlockArgument out) {
  auto type = cast<MemRefType>(out.getType());
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  Location loc = out.getLoc();
  Value temp =
      b.create<memref::AllocOp>(loc, type, b.getI64IntegerAttr(64)).getResult();
  out.replaceAllUsesWith(temp);
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  func.walk([&](func::ReturnOp ret) {
    b.setInsertionPoint(ret);
    b.create<linalg::GenericOp>(
        loc, ValueRange{temp}, ValueRange{out},
        SmallVector<AffineMap>{identity, identity}, parallel,
        [&](OpBuilder &nested, Location at, ValueRange args) {
          nested.create<linalg::YieldOp>(
              at, nested.create<arith::AddFOp>(at, args[1], args[0])
                      .getResult());
        });
  });
}

struct AccumulateGradientsPass
    : pipecc::impl::AccumulateGradientsBase<AccumulateGradientsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // What the rank reads after the producing call: stage function
    // arguments and the tensors it sends (as the host program's rule).
    llvm::StringSet<> read;
    std::optional<int64_t> rank;
    if (auto attr = module->getAttrOfType<IntegerAttr>(attrs::kRank))
      rank = attr.getInt();
    for (auto func : module.getOps<func::FuncOp>())
      if (auto abi = func->getAttrOfType<DictionaryAttr>(attrs::kStageAbi))
        if (auto args = abi.getAs<ArrayAttr>(attrs::kAbiArgs))
          for (Attribute arg : args)
            if (auto dict = dyn_cast<DictionaryAttr>(arg))
              if (auto name = dict.getAs<StringAttr>(attrs::kTensor))
                read.insert(name.getValue());
    module.walk([&](pipeline::SendOp send) {
      auto program = send->getParentOfType<pipeline::ProgramOp>();
      if (!rank || !program ||
          static_cast<int64_t>(program.getRank()) == *rank)
        read.insert(send.getTensor());
    });

    for (auto func : module.getOps<func::FuncOp>()) {
      auto abi = func->getAttrOfType<DictionaryAttr>(attrs::kStageAbi);
      if (!abi || func.isExternal())
        continue;
      auto args = abi.getAs<ArrayAttr>(attrs::kAbiArgs);
      auto results = abi.getAs<ArrayAttr>(attrs::kAbiResults);
      // Every result must have become an out-param, in order.
      if (!args || !results || func.getNumResults() != 0 ||
          func.getNumArguments() != args.size() + results.size())
        continue;
      SmallVector<Attribute> newResults(results.begin(), results.end());
      bool changed = false;
      for (auto [i, attr] : llvm::enumerate(results)) {
        auto binding = dyn_cast<DictionaryAttr>(attr);
        if (!binding)
          continue;
        auto params = binding.getAs<ArrayAttr>(attrs::kParamGrad);
        auto name = binding.getAs<StringAttr>(attrs::kTensor);
        if (!params || !name ||
            !accumulatesInPlace(params.size(), read.contains(name.getValue())))
          continue;
        BlockArgument out = func.getArgument(args.size() + i);
        // The host program and the memory plan count on every such result
        // accumulating: the runtime's gradients are static f32 buffers.
        auto type = dyn_cast<MemRefType>(out.getType());
        if (!type || !type.hasStaticShape() || !type.getElementType().isF32()) {
          func.emitError("gradient result ")
              << i << " is " << out.getType()
              << "; accumulating it needs a static f32 memref";
          return signalPassFailure();
        }
        if (linalg::FillOp fill = droppableZeroFill(out)) {
          fill.erase();
          ++numFillsDropped;
        } else {
          addThroughTemporary(func, out);
          ++numAddLoops;
        }
        NamedAttrList entries(binding);
        entries.set(attrs::kAbiAccumulate, UnitAttr::get(&getContext()));
        newResults[i] = entries.getDictionary(&getContext());
        changed = true;
        ++numAccumulated;
      }
      if (!changed)
        continue;
      NamedAttrList entries(abi);
      entries.set(attrs::kAbiResults,
                  ArrayAttr::get(&getContext(), newResults));
      func->setAttr(attrs::kStageAbi, entries.getDictionary(&getContext()));
    }
  }
};

} // namespace
