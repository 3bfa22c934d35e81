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
// matches the C prototype exactly. A 2-D matmul whose B is a parameter of
// the stage function calls
//   void pipecc_rt_sgemm_weight(...same arguments as pipecc_rt_sgemm...);
// instead: B is then fixed for the whole step, so the runtime packs it for
// its kernel once per step rather than once per micro-batch's call
// (docs/design.md, "Packed weights").
//
// With a measured device profile that timed the BLAS and the engine apart,
// a plain 2-D product runs on the faster path: pipecc_rt_sgemm_epilogue
// with PIPECC_RT_GEMM_ON_BLAS or _ON_ENGINE (bias null unless it has one).
// The choice is the cost model's (GemmRateTable::plainChoice), so the
// prediction prices the path the rank runs.
//
// This runs after buffer deallocation has been inserted: the pointers are
// taken from the memrefs right before the call, and a dealloc placed after
// the matmul's last use stays after the call.
//
//===----------------------------------------------------------------------===//
#include "GemmOperands.h"
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Conversion/StageAbi.h"
#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Passes/Attributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace pipecc {
#define GEN_PASS_DEF_MATMULTOBLAS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc::conversion;

namespace {

constexpr llvm::StringLiteral kSgemm = "pipecc_rt_sgemm";
constexpr llvm::StringLiteral kSgemmBatched = "pipecc_rt_sgemm_batched";
constexpr llvm::StringLiteral kSgemmWeight = "pipecc_rt_sgemm_weight";
constexpr llvm::StringLiteral kSgemmEpilogue = "pipecc_rt_sgemm_epilogue";
// pipecc_rt_sgemm_epilogue's flags (Runtime.h).
constexpr int32_t kGemmRelu = 1, kGemmWeightB = 2, kGemmOnBlas = 4,
                  kGemmOnEngine = 8;

/// The runtime flag of the path `gemms` chooses for a plain 2-D product
/// (a, c its operand and output memrefs), 0 where the runtime's rule
/// decides: no profile paths, or a dynamic shape.
int32_t chosenPathFlag(const pipecc::cost::GemmRateTable *gemms, Value a,
                       Value c, bool transposeA, bool transposeB,
                       bool accumulate) {
  if (!gemms)
    return 0;
  auto typeA = cast<MemRefType>(a.getType());
  auto typeC = cast<MemRefType>(c.getType());
  if (!typeA.hasStaticShape() || !typeC.hasStaticShape() ||
      typeA.getRank() != 2 || typeC.getRank() != 2)
    return 0;
  int64_t m = typeC.getDimSize(0), n = typeC.getDimSize(1);
  int64_t k = typeA.getDimSize(transposeA ? 0 : 1);
  switch (gemms->plainChoice(m, n, k, transposeA, transposeB, accumulate)
              .path) {
  case pipecc::cost::PlainGemmPath::Blas:
    return kGemmOnBlas;
  case pipecc::cost::PlainGemmPath::Engine:
    return kGemmOnEngine;
  case pipecc::cost::PlainGemmPath::Rule:
    return 0;
  }
  return 0;
}

/// Whether `value` is an argument of its stage function that binds a
/// parameter (pipecc-record-stage-abi's bindings): the stage only reads it,
/// and the runtime writes parameters only between steps.
bool isStageParameter(Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return false;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getBody().front())
    return false;
  auto abi = func->getAttrOfType<DictionaryAttr>(pipecc::attrs::kStageAbi);
  auto args = abi ? abi.getAs<ArrayAttr>(pipecc::attrs::kAbiArgs) : ArrayAttr();
  if (!args || arg.getArgNumber() >= args.size())
    return false;
  auto binding = dyn_cast<DictionaryAttr>(args[arg.getArgNumber()]);
  return binding && binding.get(pipecc::attrs::kBindParam);
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

/// Whether an op between `from` and `to` deallocates one of `buffers`.
bool deallocatedBefore(Operation *from, Operation *to,
                       ArrayRef<Value> buffers) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode())
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
      if (llvm::is_contained(buffers, dealloc.getMemref()))
        return true;
  return false;
}

struct MatmulToBlasPass : pipecc::impl::MatmulToBlasBase<MatmulToBlasPass> {
  using MatmulToBlasBase::MatmulToBlasBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The rates that choose plain products' paths (plainChoice leaves a
    // product to the runtime's rule where the profile timed no paths).
    const pipecc::cost::GemmRateTable *gemms = nullptr;
    if (!device.empty()) {
      std::string error;
      const pipecc::cost::DeviceProfile *profile =
          pipecc::cost::loadDeviceProfile(device, error);
      if (!profile) {
        module.emitError() << error;
        return signalPassFailure();
      }
      gemms = &profile->gemmFor(ranks);
    }
    SmallVector<Operation *> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics() || !classifyGemm(op))
        return;
      auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
      Type f32 = Float32Type::get(&getContext());
      bool inputsOk =
          llvm::all_of(linalgOp.getDpsInputs(), [&](Value input) {
            return isRowMajorOperand(input, f32) || isExtendableOperand(input);
          });
      if (inputsOk && isRowMajorOperand(linalgOp.getDpsInits()[0], f32))
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
    auto epilogueType = FunctionType::get(
        ctx,
        {i32, i32, i64, i64, i64, f32, ptr, i64, ptr, i64, f32, ptr, i64, ptr,
         i32},
        {});
    auto batchedType = FunctionType::get(
        ctx,
        {i32, i32, i64, i64, i64, f32, ptr, i64, i64, ptr, i64, i64, f32, ptr,
         i64, i64, i64},
        {});
    bool anyBatched = llvm::any_of(
        matmuls, [](Operation *op) { return classifyGemm(op)->batched; });
    bool anyWeight = llvm::any_of(matmuls, [](Operation *op) {
      return !classifyGemm(op)->batched &&
             isStageParameter(
                 cast<linalg::LinalgOp>(op).getDpsInputOperand(1)->get());
    });
    if (failed(declareRuntimeFunction(module, kSgemm, sgemmType)) ||
        (anyWeight &&
         failed(declareRuntimeFunction(module, kSgemmWeight, sgemmType))) ||
        (anyBatched &&
         failed(declareRuntimeFunction(module, kSgemmBatched, batchedType))))
      return signalPassFailure();

    bool declaredEpilogue = false;
    for (Operation *op : matmuls) {
      GemmShape shape = *classifyGemm(op);
      auto linalgOp = cast<linalg::LinalgOp>(op);
      Value a = linalgOp.getDpsInputOperand(0)->get();
      Value b = linalgOp.getDpsInputOperand(1)->get();
      Value c = linalgOp.getDpsInitOperand(0)->get();
      bool weightB = !shape.batched && isStageParameter(b);
      OpBuilder builder(op);
      Location loc = op->getLoc();

      float beta = 1.0f;
      linalg::FillOp fill = findZeroFill(op, c);
      // A bias (and ReLU) after the product goes into its last store: the
      // product writes D instead of C (so C's old contents must not count:
      // beta = 0), unless D may share bytes with an operand (the workspace
      // plan lets a buffer born after the product take an operand's bytes).
      std::optional<BiasEpilogue> epilogue;
      if (fill && !shape.batched && !isExtendableOperand(a) &&
          !isExtendableOperand(b))
        epilogue = matchBiasEpilogue(op, c);
      if (epilogue && (mayOverlap(epilogue->output, a) ||
                       mayOverlap(epilogue->output, b) ||
                       mayOverlap(epilogue->bias, epilogue->output) ||
                       deallocatedBefore(op, epilogue->generic, {a, b})))
        epilogue.reset();
      if (fill) {
        fill.erase();
        beta = 0.0f;
        ++numZeroFillsFolded;
      }
      int32_t pathFlag =
          shape.batched || weightB
              ? 0
              : chosenPathFlag(gemms, a, c,
                               shape.transposeA, shape.transposeB, beta != 0);
      if ((epilogue || pathFlag) && !declaredEpilogue) {
        if (failed(declareRuntimeFunction(module, kSgemmEpilogue,
                                          epilogueType)))
          return signalPassFailure();
        declaredEpilogue = true;
      }

      if (isExtendableOperand(a))
        a = extendToF32(builder, loc, a, op);
      if (isExtendableOperand(b))
        b = extendToF32(builder, loc, b, op);
      // With an epilogue C is D, seen as the product's 2-D matrix, and the
      // call takes the generic's place (D may be a view made after the
      // matmul; only ops that touch no memory lie between).
      Value out = c;
      if (epilogue) {
        builder.setInsertionPoint(epilogue->generic);
        out = epilogue->output;
        if (epilogue->expanded)
          out = builder.create<memref::CollapseShapeOp>(
              loc, out, epilogue->expanded.getReassociationIndices());
      }
      GemmOperand opA = unpackGemmOperand(builder, loc, a),
                  opB = unpackGemmOperand(builder, loc, b),
                  opC = unpackGemmOperand(builder, loc, out);
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
      if (shape.batched) {
        builder.create<func::CallOp>(
            loc, kSgemmBatched, TypeRange{},
            ValueRange{transA, transB, m, n, k, alpha, opA.pointer, lda,
                       opA.strides[0], opB.pointer, ldb, opB.strides[0],
                       betaValue, opC.pointer, ldc, opC.strides[0],
                       opC.sizes[0]});
      } else if (epilogue || pathFlag) {
        Value bias =
            epilogue ? unpackGemmOperand(builder, loc, epilogue->bias).pointer
                     : builder.create<LLVM::ZeroOp>(loc, ptr).getResult();
        Value flags = builder.create<arith::ConstantIntOp>(
            loc,
            (epilogue && epilogue->relu ? kGemmRelu : 0) |
                (weightB ? kGemmWeightB : 0) | pathFlag,
            32);
        if (pathFlag == kGemmOnBlas)
          ++numOnBlas;
        if (pathFlag == kGemmOnEngine)
          ++numOnEngine;
        builder.create<func::CallOp>(
            loc, kSgemmEpilogue, TypeRange{},
            ValueRange{transA, transB, m, n, k, alpha, opA.pointer, lda,
                       opB.pointer, ldb, betaValue, opC.pointer, ldc, bias,
                       flags});
      } else {
        builder.create<func::CallOp>(
            loc, weightB ? kSgemmWeight : kSgemm, TypeRange{},
            ValueRange{transA, transB, m, n, k, alpha, opA.pointer, lda,
                       opB.pointer, ldb, betaValue, opC.pointer, ldc});
      }
      op->erase();
      ++numGemmCalls;
      if (weightB)
        ++numWeightGemmCalls;
      if (!epilogue)
        continue;
      // C is now unused but for its allocation (or workspace view), the
      // reshape and the deallocation.
      epilogue->generic.erase();
      if (epilogue->expanded)
        epilogue->expanded.erase();
      Operation *temporary = c.getDefiningOp();
      for (Operation *user : llvm::make_early_inc_range(c.getUsers()))
        user->erase();
      if (temporary->use_empty())
        temporary->erase();
      ++numEpilogues;
    }
  }
};

} // namespace
