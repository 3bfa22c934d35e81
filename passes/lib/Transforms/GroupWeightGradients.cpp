//===- GroupWeightGradients.cpp - One call for W of consecutive batches ---===//
//
// pipecc-schedule{weight-gradient-group=N} puts the W of N consecutive
// micro-batches of a virtual stage back to back; this pass makes each such
// run one `pipeline.backward_weight ... count N` calling a grouped copy of
// the stage's weight-gradient function. The copy runs the body once per
// micro-batch, except where a result is a product dY^T X: there the
// micro-batches' rows are joined and one product over N times the rows
// replaces the N products and their sum, so that the accumulator the
// product adds into is read and written once per group instead of once per
// micro-batch (docs/design.md, "Weight gradients of two micro-batches in
// one product"). Every other result is the sum of the copies' values. The
// rows are joined without a copy where the operand is an argument the rank
// keeps per micro-batch: the copy takes the group's copies of it as one
// block (ArgForm::Joint), which the memory plan keeps side by side.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Runtime/Arena.h"

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

/// How the grouped function receives argument i of the single one.
enum class ArgForm {
  /// Once, for every micro-batch: a parameter.
  Shared,
  /// Once, as one block of the N micro-batches' copies side by side along
  /// dimension 0 (pipeline.microbatch_group): a tensor the rank keeps one
  /// copy of per micro-batch in flight, whose copies lie exactly one copy
  /// apart (its bytes a multiple of the arena's alignment) and, with a
  /// multiple of N copies, never wrap within a group that starts at a
  /// multiple of N.
  Joint,
  /// N times, each marked with its micro-batch (pipeline.microbatch_offset):
  /// a data input (loaded per micro-batch), or a tensor that cannot be one
  /// block.
  PerMicrobatch,
};

ArgForm argForm(func::FuncOp single, unsigned i) {
  if (single.getArgAttr(i, attrs::kBindParam))
    return ArgForm::Shared;
  if (single.getArgAttr(i, attrs::kBindInput) ||
      !single.getArgAttr(i, attrs::kTensor))
    return ArgForm::PerMicrobatch;
  auto type = llvm::dyn_cast<RankedTensorType>(single.getArgumentTypes()[i]);
  if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
      !type.getElementType().isIntOrFloat())
    return ArgForm::PerMicrobatch;
  int64_t bits = type.getNumElements() * type.getElementTypeBitWidth();
  return bits % (8 * rt::kArenaAlignment) == 0 ? ArgForm::Joint
                                                : ArgForm::PerMicrobatch;
}

/// `value` as (block, micro-batch) when it is micro-batch m's rows of a
/// joint argument, directly or flattened to 2-D by a reshape; `slices`
/// maps each slice the body reads to its joint argument and micro-batch.
struct JointRows {
  Value block;
  int64_t microbatch;
  bool flattened;
};
std::optional<JointRows>
jointRows(Value value,
          const DenseMap<Value, std::pair<Value, int64_t>> &slices) {
  bool flattened = false;
  if (auto reshape = value.getDefiningOp<graph::ReshapeOp>()) {
    auto from = llvm::cast<RankedTensorType>(reshape.getInput().getType());
    auto to = llvm::cast<RankedTensorType>(reshape.getType());
    // Only a reshape that keeps the last dimension and merges the others
    // into rows: micro-batch m's rows stay one contiguous block.
    if (to.getRank() != 2 || from.getRank() < 2 ||
        to.getDimSize(1) != from.getDimSize(from.getRank() - 1))
      return std::nullopt;
    value = reshape.getInput();
    flattened = true;
  }
  auto it = slices.find(value);
  if (it == slices.end())
    return std::nullopt;
  return JointRows{it->second.first, it->second.second, flattened};
}

/// Micro-batch by micro-batch operands of a product as one operand over
/// their rows: the joint argument itself (flattened like its slices) when
/// they are its slices in order, else their concatenation (a copy).
Value joinedRows(OpBuilder &b, Location loc, ArrayRef<Value> operands,
                 const DenseMap<Value, std::pair<Value, int64_t>> &slices) {
  std::optional<JointRows> first = jointRows(operands.front(), slices);
  bool joint = first.has_value();
  for (auto [m, operand] : llvm::enumerate(operands)) {
    std::optional<JointRows> rows = jointRows(operand, slices);
    joint = joint && rows && rows->block == first->block &&
            rows->microbatch == static_cast<int64_t>(m) &&
            rows->flattened == first->flattened;
  }
  auto type = llvm::cast<RankedTensorType>(operands.front().getType());
  auto joinedType = RankedTensorType::get(
      {type.getDimSize(0) * int64_t(operands.size()), type.getDimSize(1)},
      type.getElementType());
  if (joint && first->block.getType() == joinedType)
    return first->block;
  if (joint && first->flattened)
    return b.create<graph::ReshapeOp>(loc, joinedType, first->block);
  return b.create<graph::ConcatOp>(loc, operands, 0).getResult();
}

/// The products dY^T X among `values` (one per micro-batch, used nowhere
/// yet: the return comes after), as one product over their rows joined;
/// null when they are not all such products of 2-D operands of one shape.
Value joinedProduct(OpBuilder &b, Location loc, ArrayRef<Value> values,
                    const DenseMap<Value, std::pair<Value, int64_t>> &slices) {
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
  Value joinedLhs = joinedRows(b, loc, lhs, slices);
  Value joinedRhs = joinedRows(b, loc, rhs, slices);
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
  MLIRContext *ctx = single->getContext();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(single);
  // The grouped arguments: per argument of `single`, its form and where
  // its first grouped argument is.
  SmallVector<Type> inputs;
  SmallVector<DictionaryAttr> inputAttrs;
  SmallVector<ArgForm> forms;
  SmallVector<unsigned> firstInput;
  for (unsigned i = 0; i < single.getNumArguments(); ++i) {
    ArgForm form = argForm(single, i);
    forms.push_back(form);
    firstInput.push_back(inputs.size());
    auto type = single.getArgumentTypes()[i];
    NamedAttrList attrs(single.getArgAttrDict(i));
    if (form == ArgForm::Shared) {
      inputs.push_back(type);
      inputAttrs.push_back(attrs.getDictionary(ctx));
    } else if (form == ArgForm::Joint) {
      auto tensor = llvm::cast<RankedTensorType>(type);
      SmallVector<int64_t> shape(tensor.getShape());
      shape[0] *= count;
      inputs.push_back(tensor.clone(shape));
      attrs.set(pipeline::kMicrobatchGroup, b.getI64IntegerAttr(count));
      inputAttrs.push_back(attrs.getDictionary(ctx));
    } else {
      for (int64_t m = 0; m < count; ++m) {
        inputs.push_back(type);
        NamedAttrList copy = attrs;
        if (m)
          copy.set(pipeline::kMicrobatchOffset, b.getI64IntegerAttr(m));
        inputAttrs.push_back(copy.getDictionary(ctx));
      }
    }
  }
  auto grouped = b.create<func::FuncOp>(
      single.getLoc(), (single.getSymName() + "_x" + Twine(count)).str(),
      b.getFunctionType(inputs, single.getResultTypes()));
  for (NamedAttribute attr : single->getDiscardableAttrs())
    grouped->setAttr(attr.getName(), attr.getValue());
  grouped->setAttr(pipeline::kMicrobatchesPerCall, b.getI64IntegerAttr(count));
  for (auto [i, attrs] : llvm::enumerate(inputAttrs))
    grouped.setArgAttrs(i, attrs);
  for (unsigned i = 0; i < single.getNumResults(); ++i)
    grouped.setResultAttrs(i, single.getResultAttrDict(i));

  Block *body = grouped.addEntryBlock();
  b.setInsertionPointToStart(body);
  // Each joint argument's rows of each micro-batch: views, not copies.
  DenseMap<Value, std::pair<Value, int64_t>> slices;
  SmallVector<SmallVector<Value>> sliceOf(single.getNumArguments());
  for (unsigned i = 0; i < single.getNumArguments(); ++i) {
    if (forms[i] != ArgForm::Joint)
      continue;
    auto type = llvm::cast<RankedTensorType>(single.getArgumentTypes()[i]);
    Value block = body->getArgument(firstInput[i]);
    for (int64_t m = 0; m < count; ++m) {
      SmallVector<int64_t> offsets(type.getRank(), 0);
      offsets[0] = m * type.getDimSize(0);
      Value slice = b.create<graph::SliceOp>(single.getLoc(), block, offsets,
                                             type.getShape());
      slices[slice] = {block, m};
      sliceOf[i].push_back(slice);
    }
  }
  // One copy of the body per micro-batch; the values it returns, by result.
  SmallVector<SmallVector<Value>> returned(single.getNumResults());
  for (int64_t m = 0; m < count; ++m) {
    IRMapping mapping;
    for (unsigned i = 0; i < single.getNumArguments(); ++i) {
      Value value = forms[i] == ArgForm::Shared ? body->getArgument(firstInput[i])
                    : forms[i] == ArgForm::Joint
                        ? sliceOf[i][m]
                        : body->getArgument(firstInput[i] + m);
      mapping.map(single.getArgument(i), value);
    }
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
    Value sum =
        once ? joinedProduct(b, single.getLoc(), values, slices) : Value();
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
        // A run starts at a multiple of the size (as the scheduling library
        // groups), so that the copies it reads as one block never wrap.
        auto first = llvm::dyn_cast<pipeline::BackwardWeightOp>(op);
        if (first && first.getMicrobatch() % size != 0)
          first = {};
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
