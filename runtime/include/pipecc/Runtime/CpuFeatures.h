//===- CpuFeatures.h - The CPU features a rank executable needs -*- C++ -*-===//
//
// `pipecc --target-cpu` compiles the stage loops for a CPU model (the host's
// by default), whose vector instructions an older CPU lacks. The compiler
// records the features of this table that the model has; the executable
// checks them before main, so a CPU without one gets a one-line error naming
// it instead of SIGILL. One table serves both sides (pipecc links this file
// too): plain C++ without exceptions, MPI or LLVM.
//
// The names are LLVM's x86 feature names. Only features beyond the x86-64
// baseline (SSE2) are listed: those are the ones LLVM's code generation
// uses for loops and scalar code; the baseline is always there.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CPUFEATURES_H
#define PIPECC_RUNTIME_CPUFEATURES_H

#include <string>
#include <string_view>
#include <vector>

namespace pipecc::rt {

/// Every feature the check knows, in table order (empty off x86-64).
std::vector<std::string_view> checkedCpuFeatures();

/// The features of `required` (comma-separated names) this CPU lacks
/// (a feature the check does not know counts as present).
std::vector<std::string> missingCpuFeatures(std::string_view required);

} // namespace pipecc::rt

extern "C" {
/// Called by a rank executable before main when it was compiled for a CPU
/// model beyond the baseline: exits with status 1 and a one-line message on
/// stderr naming `target_cpu` and the first missing features when this CPU
/// lacks any of `features` (comma-separated, from checkedCpuFeatures()).
void pipecc_rt_require_cpu_features(const char *target_cpu,
                                    const char *features);
}

#endif // PIPECC_RUNTIME_CPUFEATURES_H
