#ifndef PIPECC_COMPILER_DRIVER_H
#define PIPECC_COMPILER_DRIVER_H

#include "pipecc/Compiler/Phases.h"
#include "pipecc/Frontend/ONNX/Importer.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace pipecc {

/// Everything one `pipecc` invocation was asked to do.
struct DriverOptions {
  std::string inputPath;
  /// Output folder; empty when only printing.
  std::string outputDir;
  /// Replace an output folder holding files pipecc did not write.
  bool force = false;
  /// Stop after this phase (default: the last implemented one).
  std::optional<Phase> compileTo;
  /// Print the IR after this phase to `out`.
  std::optional<Phase> emit;
  /// Write the schedule's predicted timeline: trace JSON to `out`, or
  /// timeline.json and timeline.svg in the output folder.
  bool emitTimeline = false;
  /// Print a summary of the imported model to `out`.
  bool printSummary = false;
  /// Print every rank's static memory plan to `out` after the schedule
  /// phase, assuming this precision ("fp32" or "bf16").
  std::optional<std::string> memoryPlan;
  /// Elide constants with more elements than this when printing IR.
  int64_t elideElementsLimit = 16;
  frontend::ImportOptions import;
  /// Compile forward only (no autodiff), one stage and one micro-batch;
  /// every graph output becomes an output of the rank program.
  bool inference = false;

  // Training (autodiff): attach a loss to a model that outputs predictions.
  std::string loss;       // "", "cross-entropy" or "mse"
  std::string labelInput = "labels";
  /// The output to differentiate when the model has several scalar ones.
  std::string lossOutput;
  // Partition.
  int64_t stages = 1;
  std::string partition = "dp";
  std::vector<std::string> cutAfter;
  std::string device = "host-cpu";
  // Schedule.
  int64_t microbatches = 1;
  /// Virtual stages per rank (--chunks v): the partition cuts stages x v
  /// virtual stages, placed as the schedule needs.
  int64_t chunks = 1;
  std::string schedule = "1f1b";
  /// W of this many consecutive micro-batches per call
  /// (--weight-gradient-group; pipecc-group-weight-gradients).
  int64_t weightGradientGroup = 1;
  /// B and W as two calls per micro-batch (--split-backward): "auto" (as
  /// the schedule needs, or where the simulated step is shorter), "true"
  /// or "false".
  std::string splitBackward = "auto";
  // Lower and codegen.
  /// The target of the rank executables (--target): cpu or cuda.
  std::string target = "cpu";
  /// The GPU architecture of --target cuda (--gpu-arch).
  std::string gpuArch = "sm_90";
  /// "fp32" or "bf16": the stage functions' arithmetic
  /// (pipecc-lower-precision after the partition phase).
  std::string precision = "fp32";
  double learningRate = 0.1;
  /// LLVM optimisation level of the rank executables, 0 to 3.
  unsigned optLevel = 3;
  /// --target-cpu: the CPU model of the rank code (native, generic or an
  /// LLVM CPU name); empty: the target's default (TargetBackend::
  /// getDefaultTargetCPU: native on the CPU, generic on CUDA).
  std::string targetCPU;
};

/// Runs the compiler. Diagnostics go to the context's handler (stderr by
/// default); `out` (a file, so that failed writes to it are seen) receives
/// printed IR and summaries. Returns 0 on success, 1 on any error. An output
/// folder is written only when every phase succeeded: it is built in a
/// temporary sibling folder and renamed.
int runDriver(const DriverOptions &options, llvm::raw_fd_ostream &out);

} // namespace pipecc

#endif // PIPECC_COMPILER_DRIVER_H
