//===- CPUTarget.cpp - Rank executables for the host CPU ------------------===//
//
// Stage functions become loops and OpenBLAS calls on host memory
// (buildCPULoweringPipeline); the rank module becomes one host object,
// linked with the CPU runtime (MPI and BLAS).
//
//===----------------------------------------------------------------------===//
#include "pipecc/Compiler/ObjectEmitter.h"
#include "pipecc/Compiler/TargetBackend.h"
#include "pipecc/Conversion/Pipelines.h"

#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;
using namespace pipecc;
using namespace pipecc::target;

namespace {
class CPUTarget final : public TargetBackend {
public:
  StringRef getName() const override { return "cpu"; }

  void getDependentDialects(DialectRegistry &registry) const override {
    registerCPULoweringDialects(registry);
  }

  void buildStageLoweringPipeline(OpPassManager &pm,
                                  const TargetOptions &options) const override {
    CPULoweringOptions lowering;
    lowering.device = options.device;
    lowering.ranks = options.ranks;
    buildCPULoweringPipeline(pm, lowering);
  }

  LogicalResult serializeObject(ModuleOp rankModule, StringRef objectPath,
                                const TargetOptions &options) const override {
    return codegen::emitObjectFile(rankModule, objectPath, options.optLevel,
                                   options.cpu, DialectRegistry());
  }

  bool linkExecutable(ArrayRef<std::string> objects, StringRef executablePath,
                      std::string &error) const override {
    // The CPU runtime's own response file, else the single runtime's of
    // builds from before the runtime was split.
    const char *linkEnv = std::getenv("PIPECC_RUNTIME_LINK_FILE");
    std::string linkFile;
    if (linkEnv && *linkEnv) {
      linkFile = linkEnv;
    } else {
      linkFile = codegen::runtimeLinkFile("pipecc_runtime_cpu_link.rsp");
      if (!llvm::sys::fs::exists(linkFile))
        linkFile = codegen::runtimeLinkFile("pipecc_runtime_link.rsp");
    }
    if (!llvm::sys::fs::exists(linkFile)) {
      error = "cannot find the runtime's link file '" + linkFile +
              "' (build the pipecc_runtime target, or set "
              "PIPECC_RUNTIME_LINK_FILE)";
      return false;
    }
    return codegen::linkRankExecutable(objects, executablePath, linkFile, {},
                                       error);
  }
};
} // namespace

namespace pipecc::target {
const TargetBackend &getCPUTarget() {
  static const CPUTarget target;
  return target;
}
} // namespace pipecc::target
