//===- DataFileName.h - The data file of a graph input ----------*- C++ -*-===//
//
// Graph input names come from the model, i.e. from whoever wrote it; they
// must not choose which path the runtime reads. This is the one mapping from
// an input name to the name of its file in the --data folder
// (docs/cli.md, "Data files"):
//   - every byte outside [A-Za-z0-9_.-] becomes %XX (upper-case hex), '%'
//     included, so the mapping is one-to-one;
//   - a leading '.' becomes %2E, so no name maps to '.', '..' or a hidden
//     file; the empty name becomes '%';
//   - ".npy" is appended.
// "x" -> "x.npy", "input:0" -> "input%3A0.npy", "../../outside" ->
// "%2E.%2F..%2Foutside.npy". The result is always one path component.
// Plain C++ (no MPI, no LLVM): the compiler may call it too.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_DATAFILENAME_H
#define PIPECC_RUNTIME_DATAFILENAME_H

#include <string>
#include <string_view>

namespace pipecc::rt {

/// The file name (no folder) holding the data of graph input `inputName`.
std::string dataFileName(std::string_view inputName);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_DATAFILENAME_H
