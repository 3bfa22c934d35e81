#ifndef PIPECC_PASSES_ATTRIBUTES_H
#define PIPECC_PASSES_ATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace pipecc::attrs {
// Discardable attributes through which the phases hand over what they
// decided. Each is written by one pass and read by later ones.

/// On @main's arguments and results: the ONNX input or output name.
inline constexpr llvm::StringLiteral kInput = "graph.input";
inline constexpr llvm::StringLiteral kOutput = "graph.output";
/// On @main's results after autodiff: the parameter a result is the
/// gradient of.
inline constexpr llvm::StringLiteral kGrad = "graph.grad";
/// On @main's result after autodiff (and on the stage function result it
/// becomes): the number of label positions a counted-mean loss counted in
/// the micro-batch; the loss result is then that micro-batch's sum.
inline constexpr llvm::StringLiteral kLossCount = "pipeline.loss_count";
/// On forward ops: their number in program order (autodiff).
inline constexpr llvm::StringLiteral kOpId = "graph.op_id";
/// On backward ops: the number of the forward op they differentiate.
inline constexpr llvm::StringLiteral kGradOf = "graph.grad_of";
/// On forward ops: the virtual stage that runs them (partition).
inline constexpr llvm::StringLiteral kStage = "pipeline.stage";
/// On the module: the partition's cuts, placement and predicted costs per
/// virtual stage (split-stages turns them into the typed
/// `pipeline.stage_table`, pipeline::kStageTableAttrName, which passes
/// after split-stages read through readStageTable, StageTable.h).
inline constexpr llvm::StringLiteral kPartition = "pipeline.partition";
/// On stage functions (split-stages): the virtual stage, and which of its
/// three functions this is: "forward", "backward_input" or
/// "backward_weight". The stage table says the same by symbol; these stay
/// until every reader uses readStageTable, then they retire.
inline constexpr llvm::StringLiteral kFunctionStage = "pipeline.stage";
inline constexpr llvm::StringLiteral kFunctionKind = "pipeline.kind";
/// On stage function arguments and results: the tensor's name.
inline constexpr llvm::StringLiteral kTensor = "pipeline.tensor";
/// On arguments: the graph input or parameter they bind to.
inline constexpr llvm::StringLiteral kBindInput = "pipeline.input";
inline constexpr llvm::StringLiteral kBindParam = "pipeline.param";
/// On results: the parameters of the function's stage whose gradient it is
/// (an array of names: y = a + b gives a and b one gradient); the loss.
inline constexpr llvm::StringLiteral kParamGrad = "pipeline.param_grad";
inline constexpr llvm::StringLiteral kLoss = "pipeline.loss";
/// On forward function results of an inference compile: the graph output
/// (ONNX output name) the result is.
inline constexpr llvm::StringLiteral kGraphOutput = "pipeline.output";
/// On forward and B functions: names received from and sent to neighbours.
inline constexpr llvm::StringLiteral kRecv = "pipeline.recv";
inline constexpr llvm::StringLiteral kSend = "pipeline.send";
/// On the module: parameters ({name, stage, type, trainable}) and data
/// inputs ({name, type}) of the split model.
inline constexpr llvm::StringLiteral kParameters = "pipeline.parameters";
inline constexpr llvm::StringLiteral kInputs = "pipeline.inputs";
} // namespace pipecc::attrs

namespace pipecc::attrs {
/// On pipeline.pipeline (pipecc-schedule): the scheduling library's
/// simulation of the programs, for the manifest. The step's makespan in
/// seconds (f64), the mean idle fraction over ranks (f64), each rank's busy
/// seconds (array<f64>) and, per stage, the most micro-batches whose
/// activations it holds at once, counted from F to the end of the backward
/// (W when split) (array<i64>).
inline constexpr llvm::StringLiteral kPredictedStep = "predicted_step_s";
inline constexpr llvm::StringLiteral kBubble = "bubble";
inline constexpr llvm::StringLiteral kRankBusy = "rank_busy_s";
inline constexpr llvm::StringLiteral kPeakLiveMicrobatches =
    "peak_live_microbatches";
} // namespace pipecc::attrs

namespace pipecc::attrs {
/// On a rank module (lower): the static memory plan of its buffer table,
/// {arena_bytes, buffers = [{name, slots, offset}, ...]} in table order
/// (compiler/include/pipecc/Compiler/MemoryPlanning.h writes and reads it).
inline constexpr llvm::StringLiteral kMemoryPlan = "pipeline.memory_plan";
} // namespace pipecc::attrs

#endif // PIPECC_PASSES_ATTRIBUTES_H
