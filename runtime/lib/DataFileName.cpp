//===- DataFileName.cpp ---------------------------------------------------===//
#include "pipecc/Runtime/DataFileName.h"

namespace pipecc::rt {

namespace {
bool keepsItself(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}
} // namespace

std::string dataFileName(std::string_view inputName) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string name;
  name.reserve(inputName.size() + 4);
  for (size_t i = 0; i < inputName.size(); ++i) {
    auto byte = static_cast<unsigned char>(inputName[i]);
    if (keepsItself(static_cast<char>(byte)) && !(i == 0 && byte == '.')) {
      name += static_cast<char>(byte);
      continue;
    }
    name += '%';
    name += kHex[byte >> 4];
    name += kHex[byte & 0xF];
  }
  // A lone '%' is no escape: the empty name gets a file of its own rather
  // than the hidden ".npy".
  if (name.empty())
    name = "%";
  return name + ".npy";
}

} // namespace pipecc::rt
