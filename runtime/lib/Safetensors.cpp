//===- Safetensors.cpp ----------------------------------------------------===//
#include "pipecc/Runtime/Safetensors.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Files.h"
#include "pipecc/Runtime/Json.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace pipecc::rt {

namespace {
constexpr const char *kMetadataKey = "__metadata__";

TensorInfo parseEntry(const std::string &label, const std::string &name,
                      const JsonValue &entry, int64_t dataSize) {
  auto bad = [&](const std::string &why) {
    fail(label, ": tensor '", name, "': ", why);
  };
  if (!entry.isObject())
    bad("header entry is not an object");
  const JsonValue *dtype = entry.find("dtype");
  const JsonValue *shape = entry.find("shape");
  const JsonValue *offsets = entry.find("data_offsets");
  if (!dtype || !shape || !offsets)
    bad("entry lacks one of 'dtype', 'shape', 'data_offsets'");

  TensorInfo info;
  info.name = name;
  if (!dtype->isString())
    bad("'dtype' is not a string");
  auto parsedType = parseSafetensorsName(dtype->asString());
  if (!parsedType)
    bad("unknown dtype '" + dtype->asString() + "'");
  info.dtype = *parsedType;

  if (!shape->isArray())
    bad("'shape' is not an array");
  for (const JsonValue &dim : shape->asArray()) {
    if (!dim.isInteger() || dim.asInteger() < 0)
      bad("'shape' holds a value that is not a non-negative integer");
    info.shape.push_back(dim.asInteger());
  }

  if (!offsets->isArray() || offsets->asArray().size() != 2 ||
      !offsets->asArray()[0].isInteger() || !offsets->asArray()[1].isInteger())
    bad("'data_offsets' is not an array of two integers");
  info.begin = offsets->asArray()[0].asInteger();
  info.end = offsets->asArray()[1].asInteger();
  if (info.begin < 0 || info.end < info.begin || info.end > dataSize)
    bad("data_offsets [" + std::to_string(info.begin) + ", " +
        std::to_string(info.end) + "] lie outside the data section of " +
        std::to_string(dataSize) + " bytes");
  int64_t expected;
  try {
    expected = byteCount(info.shape, info.dtype);
  } catch (const RuntimeError &e) {
    bad(e.what());
  }
  if (info.bytes() != expected)
    bad("data_offsets span " + std::to_string(info.bytes()) +
        " bytes but shape " + shapeToString(info.shape) + " of " +
        safetensorsName(info.dtype) + " needs " + std::to_string(expected));
  return info;
}
} // namespace

SafetensorsFile SafetensorsFile::load(const std::string &path) {
  return parse(path, readRegularFile(path));
}

SafetensorsFile SafetensorsFile::parse(std::string label,
                                       std::vector<char> bytes) {
  SafetensorsFile file;
  file.path_ = std::move(label);
  const std::string &path = file.path_;
  int64_t size = static_cast<int64_t>(bytes.size());
  if (size < 8)
    fail(path, ": not a safetensors file (shorter than the 8-byte header "
               "length)");
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i)
    headerLength = (headerLength << 8) | static_cast<unsigned char>(bytes[i]);
  if (headerLength > static_cast<uint64_t>(size - 8))
    fail(path, ": header length ", std::to_string(headerLength),
         " exceeds the file size ", size);
  std::string headerText(bytes.data() + 8, headerLength);
  JsonValue header;
  try {
    header = JsonValue::parse(headerText);
  } catch (const RuntimeError &e) {
    fail(path, ": bad safetensors header: ", e.what());
  }
  if (!header.isObject())
    fail(path, ": bad safetensors header: not a JSON object");

  file.dataStart_ = 8 + static_cast<int64_t>(headerLength);
  int64_t dataSize = size - file.dataStart_;
  for (const JsonValue::Member &member : header.asObject()) {
    if (member.first == kMetadataKey) {
      if (!member.second.isObject())
        fail(path, ": '__metadata__' is not an object");
      for (const JsonValue::Member &item : member.second.asObject()) {
        if (!item.second.isString())
          fail(path, ": '__metadata__' value for '", item.first,
               "' is not a string");
        file.metadata_.emplace_back(item.first, item.second.asString());
      }
      continue;
    }
    file.tensors_.push_back(
        parseEntry(path, member.first, member.second, dataSize));
  }

  std::vector<const TensorInfo *> byOffset;
  for (const TensorInfo &tensor : file.tensors_)
    if (tensor.bytes() > 0)
      byOffset.push_back(&tensor);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const TensorInfo *a, const TensorInfo *b) {
              return a->begin < b->begin;
            });
  for (size_t i = 1; i < byOffset.size(); ++i)
    if (byOffset[i]->begin < byOffset[i - 1]->end)
      fail(path, ": tensors '", byOffset[i - 1]->name, "' and '",
           byOffset[i]->name, "' overlap");
  file.bytes_ = std::move(bytes);
  return file;
}

const TensorInfo *SafetensorsFile::find(const std::string &name) const {
  for (const TensorInfo &tensor : tensors_)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

void SafetensorsWriter::setMetadata(const std::string &key,
                                    const std::string &value) {
  for (auto &item : metadata_)
    if (item.first == key) {
      item.second = value;
      return;
    }
  metadata_.emplace_back(key, value);
}

bool SafetensorsWriter::contains(const std::string &name) const {
  for (const Entry &entry : tensors_)
    if (entry.name == name)
      return true;
  return false;
}

void SafetensorsWriter::add(const std::string &name, DType dtype,
                            const Shape &shape, const void *data) {
  if (name == kMetadataKey)
    fail("safetensors: a tensor cannot be named '__metadata__'");
  if (contains(name))
    fail("safetensors: duplicate tensor name '", name, "'");
  int64_t bytes = byteCount(shape, dtype);
  const char *begin = static_cast<const char *>(data);
  tensors_.push_back(Entry{name, dtype, shape,
                           std::vector<char>(begin, begin + bytes)});
}

std::vector<char> SafetensorsWriter::serialize() const {
  JsonValue header = JsonValue::object();
  if (!metadata_.empty()) {
    JsonValue metadata = JsonValue::object();
    for (const auto &item : metadata_)
      metadata.set(item.first, JsonValue::string(item.second));
    header.set(kMetadataKey, std::move(metadata));
  }
  int64_t offset = 0;
  for (const Entry &entry : tensors_) {
    JsonValue shape = JsonValue::array();
    for (int64_t dim : entry.shape)
      shape.push(JsonValue::integer(dim));
    int64_t end = offset + static_cast<int64_t>(entry.data.size());
    header.set(entry.name,
               JsonValue::object(
                   {{"dtype", JsonValue::string(safetensorsName(entry.dtype))},
                    {"shape", std::move(shape)},
                    {"data_offsets",
                     JsonValue::array({JsonValue::integer(offset),
                                       JsonValue::integer(end)})}}));
    offset = end;
  }
  std::string text = header.serialize();
  // Pad with spaces so the data section starts 8-byte aligned (as the
  // reference implementation does).
  text.append((8 - text.size() % 8) % 8, ' ');

  std::vector<char> out;
  out.reserve(8 + text.size() + static_cast<size_t>(offset));
  uint64_t length = text.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
  out.insert(out.end(), text.begin(), text.end());
  for (const Entry &entry : tensors_)
    out.insert(out.end(), entry.data.begin(), entry.data.end());
  return out;
}

void SafetensorsWriter::writeFile(const std::string &path) const {
  std::vector<char> image = serialize();
  writeFileAtomically(path, image.data(), image.size());
}

} // namespace pipecc::rt
