//===- SafetensorsFuzzer.cpp - libFuzzer target: the safetensors reader ---===//
//
// Bytes -> SafetensorsFile. Bad input must end in RuntimeError; a crash, a
// sanitizer report or any other exception is a bug. What parses must keep
// its promises: every tensor lies inside the data section and holds as many
// bytes as its shape needs, and writing it back parses to the same tensors.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Safetensors.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace pipecc::rt;

[[noreturn]] static void broken(const char *why, const std::string &name) {
  std::fprintf(stderr, "pipecc-fuzz-safetensors: tensor '%s': %s\n",
               name.c_str(), why);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *bytes = reinterpret_cast<const char *>(data);
  SafetensorsFile file;
  try {
    file = SafetensorsFile::parse("fuzz.safetensors",
                                  std::vector<char>(bytes, bytes + size));
  } catch (const RuntimeError &) {
    return 0;
  }
  SafetensorsWriter writer;
  for (const TensorInfo &tensor : file.tensors()) {
    if (tensor.begin < 0 || tensor.end < tensor.begin)
      broken("bad offsets", tensor.name);
    if (tensor.bytes() != byteCount(tensor.shape, tensor.dtype))
      broken("size does not match the shape", tensor.name);
    if (file.find(tensor.name) == nullptr)
      broken("cannot be found by name", tensor.name);
    try {
      writer.add(tensor.name, tensor.dtype, tensor.shape, file.data(tensor));
    } catch (const RuntimeError &) {
      // A duplicate name in the JSON header: the writer refuses it.
      return 0;
    }
  }
  std::vector<char> image = writer.serialize();
  SafetensorsFile again;
  try {
    again = SafetensorsFile::parse("round trip", image);
  } catch (const RuntimeError &e) {
    std::fprintf(stderr, "pipecc-fuzz-safetensors: round trip fails: %s\n",
                 e.what());
    std::abort();
  }
  if (again.tensors().size() != file.tensors().size())
    broken("round trip changes the tensor count", "");
  for (const TensorInfo &tensor : file.tensors()) {
    const TensorInfo *copy = again.find(tensor.name);
    if (!copy || copy->shape != tensor.shape || copy->dtype != tensor.dtype ||
        (tensor.bytes() > 0 &&
         std::memcmp(again.data(*copy), file.data(tensor), tensor.bytes())))
      broken("round trip changes the tensor", tensor.name);
  }
  return 0;
}
