//===- GroupWeightGradients.cpp - One call for W of consecutive batches ---===//
//
// pipecc-schedule{weight-gradient-group=N} puts the W of N consecutive
// micro-batches of a virtual stage back to back; this pass makes each such
// run one `pipeline.backward_weight ... count N` calling a grouped copy of
// the stage's weight-gradient function. The copy takes the function's
// arguments once per micro-batch and runs its body once per micro-batch,
// except where a result is a product dY^T X: there the micro-batches' rows
// are joined (graph.concat along the rows) and one product over N times the
// rows replaces the N products and their sum, so that the accumulator the
// product adds into is read and written once per group instead of once per
// micro-batch (docs/design.md, "Weight gradients of two micro-batches in
// one product"). Every other result is the sum of the copies' values.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace pipecc {
#define GEN_PASS_DEF_GROUPWEIGHTGRADIENTS
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;

namespace {

/// The products dY^T X among `values` (one per micro-batch, used nowhere
/// yet: the return comes after), as one product over their rows joined;
/// null when they are not all such products of 2-D operands of one shape.
Value joinedProduct(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  SmallVector<Value> lhs, rhs;
  for (Value value : values) {
    auto product = value.getDefiningOp<graph::MatMulOp>();
    if (!product || !product.getTransposeLhs() || product.getTransposeRhs() ||
        !value.use_empty())
      return {};
    auto l = llvm::dyn_cast<RankedTensorType>(product.getLhs().getType());
    auto r = llvm::dyn_cast<RankedTensorType>(product.getRhs().getType());
    if (!l || !r || l.getRank() != 2 || r.getRank() != 2 ||
        (!lhs.empty() && (l != lhs.front().getType() ||
                          r != rhs.front().getType())))
      return {};
    lhs.push_back(product.getLhs());
    rhs.push_back(product.getRhs());
  }
  Value joinedLhs = b.create<graph::ConcatOp>(loc, lhs, 0).getResult();
  Value joinedRhs = b.create<graph::ConcatOp>(loc, rhs, 0).getResult();
  Value joined = b.create<graph::MatMulOp>(loc, joinedLhs, joinedRhs,
                                           /*transposeLhs=*/true,
                                           /*transposeRhs=*/false);
  for (Value value : values)
    value.getDefiningOp()->erase();
  return joined;
}

/// The weight-gradient function `single` for `count` micro-batches in one
/// call (see the file comment), inserted after it.
FailureOr<func::FuncOp> groupedFunction(func::FuncOp single, int64_t count) {
  if (!single.getBody().hasOneBlock())
    return single.emitError("cannot group the weight gradients of @")
           << single.getSymName() << ": its body is not one block",
           failure();
  for (unsigned i = 0; i < single.getNumResults(); ++i)
    if (!single.getResultAttr(i, attrs::kParamGrad))
      return single.emitError("cannot group the weight gradients of @")
             << single.getSymName() << ": result " << i
             << " is not a parameter gradient, so the micro-batches' values "
                "cannot be summed",
             failure();
  OpBuilder b(single->getContext());
  b.setInsertionPointAfter(single);
  SmallVector<Type> inputs;
  for (int64_t m = 0; m < count; ++m)
    llvm::append_range(inputs, single.getArgumentTypes());
  auto grouped = b.create<func::FuncOp>(
      single.getLoc(),
      (single.getSymName() + "_x" + Twine(count)).str(),
      b.getFunctionType(inputs, single.getResultTypes()));
  for (NamedAttribute attr : single->getDiscardableAttrs())
    grouped->setAttr(attr.getName(), attr.getValue());
  grouped->setAttr(pipeline::kMicrobatchesPerCall, b.getI64IntegerAttr(count));
  unsigned perBatch = single.getNumArguments();
  for (int64_t m = 0; m < count; ++m)
    for (unsigned i = 0; i < perBatch; ++i) {
      NamedAttrList attrs(single.getArgAttrDict(i));
      if (m)
        attrs.set(pipeline::kMicrobatchOffset, b.getI64IntegerAttr(m));
      grouped.setArgAttrs(m * perBatch + i,
                          attrs.getDictionary(single->getContext()));
    }
  for (unsigned i = 0; i < single.getNumResults(); ++i)
    grouped.setResultAttrs(i, single.getResultAttrDict(i));

  Block *body = grouped.addEntryBlock();
  b.setInsertionPointToStart(body);
  // One copy of the body per micro-batch; the values it returns, by result.
  SmallVector<SmallVector<Value>> returned(single.getNumResults());
  for (int64_t m = 0; m < count; ++m) {
    IRMapping mapping;
    for (unsigned i = 0; i < perBatch; ++i)
      mapping.map(single.getArgument(i), body->getArgument(m * perBatch + i));
    for (Operation &op : single.getBody().front()) {
      if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
        for (auto [i, value] : llvm::enumerate(ret.getOperands()))
          returned[i].push_back(mapping.lookupOrDefault(value));
        continue;
      }
      b.clone(op, mapping);
    }
  }
  SmallVector<Value> results;
  // A value returned twice (or an argument) must not be consumed by a join.
  DenseMap<Value, int> uses;
  for (ArrayRef<Value> values : returned)
    for (Value value : values)
      ++uses[value];
  for (ArrayRef<Value> values : returned) {
    bool once = llvm::all_of(values, [&](Value v) { return uses[v] == 1; });
    Value sum = once ? joinedProduct(b, single.getLoc(), values) : Value();
    if (!sum) {
      sum = values.front();
      for (Value value : values.drop_front())
        sum = b.create<graph::AddOp>(single.getLoc(), sum, value);
    }
    results.push_back(sum);
  }
  b.create<func::ReturnOp>(single.getLoc(), results);
  return grouped;
}

struct GroupWeightGradientsPass
    : pipecc::impl::GroupWeightGradientsBase<GroupWeightGradientsPass> {
  using GroupWeightGradientsBase::GroupWeightGradientsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (size < 1) {
      module.emitError("--size of pipecc-group-weight-gradients must be at "
                       "least 1, got ")
          << size.getValue();
      return signalPassFailure();
    }
    if (size == 1)
      return;
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> groupedOf;
    SmallVector<pipeline::ProgramOp> programs;
    module.walk([&](pipeline::ProgramOp program) {
      programs.push_back(program);
    });
    for (pipeline::ProgramOp program : programs) {
      Block &actions = program.getBody().front();
      for (Operation *op = &actions.front(); op;) {
        auto first = llvm::dyn_cast<pipeline::BackwardWeightOp>(op);
        SmallVector<pipeline::BackwardWeightOp> run;
        for (Operation *next = op; first && next &&
                                   static_cast<int64_t>(run.size()) < size;
             next = next->getNextNode()) {
          auto w = llvm::dyn_cast<pipeline::BackwardWeightOp>(next);
          if (!w || w.getCount() != 1 || w.getCallee() != first.getCallee() ||
              w.getVirtualStage() != first.getVirtualStage() ||
              w.getMicrobatch() !=
                  first.getMicrobatch() + static_cast<int64_t>(run.size()))
            break;
          run.push_back(w);
        }
        if (static_cast<int64_t>(run.size()) < size) {
          op = op->getNextNode();
          continue;
        }
        func::FuncOp &grouped = groupedOf[first.getCallee()];
        if (!grouped) {
          auto single = symbols.lookup<func::FuncOp>(first.getCallee());
          if (!single) {
            first.emitOpError("calls @")
                << first.getCallee() << ", which is not a function";
            return signalPassFailure();
          }
          FailureOr<func::FuncOp> made = groupedFunction(single, size);
          if (failed(made))
            return signalPassFailure();
          grouped = *made;
          symbols.insert(grouped);
        }
        OpBuilder b(first);
        b.create<pipeline::BackwardWeightOp>(
            first.getLoc(), grouped.getSymName(), first.getVirtualStage(),
            first.getMicrobatch(), static_cast<uint64_t>(size));
        op = run.back()->getNextNode();
        for (pipeline::BackwardWeightOp w : run)
          w.erase();
      }
    }
  }
};

} // namespace
