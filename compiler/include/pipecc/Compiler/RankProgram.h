#ifndef PIPECC_COMPILER_RANKPROGRAM_H
#define PIPECC_COMPILER_RANKPROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace pipecc::pipeline {
class ProgramOp;
}

namespace pipecc::codegen {

/// Mirrors pipecc_rt_buffer_role and pipecc_rt_dtype (runtime/Runtime.h).
enum class BufferRole : int32_t {
  Parameter = 0,
  Gradient = 1,
  DataInput = 2,
  Activation = 3,
  Scratch = 4,
  Output = 5
};
enum class BufferDType : int32_t {
  F32 = 0,
  I64 = 1,
  I32 = 2,
  BF16 = 5,
  Bool = 9
};

/// One entry of a rank's buffer table (pipecc_rt_buffer_desc).
struct Buffer {
  std::string name;
  BufferRole role;
  BufferDType dtype;
  bool perMicrobatch = false;
  llvm::SmallVector<int64_t> shape;
  int64_t bytes = 0;
  int64_t parameterId = -1;
  int64_t numClasses = 0;
};

/// Settings baked into every rank executable.
struct RankSettings {
  int32_t numRanks = 1;
  int32_t microbatches = 1;
  int64_t microbatchSize = 0;
  double learningRate = 0.1;
  /// LLVM optimisation level (0 to 3) the rank executables are built with.
  unsigned optLevel = 3;
  /// A forward-only program (--inference): no loss, no optimizer; the
  /// runtime writes the graph outputs.
  bool inference = false;
  /// The loss is a mean over counted labels: every rank scales its gradients
  /// by 1 / the step's label count instead of 1 / microbatches.
  bool countedMeanLoss = false;
  /// --precision: "fp32" or "bf16" (recorded in the manifest).
  std::string precision = "fp32";
};

/// Appends to `rankModule` (whose stage functions of the rank's stage are
/// already lowered to the LLVM dialect with bare-pointer memref arguments,
/// inputs first, then one output buffer per original result) the host code
/// of one rank: the `pipecc_step` function executing `program`'s actions
/// through the runtime's C API, the rank's buffer table and
/// pipecc_rt_rank_program constant, and `main`. `stageFunctions` holds the
/// stage functions as they were before lowering (their argument and result
/// attributes name the tensors). `messageTags` numbers every message tensor
/// name of the pipeline identically on all ranks.
mlir::LogicalResult
buildRankHost(mlir::ModuleOp rankModule, pipeline::ProgramOp program,
              llvm::ArrayRef<mlir::Operation *> stageFunctions,
              mlir::ArrayAttr parameters, const RankSettings &settings,
              const llvm::StringMap<int32_t> &messageTags);

} // namespace pipecc::codegen

#endif // PIPECC_COMPILER_RANKPROGRAM_H
