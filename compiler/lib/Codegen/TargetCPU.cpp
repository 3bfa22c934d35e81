//===- TargetCPU.cpp - Resolving --target-cpu ----------------------------===//
//
// `native` compiles the stage loops for the host's vector ISA (AVX2 and FMA
// on a current x86-64: 8 floats per instruction where the baseline has 4);
// `generic` keeps executables portable to every CPU of the architecture.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Compiler/TargetCPU.h"

#include "pipecc/Runtime/CpuFeatures.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <memory>

using namespace pipecc;
using namespace pipecc::codegen;

std::optional<TargetCPU> codegen::resolveTargetCPU(llvm::StringRef option,
                                                   std::string &error) {
  llvm::InitializeNativeTarget();
  std::string triple = llvm::sys::getProcessTriple();
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    error = "--target-cpu " + option.str() + ": no LLVM target for " +
            triple + ": " + error;
    return std::nullopt;
  }

  TargetCPU result;
  result.option = option.str();
  if (option == "native") {
    result.cpu = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures()) {
      if (!result.features.empty())
        result.features += ",";
      result.features += (feature.second ? "+" : "-") + feature.first().str();
    }
  } else if (option != "generic") {
    result.cpu = option.str();
  }

  // Checked on the baseline first: LLVM warns about an unknown CPU name.
  std::unique_ptr<llvm::MCSubtargetInfo> baseline(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!baseline || !baseline->isCPUStringValid(result.cpu)) {
    error = "--target-cpu " + option.str() + ": not a CPU LLVM knows for " +
            triple + " (expected native, generic or a CPU name such as "
            "x86-64-v3, haswell, skylake-avx512 or znver3)";
    return std::nullopt;
  }
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, result.cpu, result.features));
  if (option != "generic")
    for (std::string_view name : rt::checkedCpuFeatures())
      if (subtarget->checkFeatures("+" + std::string(name)))
        result.required.emplace_back(name);
  // LLVM tunes Skylake-X and its successors to 256-bit vectors, against
  // the clock drop of 512-bit code on the first of them. The rank's
  // matmuls run 512-bit kernels on these CPUs all the same (the packed
  // engine, OpenBLAS's SkylakeX kernels), so the element-wise loops
  // between them lose nothing by running as wide: measured on a current
  // Xeon, the GPT's step outside the matmuls and the optimizer took 5%
  // less time (docs/design.md, "512-bit element-wise loops").
  if (subtarget->checkFeatures("+avx512f"))
    result.vectorBits = 512;
  return result;
}
