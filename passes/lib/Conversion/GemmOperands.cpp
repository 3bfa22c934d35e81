//===- GemmOperands.cpp - Matmuls on memrefs as row-major gemm operands ---===//
#include "GemmOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

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
