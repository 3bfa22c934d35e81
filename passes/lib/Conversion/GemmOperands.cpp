//===- GemmOperands.cpp - Matmuls on memrefs as row-major gemm operands ---===//
#include "GemmOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace pipecc::conversion {

std::optional<GemmShape> classifyGemm(Operation *op) {
  if (isa<linalg::MatmulOp>(op))
    return GemmShape{false, false, false};
  if (isa<linalg::MatmulTransposeAOp>(op))
    return GemmShape{false, true, false};
  if (isa<linalg::MatmulTransposeBOp>(op))
    return GemmShape{false, false, true};
  if (isa<linalg::BatchMatmulOp>(op))
    return GemmShape{true, false, false};
  if (isa<linalg::BatchMatmulTransposeAOp>(op))
    return GemmShape{true, true, false};
  if (isa<linalg::BatchMatmulTransposeBOp>(op))
    return GemmShape{true, false, true};
  return std::nullopt;
}

bool isRowMajorOperand(Value value, Type elementType) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getElementType() != elementType)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  return !strides.empty() && strides.back() == 1;
}

GemmOperand unpackGemmOperand(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  auto metadata = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Type i64 = b.getI64Type();
  // The aligned pointer of a view-like op is its source's, except that a
  // memref.view adds its byte shift (the stage workspace's temporaries are
  // views); expand-strided-metadata folds the pointer of any view-like op to
  // its source's and would drop that shift, so it is added here from the
  // root of the chain.
  Value root = memref;
  Value shift;
  for (Value source = memref;
       auto viewLike = source.getDefiningOp<ViewLikeOpInterface>();) {
    source = viewLike.getViewSource();
    if (auto view = dyn_cast<memref::ViewOp>(viewLike.getOperation())) {
      shift = shift ? b.create<arith::AddIOp>(loc, shift, view.getByteShift())
                          .getResult()
                    : view.getByteShift();
      root = source;
    }
  }
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, root);
  if (shift)
    base = b.create<arith::AddIOp>(loc, base, shift);
  Value bytes = b.create<arith::MulIOp>(
      loc, metadata.getOffset(),
      b.create<arith::ConstantIndexOp>(loc, elementBytes));
  Value address = b.create<arith::IndexCastOp>(
      loc, i64, b.create<arith::AddIOp>(loc, base, bytes));
  GemmOperand result;
  result.pointer = b.create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(b.getContext()), address);
  for (Value size : metadata.getSizes())
    result.sizes.push_back(b.create<arith::IndexCastOp>(loc, i64, size));
  for (Value stride : metadata.getStrides())
    result.strides.push_back(b.create<arith::IndexCastOp>(loc, i64, stride));
  return result;
}

Value leadingDimension(OpBuilder &b, Location loc, const GemmOperand &operand) {
  size_t rank = operand.sizes.size();
  Value one = b.create<arith::ConstantIntOp>(loc, 1, 64);
  Value columns = b.create<arith::MaxSIOp>(loc, operand.sizes[rank - 1], one);
  return b.create<arith::MaxSIOp>(loc, operand.strides[rank - 2], columns);
}

linalg::FillOp findZeroFill(Operation *op, Value output) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(prev)) {
      if (dealloc.getMemref() == output)
        return nullptr;
      continue;
    }
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.getOutputs()[0] == output &&
        matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      return fill;
    return nullptr;
  }
  return nullptr;
}

namespace {
bool isZero(Value value) { return matchPattern(value, m_AnyZeroFloat()); }

/// `value` with memref reshapes (expand_shape, collapse_shape) looked
/// through.
Value stripReshapes(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
      value = expand.getSrc();
    else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def))
      value = collapse.getSrc();
    else
      break;
  }
  return value;
}

/// The byte range [begin, end) of `value` within a global it views
/// (memref.view of memref.get_global at a constant shift), if it is one.
struct GlobalRange {
  StringRef global;
  int64_t begin, end;
};
std::optional<GlobalRange> globalRange(Value value) {
  auto type = cast<MemRefType>(value.getType());
  auto view = stripReshapes(value).getDefiningOp<memref::ViewOp>();
  if (!view || !type.hasStaticShape())
    return std::nullopt;
  auto global = view.getSource().getDefiningOp<memref::GetGlobalOp>();
  std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
  if (!global || !shift)
    return std::nullopt;
  return GlobalRange{global.getName(), *shift,
                     *shift + type.getNumElements() *
                                  (type.getElementTypeBitWidth() / 8)};
}
} // namespace

bool mayOverlap(Value a, Value b) {
  if (stripReshapes(a) == stripReshapes(b))
    return true;
  std::optional<GlobalRange> ra = globalRange(a), rb = globalRange(b);
  if (!ra || !rb)
    return false;
  return ra->global == rb->global && ra->begin < rb->end &&
         rb->begin < ra->end;
}

std::optional<BiasEpilogue> matchBiasEpilogue(Operation *matmul, Value c) {
  Operation *next = matmul->getNextNode();
  for (; next; next = next->getNextNode()) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(next)) {
      if (dealloc.getMemref() == c)
        return std::nullopt;
      continue;
    }
    if (!isMemoryEffectFree(next) || next->getNumRegions() != 0)
      break;
  }
  auto generic = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0)
    return std::nullopt;

  // One input is C, or C expanded (identity), the other the bias (the last
  // index).
  int cInput = -1;
  memref::ExpandShapeOp expanded;
  for (int i = 0; i < 2; ++i) {
    OpOperand *operand = generic.getDpsInputOperand(i);
    auto reshape = operand->get().getDefiningOp<memref::ExpandShapeOp>();
    bool isC = operand->get() == c || (reshape && reshape.getSrc() == c);
    if (isC && generic.getMatchingIndexingMap(operand).isIdentity()) {
      cInput = i;
      expanded = operand->get() == c ? memref::ExpandShapeOp() : reshape;
    }
  }
  if (cInput < 0)
    return std::nullopt;
  Value cRead = generic.getDpsInputOperand(cInput)->get();
  auto cType = cast<MemRefType>(cRead.getType());
  unsigned rank = cType.getRank();
  Value output = generic.getDpsInitOperand(0)->get();
  auto outputType = dyn_cast<MemRefType>(output.getType());
  if (output == cRead || !outputType || outputType != cType ||
      !outputType.getLayout().isIdentity() ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity())
    return std::nullopt;
  OpOperand *biasOperand = generic.getDpsInputOperand(1 - cInput);
  Value bias = biasOperand->get();
  AffineMap biasMap = generic.getMatchingIndexingMap(biasOperand);
  auto biasType = dyn_cast<MemRefType>(bias.getType());
  if (!biasType || biasType.getRank() != 1 ||
      biasType.getElementType() != cType.getElementType() ||
      !biasType.getLayout().isIdentity() || biasMap.getNumResults() != 1 ||
      biasMap.getResult(0) != getAffineDimExpr(rank - 1, c.getContext()))
    return std::nullopt;

  // The body: add (either order), then optionally the ReLU select.
  Block &body = generic.getRegion().front();
  Value cArg = body.getArgument(cInput), biasArg = body.getArgument(1 - cInput);
  auto ops = body.without_terminator();
  auto it = ops.begin();
  if (it == ops.end())
    return std::nullopt;
  auto add = dyn_cast<arith::AddFOp>(*it);
  if (!add || !((add.getLhs() == cArg && add.getRhs() == biasArg) ||
                (add.getLhs() == biasArg && add.getRhs() == cArg)))
    return std::nullopt;
  Value result = add.getResult();
  bool relu = false;
  if (++it != ops.end()) {
    auto cmp = dyn_cast<arith::CmpFOp>(*it);
    if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::UGT ||
        cmp.getLhs() != result || !isZero(cmp.getRhs()) || ++it == ops.end())
      return std::nullopt;
    auto select = dyn_cast<arith::SelectOp>(*it);
    if (!select || select.getCondition() != cmp.getResult() ||
        select.getTrueValue() != result || !isZero(select.getFalseValue()) ||
        ++it != ops.end())
      return std::nullopt;
    result = select.getResult();
    relu = true;
  }
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getValues().size() != 1 || yield.getValues()[0] != result)
    return std::nullopt;

  // C is a temporary read by the generic alone.
  if (!c.getDefiningOp<memref::AllocOp>() && !globalRange(c))
    return std::nullopt;
  for (Operation *user : c.getUsers())
    if (user != matmul && user != generic && user != expanded &&
        !isa<memref::DeallocOp, linalg::FillOp>(user))
      return std::nullopt;
  if (expanded && !expanded->hasOneUse())
    return std::nullopt;
  return BiasEpilogue{generic, bias, output, relu, expanded};
}

LogicalResult declareRuntimeFunction(ModuleOp module, StringRef name,
                                     FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name)) {
    if (existing.getFunctionType() == type)
      return success();
    return existing.emitError("'")
           << name << "' is declared with type " << existing.getFunctionType()
           << " but the runtime ABI needs " << type;
  }
  if (Operation *other = module.lookupSymbol(name))
    return other->emitError("symbol '") << name << "' is not a function";
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto decl = builder.create<func::FuncOp>(module.getLoc(), name, type);
  decl.setPrivate();
  return success();
}

} // namespace pipecc::conversion
