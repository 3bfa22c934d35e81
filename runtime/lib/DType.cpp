//===- DType.cpp ----------------------------------------------------------===//
#include "pipecc/Runtime/DType.h"
#include "pipecc/Runtime/Error.h"

#include <limits>

namespace pipecc::rt {

namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  int64_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "F32", 4}, {DType::I64, "I64", 8},   {DType::I32, "I32", 4},
    {DType::F64, "F64", 8}, {DType::F16, "F16", 2},   {DType::BF16, "BF16", 2},
    {DType::I16, "I16", 2}, {DType::I8, "I8", 1},     {DType::U8, "U8", 1},
    {DType::Bool, "BOOL", 1},
};
const DTypeInfo &info(DType type) {
  for (const DTypeInfo &entry : kDTypes)
    if (entry.type == type)
      return entry;
  fail("unknown dtype code ", static_cast<int32_t>(type));
}
} // namespace

int64_t elementSize(DType type) { return info(type).size; }
const char *safetensorsName(DType type) { return info(type).name; }

std::optional<DType> parseSafetensorsName(const std::string &name) {
  for (const DTypeInfo &entry : kDTypes)
    if (name == entry.name)
      return entry.type;
  return std::nullopt;
}

int64_t elementCount(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      fail("negative dimension in shape ", shapeToString(shape));
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      fail("shape ", shapeToString(shape), " has too many elements");
    count *= dim;
  }
  return count;
}

int64_t byteCount(const Shape &shape, DType type) {
  int64_t count = elementCount(shape), size = elementSize(type);
  if (count > std::numeric_limits<int64_t>::max() / size)
    fail("shape ", shapeToString(shape), " of ", safetensorsName(type),
         " has too many bytes");
  return count * size;
}

std::string shapeToString(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

} // namespace pipecc::rt
