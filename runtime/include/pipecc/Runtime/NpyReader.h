//===- NpyReader.h - NumPy .npy files ---------------------------*- C++ -*-===//
//
// Reads .npy format versions 1.0, 2.0 and 3.0 holding little-endian float32,
// int64 or int32 data in C order: the data inputs of a training run. Errors
// name the file and the reason.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_NPYREADER_H
#define PIPECC_RUNTIME_NPYREADER_H

#include "pipecc/Runtime/DType.h"

#include <cstddef>
#include <string>
#include <vector>

namespace pipecc::rt {

struct NpyHeader {
  int majorVersion = 1;
  DType dtype = DType::F32;
  Shape shape;
  /// Offset of the first data byte from the start of the file.
  int64_t dataOffset = 0;
};

/// Parses the magic, version and header dict at the start of `bytes`
/// (`size` of them available). `path` only labels errors.
NpyHeader parseNpyHeader(const std::string &path, const char *bytes,
                         size_t size);

/// A contiguous run of bytes inside an NpyArray.
struct ByteSlice {
  const char *data = nullptr;
  int64_t bytes = 0;
};

/// A whole .npy file held in memory.
class NpyArray {
public:
  /// Reads the file; throws RuntimeError naming `path` on any problem.
  static NpyArray load(const std::string &path);
  /// Wraps already-decoded data (used for synthetic inputs).
  NpyArray(std::string label, DType dtype, Shape shape, std::vector<char> data);

  const std::string &path() const { return path_; }
  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  const char *data() const { return data_.data(); }
  int64_t bytes() const { return static_cast<int64_t>(data_.size()); }

  /// Splits the first dimension into `parts` equal chunks and returns chunk
  /// `index` (e.g. micro-batch m of M). Throws when the array is a scalar,
  /// the first dimension is not divisible by `parts`, or `index` is out of
  /// range.
  ByteSlice slice(int64_t parts, int64_t index) const;

private:
  std::string path_;
  DType dtype_;
  Shape shape_;
  std::vector<char> data_;
};

/// Writes a version 1.0 .npy file (2.0 if the header needs it). For tests
/// and tools; data must hold elementCount(shape) elements of `dtype`.
void writeNpy(const std::string &path, DType dtype, const Shape &shape,
              const void *data);

/// numpy's name for the supported dtypes: "float32", "int64", "int32".
const char *numpyTypeName(DType dtype);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_NPYREADER_H
