//===- Safetensors.h - safetensors reader and writer ------------*- C++ -*-===//
//
// The format: an 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {"k": "v"},
//    "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]}, ...}
// then the data section; offsets are relative to the data section.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_SAFETENSORS_H
#define PIPECC_RUNTIME_SAFETENSORS_H

#include "pipecc/Runtime/DType.h"

#include <string>
#include <utility>
#include <vector>

namespace pipecc::rt {

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  /// Byte range [begin, end) within the data section.
  int64_t begin = 0, end = 0;
  int64_t bytes() const { return end - begin; }
};

using Metadata = std::vector<std::pair<std::string, std::string>>;

/// A whole safetensors file held in memory, validated on load: the header
/// length fits the file, every entry has a known dtype, a non-negative shape
/// and offsets inside the data section whose size matches the shape, and no
/// two tensors overlap.
class SafetensorsFile {
public:
  static SafetensorsFile load(const std::string &path);
  /// Parses an in-memory image; `label` names it in errors.
  static SafetensorsFile parse(std::string label, std::vector<char> bytes);

  const std::string &path() const { return path_; }
  const std::vector<TensorInfo> &tensors() const { return tensors_; }
  const Metadata &metadata() const { return metadata_; }
  /// nullptr when absent.
  const TensorInfo *find(const std::string &name) const;
  const char *data(const TensorInfo &tensor) const {
    return bytes_.data() + dataStart_ + tensor.begin;
  }

private:
  std::string path_;
  std::vector<char> bytes_;
  int64_t dataStart_ = 0;
  std::vector<TensorInfo> tensors_;
  Metadata metadata_;
};

/// Collects tensors (copying their data) and writes them in insertion order.
class SafetensorsWriter {
public:
  void setMetadata(const std::string &key, const std::string &value);
  /// Throws on a duplicate name or a name equal to "__metadata__".
  void add(const std::string &name, DType dtype, const Shape &shape,
           const void *data);
  bool contains(const std::string &name) const;
  size_t size() const { return tensors_.size(); }

  /// The complete file image.
  std::vector<char> serialize() const;
  /// Writes the image with writeFileAtomically (Files.h): readers never see
  /// a half-written file and no planted link is followed.
  void writeFile(const std::string &path) const;

private:
  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    std::vector<char> data;
  };
  std::vector<Entry> tensors_;
  Metadata metadata_;
};

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_SAFETENSORS_H
