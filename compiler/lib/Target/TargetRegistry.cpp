//===- TargetRegistry.cpp - The targets pipecc compiles for ---------------===//
#include "pipecc/Compiler/TargetBackend.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace pipecc;
using namespace pipecc::target;

namespace pipecc::target {
// One definition per implementation file.
const TargetBackend &getCPUTarget();
const TargetBackend &getCUDATarget();
} // namespace pipecc::target

TargetBackend::~TargetBackend() = default;

void TargetBackend::buildHostLoweringPipeline(
    OpPassManager &pm, HostProgramOptions options) const {
  options.target = getName().str();
  pm.addPass(createLowerRankProgram(options));
}

static ArrayRef<const TargetBackend *> allTargets() {
  static const TargetBackend *const targets[] = {&getCPUTarget(),
                                                 &getCUDATarget()};
  return targets;
}

const TargetBackend *target::lookupTarget(StringRef name) {
  for (const TargetBackend *candidate : allTargets())
    if (candidate->getName() == name)
      return candidate;
  return nullptr;
}

ArrayRef<StringRef> target::targetNames() {
  static const SmallVector<StringRef> names = [] {
    SmallVector<StringRef> list;
    for (const TargetBackend *candidate : allTargets())
      list.push_back(candidate->getName());
    return list;
  }();
  return names;
}

std::string target::targetNameList() {
  return llvm::join(targetNames(), ", ");
}

void target::registerAllTargetDialects(DialectRegistry &registry) {
  for (const TargetBackend *candidate : allTargets())
    candidate->getDependentDialects(registry);
}

std::optional<std::string> target::checkGpuArch(StringRef arch) {
  // The architectures CUDA 12/13, NCCL and cuBLASLt build for that the
  // kernels (bf16, async copies) can use: Turing to Hopper.
  static constexpr StringRef kArchitectures[] = {
      "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"};
  if (llvm::is_contained(kArchitectures, arch))
    return std::nullopt;
  return ("--gpu-arch " + arch + ": expected one of " +
          llvm::join(ArrayRef<StringRef>(kArchitectures), ", "))
      .str();
}
