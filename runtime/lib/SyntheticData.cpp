//===- SyntheticData.cpp --------------------------------------------------===//
//
// A counter-based generator (splitmix64 of name hash + element index) rather
// than a stateful PRNG: any element can be computed alone, so a Python
// reference can reproduce the data with a few lines (see Runtime.h).
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/SyntheticData.h"
#include "pipecc/Runtime/Error.h"

#include <cstring>

namespace pipecc::rt {

namespace {
uint64_t fnv1a64(const char *text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const char *p = text; p && *p; ++p) {
    hash ^= static_cast<unsigned char>(*p);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

double syntheticValue(uint64_t nameHash, int32_t dtype, int64_t numClasses,
                      int64_t index) {
  uint64_t u = splitmix64(nameHash + static_cast<uint64_t>(index));
  if (dtype == PIPECC_RT_F32)
    return static_cast<double>(u >> 40) * (1.0 / 8388608.0) - 1.0;
  if (numClasses > 0)
    return static_cast<double>(u % static_cast<uint64_t>(numClasses));
  return 0.0;
}
} // namespace

NpyArray makeSyntheticInput(const pipecc_rt_buffer_desc &desc,
                            int64_t microbatches) {
  Shape shape(desc.shape, desc.shape + desc.num_dims);
  if (shape.empty())
    fail("data input '", desc.name, "' has no micro-batch dimension");
  shape[0] *= microbatches;
  DType dtype = static_cast<DType>(desc.dtype);
  int64_t count = elementCount(shape);
  std::vector<char> data(static_cast<size_t>(count * elementSize(dtype)));
  uint64_t nameHash = fnv1a64(desc.name);
  for (int64_t i = 0; i < count; ++i) {
    double value = syntheticValue(nameHash, desc.dtype, desc.num_classes, i);
    char *slot = data.data() + i * elementSize(dtype);
    if (dtype == DType::F32) {
      float f = static_cast<float>(value);
      std::memcpy(slot, &f, sizeof f);
    } else if (dtype == DType::I64) {
      int64_t v = static_cast<int64_t>(value);
      std::memcpy(slot, &v, sizeof v);
    } else if (dtype == DType::I32) {
      int32_t v = static_cast<int32_t>(value);
      std::memcpy(slot, &v, sizeof v);
    } else {
      fail("data input '", desc.name, "': no synthetic data for dtype ",
           safetensorsName(dtype));
    }
  }
  return NpyArray("synthetic input '" + std::string(desc.name) + "'", dtype,
                  std::move(shape), std::move(data));
}

} // namespace pipecc::rt

extern "C" double pipecc_rt_synthetic_value(const char *name, int32_t dtype,
                                            int64_t num_classes,
                                            int64_t index) {
  return pipecc::rt::syntheticValue(pipecc::rt::fnv1a64(name), dtype,
                                    num_classes, index);
}
