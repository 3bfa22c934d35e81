//===- MatmulToCublas.cpp - linalg matmuls on memrefs to cuBLASLt calls ---===//
//
// The CUDA runtime's gemms (runtime/include/pipecc/Runtime/CUDA/Kernels.h):
//   void pipecc_rt_cuda_gemm(int32_t trans_a, int32_t trans_b, int64_t m,
//       int64_t n, int64_t k, float alpha, const void *a, int64_t lda,
//       const void *b, int64_t ldb, float beta, void *c, int64_t ldc,
//       int32_t ab_dtype, int32_t c_dtype, const void *bias,
//       int32_t epilogue);
//   void pipecc_rt_cuda_gemm_batched(... same, with stride_a after lda,
//       stride_b after ldb, stride_c and batch after ldc ...);
// Pointers are device pointers, passed as `!llvm.ptr`. Like MatmulToBlas it
// runs after deallocation has been inserted.
//
//===----------------------------------------------------------------------===//
#include "GemmOperands.h"
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Runtime/CUDA/Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

namespace pipecc {
#define GEN_PASS_DEF_MATMULTOCUBLAS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc::conversion;

namespace {

constexpr llvm::StringLiteral kGemm = "pipecc_rt_cuda_gemm";
constexpr llvm::StringLiteral kGemmBatched = "pipecc_rt_cuda_gemm_batched";

/// The runtime's dtype code of an f32 or bf16 element type.
std::optional<int32_t> dtypeCode(Type type) {
  if (type.isF32())
    return PIPECC_RT_CUDA_F32;
  if (type.isBF16())
    return PIPECC_RT_CUDA_BF16;
  return std::nullopt;
}

/// A and B of one element type (f32 or bf16), C f32 or, with bf16 inputs,
/// bf16; every operand row-major.
bool isCublasMatmul(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || !classifyGemm(op))
    return false;
  Type ab = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  Type c = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  if (!dtypeCode(ab) || !dtypeCode(c) || (ab.isF32() && !c.isF32()))
    return false;
  return isRowMajorOperand(op.getDpsInputOperand(0)->get(), ab) &&
         isRowMajorOperand(op.getDpsInputOperand(1)->get(), ab) &&
         isRowMajorOperand(op.getDpsInitOperand(0)->get(), c);
}

/// A bias epilogue (GemmOperands.h's matchBiasEpilogue) in cuBLASLt's
/// terms: C allocated here (before the CUDA workspace plan) and of D's
/// shape, no reshape between.
struct Epilogue {
  linalg::GenericOp generic;
  Value bias, output;
  int32_t flags;
};

std::optional<Epilogue> matchEpilogue(Operation *matmul, Value c) {
  std::optional<BiasEpilogue> match = matchBiasEpilogue(matmul, c);
  if (!match || match->expanded || !c.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  int32_t flags = PIPECC_RT_CUDA_EPILOGUE_BIAS;
  if (match->relu)
    flags |= PIPECC_RT_CUDA_EPILOGUE_RELU;
  return Epilogue{match->generic, match->bias, match->output, flags};
}

struct MatmulToCublasPass
    : pipecc::impl::MatmulToCublasBase<MatmulToCublasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (isCublasMatmul(op))
        matmuls.push_back(op);
    });
    if (matmuls.empty())
      return;

    MLIRContext *ctx = &getContext();
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    Type f32 = Float32Type::get(ctx), ptr = LLVM::LLVMPointerType::get(ctx);
    auto gemmType =
        FunctionType::get(ctx,
                          {i32, i32, i64, i64, i64, f32, ptr, i64, ptr, i64,
                           f32, ptr, i64, i32, i32, ptr, i32},
                          {});
    auto batchedType = FunctionType::get(
        ctx, {i32, i32, i64, i64, i64, f32, ptr, i64, i64, ptr, i64,
              i64, f32, ptr, i64, i64, i64, i32, i32, ptr, i32},
        {});
    bool anyBatched = llvm::any_of(
        matmuls, [](Operation *op) { return classifyGemm(op)->batched; });
    if (failed(declareRuntimeFunction(module, kGemm, gemmType)) ||
        (anyBatched &&
         failed(declareRuntimeFunction(module, kGemmBatched, batchedType))))
      return signalPassFailure();

    for (Operation *op : matmuls)
      rewrite(op);
  }

  void rewrite(Operation *op) {
    GemmShape shape = *classifyGemm(op);
    auto linalgOp = cast<linalg::LinalgOp>(op);
    Value a = linalgOp.getDpsInputOperand(0)->get();
    Value b = linalgOp.getDpsInputOperand(1)->get();
    Value c = linalgOp.getDpsInitOperand(0)->get();
    OpBuilder builder(op);
    Location loc = op->getLoc();
    Type f32 = builder.getF32Type();

    float beta = 1.0f;
    linalg::FillOp fill = findZeroFill(op, c);
    if (fill)
      beta = 0.0f;
    // An epilogue writes D instead of C, so C's old contents must not count.
    std::optional<Epilogue> epilogue;
    if (fill)
      epilogue = matchEpilogue(op, c);
    if (fill)
      fill.erase();

    Value out = epilogue ? epilogue->output : c;
    GemmOperand opA = unpackGemmOperand(builder, loc, a),
                opB = unpackGemmOperand(builder, loc, b),
                opC = unpackGemmOperand(builder, loc, out);
    Value bias;
    if (epilogue)
      bias = unpackGemmOperand(builder, loc, epilogue->bias).pointer;
    else
      bias = builder.create<LLVM::ZeroOp>(
          loc, LLVM::LLVMPointerType::get(builder.getContext()));
    size_t rank = opC.sizes.size();
    Value m = opC.sizes[rank - 2], n = opC.sizes[rank - 1];
    Value k = opA.sizes[shape.transposeA ? rank - 2 : rank - 1];
    auto i32 = [&](int64_t value) -> Value {
      return builder.create<arith::ConstantIntOp>(loc, value, 32);
    };
    Value transA = i32(shape.transposeA), transB = i32(shape.transposeB);
    Value alpha = builder.create<arith::ConstantFloatOp>(loc, APFloat(1.0f),
                                                         cast<FloatType>(f32));
    Value betaValue = builder.create<arith::ConstantFloatOp>(
        loc, APFloat(beta), cast<FloatType>(f32));
    Value abType = i32(*dtypeCode(getElementTypeOrSelf(a.getType())));
    Value cType = i32(*dtypeCode(getElementTypeOrSelf(c.getType())));
    Value flags =
        i32(epilogue ? epilogue->flags : int32_t(PIPECC_RT_CUDA_EPILOGUE_NONE));
    Value lda = leadingDimension(builder, loc, opA);
    Value ldb = leadingDimension(builder, loc, opB);
    Value ldc = leadingDimension(builder, loc, opC);
    if (shape.batched)
      builder.create<func::CallOp>(loc, kGemmBatched, TypeRange{},
                                   ValueRange{transA,
                                              transB,
                                              m,
                                              n,
                                              k,
                                              alpha,
                                              opA.pointer,
                                              lda,
                                              opA.strides[0],
                                              opB.pointer,
                                              ldb,
                                              opB.strides[0],
                                              betaValue,
                                              opC.pointer,
                                              ldc,
                                              opC.strides[0],
                                              opC.sizes[0],
                                              abType,
                                              cType,
                                              bias,
                                              flags});
    else
      builder.create<func::CallOp>(loc, kGemm, TypeRange{},
                                   ValueRange{transA, transB, m, n, k, alpha,
                                              opA.pointer, lda, opB.pointer,
                                              ldb, betaValue, opC.pointer, ldc,
                                              abType, cType, bias, flags});
    op->erase();
    ++numGemmCalls;
    if (!epilogue)
      return;
    // C is now unused but for its allocation and deallocation.
    epilogue->generic.erase();
    Operation *alloc = c.getDefiningOp();
    for (Operation *user : llvm::make_early_inc_range(c.getUsers()))
      user->erase();
    alloc->erase();
    ++numEpilogues;
  }
};

} // namespace
