//===- NpyReaderFuzzer.cpp - libFuzzer target: the .npy reader ------------===//
//
// Bytes -> NpyHeader -> NpyArray, as NpyArray::load does for a file. Bad
// input must end in RuntimeError (one message naming the file); a crash, a
// sanitizer report or any other exception is a bug.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/NpyReader.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace pipecc::rt;
  const char *bytes = reinterpret_cast<const char *>(data);
  try {
    NpyHeader header = parseNpyHeader("fuzz.npy", bytes, size);
    if (header.dataOffset < 0 ||
        static_cast<uint64_t>(header.dataOffset) > size) {
      std::fprintf(stderr, "pipecc-fuzz-npy: data offset %lld outside %zu "
                           "bytes\n",
                   static_cast<long long>(header.dataOffset), size);
      std::abort();
    }
    // parseNpyHeader has checked that the byte count fits.
    int64_t expected = byteCount(header.shape, header.dtype);
    int64_t available = static_cast<int64_t>(size) - header.dataOffset;
    if (available != expected)
      return 0;
    NpyArray array("fuzz.npy", header.dtype, header.shape,
                   std::vector<char>(bytes + header.dataOffset, bytes + size));
    // Every micro-batch split the runtime may ask for stays in bounds.
    if (!array.shape().empty() && array.shape()[0] > 0) {
      for (int64_t parts : {int64_t(1), int64_t(2), array.shape()[0]}) {
        if (array.shape()[0] % parts != 0)
          continue;
        ByteSlice last = array.slice(parts, parts - 1);
        if (last.data + last.bytes != array.data() + array.bytes())
          std::abort();
      }
    }
  } catch (const RuntimeError &) {
  }
  return 0;
}
