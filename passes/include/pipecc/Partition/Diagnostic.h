//===- Diagnostic.h - Error values of the partition library ------------*- C++ -*-===//
//
// The shared Status / Result<T> types, under this library's namespace.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_PARTITION_DIAGNOSTIC_H
#define PIPECC_PARTITION_DIAGNOSTIC_H

#include "pipecc/Support/Result.h"

namespace pipecc::partition {
using support::Diagnostic;
using support::Result;
using support::Status;
} // namespace pipecc::partition

#endif // PIPECC_PARTITION_DIAGNOSTIC_H
