//===- TargetCPU.h - The CPU model of the host code (--target-cpu) -*- C++ -*-===//
#ifndef PIPECC_COMPILER_TARGETCPU_H
#define PIPECC_COMPILER_TARGETCPU_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace pipecc::codegen {

/// What LLVM compiles the rank code for, resolved from --target-cpu.
struct TargetCPU {
  /// The option as given: `native`, `generic` or an LLVM CPU name.
  std::string option = "generic";
  /// LLVM's CPU name: the host's for `native`, the x86-64 baseline for
  /// `generic`.
  std::string cpu = "generic";
  /// LLVM's feature string (`native`: every feature the host has).
  std::string features;
  /// The features of pipecc::rt::checkedCpuFeatures() this model has: the
  /// executable checks them before main (empty for `generic`).
  std::vector<std::string> required;
  /// The vector width the loop vectorizer targets (LLVM's
  /// prefer-vector-width), or 0 for LLVM's choice: 512 on AVX-512 models,
  /// where LLVM's tuning would stop at 256 bits.
  unsigned vectorBits = 0;
};

/// Resolves a --target-cpu value for the host's architecture. On failure
/// returns nullopt with a one-line message naming the option in `error`.
std::optional<TargetCPU> resolveTargetCPU(llvm::StringRef option,
                                          std::string &error);

} // namespace pipecc::codegen

#endif // PIPECC_COMPILER_TARGETCPU_H
