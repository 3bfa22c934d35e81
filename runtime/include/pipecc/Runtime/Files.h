//===- Files.h - How the runtime reads and writes files ---------*- C++ -*-===//
//
// Inputs (data, weights) are read only from regular files, with their size
// taken from the file system, never from a header inside them: a folder, a
// FIFO or /dev/zero is refused at once by name. Outputs (--save,
// --dump-grads) are written to a temporary created exclusively under an
// unpredictable name beside the destination (never through a link planted
// there), with every write checked, fsync'ed, and renamed over the
// destination, so the destination holds either its old or its new content.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_FILES_H
#define PIPECC_RUNTIME_FILES_H

#include <string>
#include <vector>

namespace pipecc::rt {

/// The whole content of the regular file `path` (links followed). Throws
/// RuntimeError naming `path` when it cannot be opened, is a folder or
/// another non-regular file, or cannot be read completely.
std::vector<char> readRegularFile(const std::string &path);

/// Throws unless `path` can be an output file: its folder exists and
/// `path` does not name something other than a regular file (a link to a
/// regular file is replaced by the new file, its target left alone).
void checkOutputFile(const std::string &path);

/// Writes `size` bytes at `data` to `path` as described above (mode
/// 0666 & ~umask). Throws RuntimeError naming `path` on any failure, leaving
/// no temporary behind and `path` untouched.
void writeFileAtomically(const std::string &path, const void *data,
                         size_t size);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_FILES_H
