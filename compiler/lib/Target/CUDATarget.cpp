//===- CUDATarget.cpp - Rank executables for NVIDIA GPUs ------------------===//
//
// Stage functions become kernels in a fatbin for --gpu-arch plus host code
// launching them and calling cuBLASLt (buildCUDALoweringPipeline); the
// rank module becomes one host object holding the fatbin of its gpu.binary
// ops, linked with the CUDA runtime (CUDA driver, cuBLASLt, NCCL).
//
//===----------------------------------------------------------------------===//
#include "pipecc/Compiler/ObjectEmitter.h"
#include "pipecc/Compiler/TargetBackend.h"
#include "pipecc/Conversion/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;
using namespace pipecc;
using namespace pipecc::target;

namespace {
/// The CUDA toolkit the executables link against (its driver stub, for
/// build machines without a GPU driver).
constexpr llvm::StringLiteral kToolkit = "/usr/local/cuda";

class CUDATarget final : public TargetBackend {
public:
  StringRef getName() const override { return "cuda"; }

  /// The host code only launches kernels and moves messages, so this
  /// machine's vector ISA buys nothing, and the GPU nodes' CPUs are often
  /// other models: ranks built for this one's features would refuse to
  /// start there.
  StringRef getDefaultTargetCPU() const override { return "generic"; }

  std::optional<std::string>
  verifyOptions(const TargetOptions &options) const override {
    return checkGpuArch(options.gpuArch);
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
    registerCUDALoweringDialects(registry);
    registerTranslations(registry);
  }

  void buildStageLoweringPipeline(OpPassManager &pm,
                                  const TargetOptions &options) const override {
    CUDALoweringOptions cuda;
    cuda.chip = options.gpuArch;
    cuda.toolkit = kToolkit.str();
    buildCUDALoweringPipeline(pm, cuda);
  }

  LogicalResult serializeObject(ModuleOp rankModule, StringRef objectPath,
                                const TargetOptions &options) const override {
    // gpu.binary becomes a global holding the fatbin, and each
    // gpu.launch_func its load and launch through the mgpu* host ABI
    // (SelectObjectAttr's offloading translation).
    DialectRegistry translations;
    registerTranslations(translations);
    return codegen::emitObjectFile(rankModule, objectPath, options.optLevel,
                                   options.cpu, translations,
                                   placeFatbinaries);
  }

  bool linkExecutable(ArrayRef<std::string> objects, StringRef executablePath,
                      std::string &error) const override {
    const char *linkEnv = std::getenv("PIPECC_RUNTIME_CUDA_LINK_FILE");
    std::string linkFile =
        linkEnv && *linkEnv
            ? std::string(linkEnv)
            : codegen::runtimeLinkFile("pipecc_runtime_cuda_link.rsp");
    if (!llvm::sys::fs::exists(linkFile)) {
      error = "cannot find the CUDA runtime's link file '" + linkFile +
              "': this build has no CUDA runtime (pipecc_runtime_cuda); "
              "configure it where the CUDA toolkit and NCCL are installed, "
              "or set PIPECC_RUNTIME_CUDA_LINK_FILE";
      return false;
    }
    // No -lcuda: the runtime reaches the driver API through cudart
    // (cudaGetDriverEntryPointByVersion), so that a rank on a machine
    // without a driver starts and says so instead of failing to load.
    std::string lib64 = (kToolkit + "/lib64").str();
    return codegen::linkRankExecutable(objects, executablePath, linkFile,
                                       {"-Wl,-rpath," + lib64}, error);
  }

private:
  /// The fatbin globals of the gpu.binary ops go into `.nv_fatbin`, where
  /// nvcc puts its own: cuobjdump and the CUDA tools find device code there
  /// only (the driver loads it from the pointer either way).
  static void placeFatbinaries(llvm::Module &module) {
    for (llvm::GlobalVariable &global : module.globals())
      if (global.getName().ends_with("_bin_cst")) {
        global.setSection(".nv_fatbin");
        global.setAlignment(llvm::Align(8));
      }
  }

  static void registerTranslations(DialectRegistry &registry) {
    registerGPUDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
    gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  }
};
} // namespace

namespace pipecc::target {
const TargetBackend &getCUDATarget() {
  static const CUDATarget target;
  return target;
}
} // namespace pipecc::target
