//===- MatmulToBlas.cpp - f32 linalg matmuls on memrefs to sgemm calls ----===//
//
// bf16 operands (a bf16 matmul accumulating into f32, see Contraction.cpp)
// are extended to f32 copies first: sgemm then computes exactly the f32
// accumulation of the bf16 products.
// The runtime's kernels (runtime/include/pipecc/Runtime/Runtime.h):
//   void pipecc_rt_sgemm(int32_t trans_a, int32_t trans_b, int64_t m,
//       int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
//       const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
//   void pipecc_rt_sgemm_batched(int32_t trans_a, int32_t trans_b,
//       int64_t m, int64_t n, int64_t k, float alpha,
//       const float *a, int64_t lda, int64_t stride_a,
//       const float *b, int64_t ldb, int64_t stride_b, float beta,
//       float *c, int64_t ldc, int64_t stride_c, int64_t batch);
// are declared with `!llvm.ptr` for the pointers, so the LLVM declaration
// matches the C prototype exactly.
//
// This runs after buffer deallocation has been inserted: the pointers are
// taken from the memrefs right before the call, and a dealloc placed after
// the matmul's last use stays after the call.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

namespace pipecc {
#define GEN_PASS_DEF_MATMULTOBLAS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kSgemm = "pipecc_rt_sgemm";
constexpr llvm::StringLiteral kSgemmBatched = "pipecc_rt_sgemm_batched";

struct GemmShape {
  bool batched, transposeA, transposeB;
};

std::optional<GemmShape> classify(Operation *op) {
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

/// An f32 memref whose innermost stride is statically 1 (rows may be
/// strided): BLAS's row-major layout with a leading dimension.
bool isBlasOperand(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || !type.getElementType().isF32())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  return !strides.empty() && strides.back() == 1;
}

/// A bf16 memref of static shape: a matmul operand the pass extends to an
/// f32 copy first (the product of bf16 values accumulated in f32).
bool isExtendableOperand(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getElementType().isBF16() && type.hasStaticShape();
}

/// An f32 copy of the bf16 memref `value` (exact: every bf16 is an f32),
/// deallocated after `after`.
Value extendToF32(OpBuilder &b, Location loc, Value value, Operation *after) {
  auto type = cast<MemRefType>(value.getType());
  auto wide = MemRefType::get(type.getShape(), b.getF32Type());
  Value copy = b.create<memref::AllocOp>(loc, wide);
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  b.create<linalg::GenericOp>(
      loc, ValueRange{value}, ValueRange{copy},
      SmallVector<AffineMap>{identity, identity}, parallel,
      [&](OpBuilder &nested, Location at, ValueRange args) {
        nested.create<linalg::YieldOp>(
            at, nested.create<arith::ExtFOp>(at, nested.getF32Type(), args[0])
                    .getResult());
      });
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(after);
  b.create<memref::DeallocOp>(loc, copy);
  return copy;
}

/// A BLAS view of one memref operand: its address (with the offset applied),
/// sizes and strides as i64.
struct Operand {
  Value pointer;
  SmallVector<Value> sizes, strides;
};

Operand unpack(OpBuilder &b, Location loc, Value memref) {
  auto metadata = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Type i64 = b.getI64Type();
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  Value bytes = b.create<arith::MulIOp>(
      loc, metadata.getOffset(),
      b.create<arith::ConstantIndexOp>(loc, sizeof(float)));
  Value address = b.create<arith::IndexCastOp>(
      loc, i64, b.create<arith::AddIOp>(loc, base, bytes));
  Operand result;
  result.pointer = b.create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(b.getContext()), address);
  for (Value size : metadata.getSizes())
    result.sizes.push_back(b.create<arith::IndexCastOp>(loc, i64, size));
  for (Value stride : metadata.getStrides())
    result.strides.push_back(b.create<arith::IndexCastOp>(loc, i64, stride));
  return result;
}

/// The row stride, at least the row length: for a single row the stride is
/// irrelevant to the product but BLAS checks lda >= columns.
Value leadingDimension(OpBuilder &b, Location loc, const Operand &operand) {
  size_t rank = operand.sizes.size();
  Value one = b.create<arith::ConstantIntOp>(loc, 1, 64);
  Value columns = b.create<arith::MaxSIOp>(loc, operand.sizes[rank - 1], one);
  return b.create<arith::MaxSIOp>(loc, operand.strides[rank - 2], columns);
}

/// A `linalg.fill` of zero into exactly `output` just before `op` (skipping
/// deallocations of other buffers), which beta = 0 makes redundant.
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

struct MatmulToBlasPass : pipecc::impl::MatmulToBlasBase<MatmulToBlasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics() || !classify(op))
        return;
      auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
      bool inputsOk = llvm::all_of(
          linalgOp.getDpsInputs(), [](Value input) {
            return isBlasOperand(input) || isExtendableOperand(input);
          });
      if (inputsOk && isBlasOperand(linalgOp.getDpsInits()[0]))
        matmuls.push_back(op);
    });
    if (matmuls.empty())
      return;

    MLIRContext *ctx = &getContext();
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    Type f32 = Float32Type::get(ctx), ptr = LLVM::LLVMPointerType::get(ctx);
    auto sgemmType = FunctionType::get(
        ctx, {i32, i32, i64, i64, i64, f32, ptr, i64, ptr, i64, f32, ptr, i64},
        {});
    auto batchedType = FunctionType::get(
        ctx,
        {i32, i32, i64, i64, i64, f32, ptr, i64, i64, ptr, i64, i64, f32, ptr,
         i64, i64, i64},
        {});
    bool anyBatched = llvm::any_of(
        matmuls, [](Operation *op) { return classify(op)->batched; });
    if (failed(declare(module, kSgemm, sgemmType)) ||
        (anyBatched && failed(declare(module, kSgemmBatched, batchedType))))
      return signalPassFailure();

    for (Operation *op : matmuls) {
      GemmShape shape = *classify(op);
      auto linalgOp = cast<linalg::LinalgOp>(op);
      Value a = linalgOp.getDpsInputOperand(0)->get();
      Value b = linalgOp.getDpsInputOperand(1)->get();
      Value c = linalgOp.getDpsInitOperand(0)->get();
      OpBuilder builder(op);
      Location loc = op->getLoc();

      float beta = 1.0f;
      if (linalg::FillOp fill = findZeroFill(op, c)) {
        fill.erase();
        beta = 0.0f;
        ++numZeroFillsFolded;
      }

      if (isExtendableOperand(a))
        a = extendToF32(builder, loc, a, op);
      if (isExtendableOperand(b))
        b = extendToF32(builder, loc, b, op);
      Operand opA = unpack(builder, loc, a), opB = unpack(builder, loc, b),
              opC = unpack(builder, loc, c);
      size_t rank = opC.sizes.size();
      Value m = opC.sizes[rank - 2], n = opC.sizes[rank - 1];
      Value k = opA.sizes[shape.transposeA ? rank - 2 : rank - 1];
      Value transA = builder.create<arith::ConstantIntOp>(loc, shape.transposeA, 32);
      Value transB = builder.create<arith::ConstantIntOp>(loc, shape.transposeB, 32);
      Value alpha = builder.create<arith::ConstantFloatOp>(
          loc, APFloat(1.0f), cast<FloatType>(f32));
      Value betaValue = builder.create<arith::ConstantFloatOp>(
          loc, APFloat(beta), cast<FloatType>(f32));
      Value lda = leadingDimension(builder, loc, opA);
      Value ldb = leadingDimension(builder, loc, opB);
      Value ldc = leadingDimension(builder, loc, opC);
      if (shape.batched)
        builder.create<func::CallOp>(
            loc, kSgemmBatched, TypeRange{},
            ValueRange{transA, transB, m, n, k, alpha, opA.pointer, lda,
                       opA.strides[0], opB.pointer, ldb, opB.strides[0],
                       betaValue, opC.pointer, ldc, opC.strides[0],
                       opC.sizes[0]});
      else
        builder.create<func::CallOp>(
            loc, kSgemm, TypeRange{},
            ValueRange{transA, transB, m, n, k, alpha, opA.pointer, lda,
                       opB.pointer, ldb, betaValue, opC.pointer, ldc});
      op->erase();
      ++numGemmCalls;
    }
  }

  /// Declares `name` private with `type`, or checks an existing symbol.
  LogicalResult declare(ModuleOp module, StringRef name, FunctionType type) {
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
};

} // namespace
