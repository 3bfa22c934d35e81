#ifndef PIPECC_COMPILER_OBJECTEMITTER_H
#define PIPECC_COMPILER_OBJECTEMITTER_H

#include "pipecc/Compiler/TargetCPU.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace llvm {
class Module;
}

namespace pipecc::codegen {

/// Translates an LLVM-dialect module to LLVM IR (with the dialect
/// translations in `translations` besides builtin and LLVM), optimises it
/// at -O`optLevel` (0 to 3) for the CPU model `cpu` of the host's
/// architecture and writes an object file. When `cpu` requires features,
/// the object checks them before main (pipecc_rt_require_cpu_features).
/// Errors are reported on the module.
/// `adjust`, when given, sees the LLVM IR module before optimisation (a
/// target's placement of its sections, say).
mlir::LogicalResult
emitObjectFile(mlir::ModuleOp module, llvm::StringRef objectPath,
               unsigned optLevel, const TargetCPU &cpu,
               const mlir::DialectRegistry &translations,
               llvm::function_ref<void(llvm::Module &)> adjust = nullptr);

/// Links objects into an executable with the system C++ compiler driver
/// (`PIPECC_CXX`, else `c++`), a runtime's link response file `linkFile`
/// and `extraArgs`. On failure returns false with the linker's first error
/// in `error`.
bool linkRankExecutable(llvm::ArrayRef<std::string> objects,
                        llvm::StringRef executablePath,
                        llvm::StringRef linkFile,
                        llvm::ArrayRef<std::string> extraArgs,
                        std::string &error);

/// The link response file of a runtime library of this build:
/// `<build>/lib/<name>`.
std::string runtimeLinkFile(llvm::StringRef name);

} // namespace pipecc::codegen

#endif // PIPECC_COMPILER_OBJECTEMITTER_H
