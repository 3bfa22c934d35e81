//===- BackwardSplit.h - Which backward ops are B and which W ---*- C++ -*-===//
//
// The one definition of the B/W split, used by the partition's pricing and by
// split-stages. Every backward op of the differentiated @main belongs to the
// virtual stage of the forward op it differentiates (`graph.grad_of`). Within
// its stage it is B (backward_input) when its result must leave the stage
// towards an earlier one, directly or through another B op of the stage;
// otherwise only weight gradients need it and it is W (backward_weight).
// The first stage therefore has an empty B unless a parameter gradient
// must go back to an earlier holder: nothing precedes it.
//
// The analysis works on positions in model order (the partition's nodes, or
// split-stages' virtual stages): it computes for each backward op the
// smallest position its result reaches, and the split is then one comparison
// (partition::isBackwardInput) against the first position of its stage.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_ANALYSIS_BACKWARDSPLIT_H
#define PIPECC_ANALYSIS_BACKWARDSPLIT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <limits>
#include <optional>

namespace pipecc {

class BackwardSplit {
public:
  /// No position reached: the op's result stays with weight gradients.
  static constexpr int kNowhere = std::numeric_limits<int>::max();

  /// `positionOf` gives forward ops (and parameters, for the gradient
  /// accumulations autodiff tags with the parameter) their position in
  /// model order; std::nullopt for ops that belong to no position (a
  /// parameter several stages hold, whose gradient each holder sums
  /// itself). A backward op takes its forward op's position.
  BackwardSplit(mlir::func::FuncOp main,
                llvm::function_ref<std::optional<int>(mlir::Operation *)>
                    positionOf);

  /// The position of a backward op, if its forward op has one.
  std::optional<int> positionOf(mlir::Operation *backwardOp) const;
  /// The smallest position `backwardOp`'s result reaches through the
  /// backward ops reading it (and, for a parameter gradient @main returns,
  /// the parameter's position, where it is accumulated); kNowhere if none.
  int reach(mlir::Operation *backwardOp) const;
  /// Whether `backwardOp` is B on a stage whose first position is
  /// `stageStart`.
  bool isBackwardInput(mlir::Operation *backwardOp, int stageStart) const;

  /// Bytes the W ops at positions [first, last] (one stage) read from the
  /// B ops of that stage or of later stages, per micro-batch: what the
  /// stage keeps from B until W runs. `stageStartOf` gives the first
  /// position of the stage holding a position.
  int64_t stashBytes(int first, int last,
                     llvm::function_ref<int(int)> stageStartOf) const;

private:
  mutable mlir::func::FuncOp main;
  llvm::DenseMap<mlir::Operation *, int> positions;
  llvm::DenseMap<mlir::Operation *, int> reaches;
};

} // namespace pipecc

#endif // PIPECC_ANALYSIS_BACKWARDSPLIT_H
