//===- GraphToLinalg.h - Shared pieces of the graph-to-linalg lowering ----===//
//
// Each op family has its own file with a populate function; the helpers
// here build the recurring linalg shapes (broadcasting maps, filled inits,
// reductions, reshapes between static shapes).
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_LIB_CONVERSION_GRAPHTOLINALG_GRAPHTOLINALG_H
#define PIPECC_LIB_CONVERSION_GRAPHTOLINALG_GRAPHTOLINALG_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace pipecc::conversion {

void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
void populateShapePatterns(mlir::RewritePatternSet &patterns);
void populateContractionPatterns(mlir::RewritePatternSet &patterns);
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
void populateLossPatterns(mlir::RewritePatternSet &patterns);
void populateIndexingPatterns(mlir::RewritePatternSet &patterns);
void populateConvolutionPatterns(mlir::RewritePatternSet &patterns);
void populateNormalizationPatterns(mlir::RewritePatternSet &patterns);
void populateLogLikelihoodPatterns(mlir::RewritePatternSet &patterns);
void populateGatherNDPatterns(mlir::RewritePatternSet &patterns);
void populateStaticShapePatterns(mlir::RewritePatternSet &patterns);

/// A parallel generic over `type` whose body yields `body(indices)` for
/// the loop indices; the result is a fresh contiguous tensor.
mlir::Value buildIndexed(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::ValueRange)>
        body);

/// The map reading a value of `type` inside an iteration space of rank
/// `loopRank` whose trailing dimensions have `loopShape`, with numpy
/// broadcasting: trailing dimensions align, size-1 dimensions that the
/// loop stretches read index 0.
mlir::AffineMap getBroadcastMap(mlir::RankedTensorType type,
                                llvm::ArrayRef<int64_t> loopShape,
                                mlir::MLIRContext *ctx);

/// `(d0, ..., dn) -> (the dims not in axes)`.
mlir::AffineMap getDropDimsMap(unsigned rank, llvm::ArrayRef<int64_t> axes,
                               mlir::MLIRContext *ctx);
/// `type` without the dimensions in `axes`.
mlir::RankedTensorType dropDims(mlir::RankedTensorType type,
                                llvm::ArrayRef<int64_t> axes);
/// Parallel iterators, except reduction on `axes`.
llvm::SmallVector<mlir::utils::IteratorType>
getIterators(unsigned rank, llvm::ArrayRef<int64_t> axes = {});

/// `label != ignore_index` (an i1), or true without an ignore_index.
mlir::Value isCounted(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value label, std::optional<int64_t> ignoreIndex);
/// `value` where `cond` holds, else a zero of its type.
mlir::Value selectFloat(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value cond, mlir::Value value);
/// The number of label positions that are not `ignoreIndex`, as a rank-0
/// tensor of `elementType`.
mlir::Value buildLabelCount(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value labels,
                            std::optional<int64_t> ignoreIndex,
                            mlir::Type elementType);

/// The index `raw` (i32 or i64) as an `index` in [0, size): negative
/// values count from the end, the rest is clamped (Gather, GatherND).
mlir::Value normalizeIndex(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value raw, int64_t size);
mlir::Value createFloat(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Type type, double value);
mlir::Value createNegInf(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Type type);
/// `linalg.fill` of `value` into a new `tensor.empty` of `type`.
mlir::Value createFilled(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value value);

enum class ReduceKind { Sum, Max };
/// Reduces `input` along `axes`; the result has those dims removed. The
/// init is 0 (sum) or -inf (max).
mlir::Value buildReduction(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value input, llvm::ArrayRef<int64_t> axes,
                           ReduceKind kind);

/// Reshapes a static tensor to `type` (same element count) with
/// tensor.collapse_shape / tensor.expand_shape.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value value, mlir::RankedTensorType type);

/// Fused row kernels (softmax, cross-entropy, scatter-add) are nests of
/// `scf.for` over static sizes that carry scalars and tensors; their bodies
/// read with tensor.extract and write with tensor.insert, which one-shot
/// bufferization turns into loads and stores in place.
using LoopBodyFn = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange ivs,
    mlir::ValueRange carried)>;
/// One `scf.for` per size (the first outermost) carrying `carried`; with
/// no sizes, `body` runs once in place. Returns the carried values after.
llvm::SmallVector<mlir::Value> buildLoopNest(mlir::OpBuilder &b,
                                             mlir::Location loc,
                                             llvm::ArrayRef<int64_t> sizes,
                                             mlir::ValueRange carried,
                                             LoopBodyFn body);

} // namespace pipecc::conversion

#endif // PIPECC_LIB_CONVERSION_GRAPHTOLINALG_GRAPHTOLINALG_H
