//===- TargetBackend.h - A target of the lower and codegen phases ---------===//
//
// Everything that differs between the CPU and the CUDA rank executables sits
// behind this interface (the shape of IREE's HAL TargetBackend): the
// dialects a target's pipelines create, the pipeline lowering the stage
// functions, the pipeline lowering the host program, and how a lowered rank
// module becomes an object file and an executable. The phases above (graph
// to schedule) are shared by every target.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_COMPILER_TARGETBACKEND_H
#define PIPECC_COMPILER_TARGETBACKEND_H

#include "pipecc/Compiler/TargetCPU.h"
#include "pipecc/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace pipecc::target {

/// What the command line chose for the target.
struct TargetOptions {
  /// --target: a name lookupTarget knows.
  std::string name = "cpu";
  /// --gpu-arch (CUDA): the SM architecture kernels are compiled for.
  std::string gpuArch = "sm_90";
  /// -O: LLVM optimisation level of the host code, 0 to 3.
  unsigned optLevel = 3;
  /// --target-cpu, resolved: the CPU model of the host code.
  codegen::TargetCPU cpu;
  /// --device and the pipeline's ranks: a measured profile's paths for
  /// plain products (CPU; pipecc-matmul-to-blas). Built-in profiles time
  /// no paths and change nothing.
  std::string device;
  int64_t ranks = 1;
};

/// Host-program settings, i.e. the options of pipecc-lower-rank-program.
using HostProgramOptions = LowerRankProgramOptions;

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// The --target name, also written into each rank's program constant.
  virtual llvm::StringRef getName() const = 0;

  /// Checks the options that concern this target; on failure returns a
  /// one-line message naming the option.
  virtual std::optional<std::string>
  verifyOptions(const TargetOptions &options) const {
    return std::nullopt;
  }

  /// The --target-cpu a compile without one gets: the host code's CPU
  /// model. "native" where the host code computes (its vector loops).
  virtual llvm::StringRef getDefaultTargetCPU() const { return "native"; }

  /// Registers the dialects and external models (bufferization, LLVM IR
  /// translation) the target's pipelines and serialization create, like
  /// mlir::Pass::getDependentDialects.
  virtual void getDependentDialects(mlir::DialectRegistry &registry) const = 0;

  /// Lowers the stage functions of a rank module (graph-dialect func.funcs)
  /// to `llvm.func`s taking bare pointers in the target's memory: inputs,
  /// then one output buffer per result.
  virtual void buildStageLoweringPipeline(mlir::OpPassManager &pm,
                                          const TargetOptions &options) const = 0;

  /// Lowers the host program (the rank's pipeline.program) into
  /// pipecc_step, the buffer table, the program constant and main, calling
  /// the runtime's C API. The default adds pipecc-lower-rank-program naming
  /// this target; every target-dependent access (the loss, a device
  /// pointer) is a runtime call, so a target adds passes only for calls of
  /// its own.
  virtual void buildHostLoweringPipeline(mlir::OpPassManager &pm,
                                         HostProgramOptions options) const;

  /// Translates a lowered rank module (LLVM dialect, plus whatever the
  /// target's pipeline leaves, e.g. gpu.binary) into a host object file.
  virtual mlir::LogicalResult
  serializeObject(mlir::ModuleOp rankModule, llvm::StringRef objectPath,
                  const TargetOptions &options) const = 0;

  /// Links objects with the target's runtime into a rank executable. On
  /// failure returns false with a one-line message in `error`.
  virtual bool linkExecutable(llvm::ArrayRef<std::string> objects,
                              llvm::StringRef executablePath,
                              std::string &error) const = 0;
};

/// The target called `name`, or null.
const TargetBackend *lookupTarget(llvm::StringRef name);
/// Every target's name, in the order `--help` lists them.
llvm::ArrayRef<llvm::StringRef> targetNames();
/// "cpu, cuda": for messages.
std::string targetNameList();
/// Every target's dependent dialects (the driver's context holds them all,
/// so that --emit and pipecc-opt print any target's IR).
void registerAllTargetDialects(mlir::DialectRegistry &registry);

/// Checks a --gpu-arch value: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90 or
/// sm_90a. Returns a one-line message when it is none of them.
std::optional<std::string> checkGpuArch(llvm::StringRef arch);

} // namespace pipecc::target

#endif // PIPECC_COMPILER_TARGETBACKEND_H
