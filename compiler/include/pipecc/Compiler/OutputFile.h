#ifndef PIPECC_COMPILER_OUTPUTFILE_H
#define PIPECC_COMPILER_OUTPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>

namespace pipecc {

/// Writes one output file whole or not at all: into a fresh temporary file
/// beside `path` (removed on any failure or termination signal), renamed
/// over `path` at the end. An existing `path` is refused, since pipecc
/// cannot tell a file it wrote from one of the user's, unless `force`;
/// a folder or a symbolic link at `path` is always refused.
/// Whether writeOutputFile may write `path` (the same rules), so that a
/// command writing several files can refuse before writing any.
bool checkOutputFile(llvm::StringRef path, bool force, std::string &error);

bool writeOutputFile(llvm::StringRef path, bool force,
                     const std::function<void(llvm::raw_ostream &)> &write,
                     std::string &error);

} // namespace pipecc

#endif // PIPECC_COMPILER_OUTPUTFILE_H
