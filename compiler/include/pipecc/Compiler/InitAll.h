#ifndef PIPECC_COMPILER_INITALL_H
#define PIPECC_COMPILER_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace pipecc {
/// Registers pipecc's dialects and the few upstream ones it uses. Upstream's
/// register-everything headers cost ~96 s of compile per translation unit.
void registerAllPipeccDialects(mlir::DialectRegistry &registry);
/// Registers pipecc's passes and the upstream passes its pipelines use.
void registerAllPipeccPasses();
} // namespace pipecc

#endif // PIPECC_COMPILER_INITALL_H
