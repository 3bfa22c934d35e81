//===- DType.h - Element types shared by npy and safetensors ----*- C++ -*-===//
#ifndef PIPECC_RUNTIME_DTYPE_H
#define PIPECC_RUNTIME_DTYPE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipecc::rt {

/// The values of F32, I64 and I32 equal the C API's PIPECC_RT_F32/I64/I32.
/// The other types exist so that safetensors files written by other tools
/// parse and then fail with a "dtype mismatch" naming the tensor.
enum class DType : int32_t {
  F32 = 0,
  I64 = 1,
  I32 = 2,
  F64 = 3,
  F16 = 4,
  BF16 = 5,
  I16 = 6,
  I8 = 7,
  U8 = 8,
  Bool = 9,
};

int64_t elementSize(DType type);
/// Safetensors spelling: "F32", "I64", ...
const char *safetensorsName(DType type);
std::optional<DType> parseSafetensorsName(const std::string &name);

using Shape = std::vector<int64_t>;
/// Product of the dimensions (1 for a scalar); throws on negative or
/// overflowing dimensions.
int64_t elementCount(const Shape &shape);
/// Bytes of a tensor of `shape` and `type`; throws like elementCount, and
/// when the byte count overflows (a header could otherwise claim 2^62
/// floats in 0 bytes).
int64_t byteCount(const Shape &shape, DType type);
/// "[2, 3]"
std::string shapeToString(const Shape &shape);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_DTYPE_H
