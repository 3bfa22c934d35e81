//===- Diagnostic.h - Error values of the scheduling library ------------*- C++ -*-===//
//
// The shared Status / Result<T> types, under this library's namespace.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SCHEDULING_DIAGNOSTIC_H
#define PIPECC_SCHEDULING_DIAGNOSTIC_H

#include "pipecc/Support/Result.h"

namespace pipecc::scheduling {
using support::Diagnostic;
using support::Result;
using support::Status;
} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_DIAGNOSTIC_H
