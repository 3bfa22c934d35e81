#ifndef PIPECC_COMPILER_OBJECTEMITTER_H
#define PIPECC_COMPILER_OBJECTEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace pipecc::codegen {

/// Translates an LLVM-dialect module to LLVM IR, optimises it at -O`optLevel`
/// (0 to 3) for the host CPU and writes an object file. Errors are reported
/// on the module.
mlir::LogicalResult emitObjectFile(mlir::ModuleOp module,
                                   llvm::StringRef objectPath,
                                   unsigned optLevel = 3);

/// Links objects with the CPU runtime into an executable, with the system
/// C++ compiler driver (`PIPECC_CXX`, else `c++`) and the runtime's link
/// response file (`PIPECC_RUNTIME_LINK_FILE`, else the one of this build).
/// On failure returns false with the linker's output in `error`.
bool linkRankExecutable(llvm::ArrayRef<std::string> objects,
                        llvm::StringRef executablePath, std::string &error);

} // namespace pipecc::codegen

#endif // PIPECC_COMPILER_OBJECTEMITTER_H
