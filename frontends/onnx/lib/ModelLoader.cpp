//===- ModelLoader.cpp - Reading ONNX files -------------------------------===//

#include "ModelLoader.h"

#include "pipecc/Support/Escape.h"

#include "google/protobuf/io/coded_stream.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <climits>

using namespace pipecc::frontend::detail;
using llvm::StringRef;
using pipecc::support::quote;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

int64_t pipecc::frontend::detail::getOpset(const onnx::ModelProto &model,
                                           StringRef domain) {
  for (const onnx::OperatorSetIdProto &id : model.opset_import())
    if (id.domain() == domain ||
        (isDefaultDomain(domain) && isDefaultDomain(id.domain())))
      return id.version();
  return -1;
}

int64_t
pipecc::frontend::detail::getDefaultOpset(const onnx::ModelProto &model) {
  return getOpset(model, "");
}

//===----------------------------------------------------------------------===//
// Telling a truncated model from a file that is not a model
//===----------------------------------------------------------------------===//

namespace {
/// A top-level field of ModelProto: its number, wire type and name.
struct ModelField {
  int number;
  int wireType;
  const char *name;
};
} // namespace

static constexpr ModelField kModelFields[] = {
    {1, 0, "ir_version"},     {2, 2, "producer_name"},
    {3, 2, "producer_version"}, {4, 2, "domain"},
    {5, 0, "model_version"},  {6, 2, "doc_string"},
    {7, 2, "graph"},          {8, 2, "opset_import"},
    {14, 2, "metadata_props"}, {20, 2, "training_info"},
    {25, 2, "functions"}};

/// Walks the top-level protobuf fields of `data`, which failed to parse, and
/// explains why: a field running past the end of the file means the file was
/// cut short; a field that ModelProto does not have means it is no model.
static llvm::Error diagnoseParseFailure(StringRef path, StringRef data) {
  namespace io = google::protobuf::io;
  io::CodedInputStream in(reinterpret_cast<const uint8_t *>(data.data()),
                          static_cast<int>(data.size()));
  auto notAModel = [&](const llvm::Twine &why) {
    return makeError(quote(path) + " is not an ONNX model: " + why);
  };
  auto truncated = [&](const char *field, int64_t at, const llvm::Twine &why) {
    return makeError(llvm::formatv("{0} is truncated or corrupt: the '{1}' "
                                   "field at byte {2} {3} (the file has {4} "
                                   "bytes)",
                                   quote(path), field, at, why, data.size()));
  };
  bool sawField = false;
  while (true) {
    int64_t at = in.CurrentPosition();
    uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (at == static_cast<int64_t>(data.size()))
        break;
      return sawField ? makeError(llvm::formatv(
                            "{0} is truncated or corrupt: bad field tag at "
                            "byte {1} (the file has {2} bytes)",
                            quote(path), at, data.size()))
                      : notAModel("it is not a protobuf-encoded ModelProto");
    }
    int number = static_cast<int>(tag >> 3), wireType = tag & 7;
    const ModelField *field = nullptr;
    for (const ModelField &known : kModelFields)
      if (known.number == number && known.wireType == wireType)
        field = &known;
    if (!field)
      return sawField ? makeError(llvm::formatv(
                            "{0} is truncated or corrupt: unexpected field "
                            "{1} at byte {2}",
                            quote(path), number, at))
                      : notAModel("it is not a protobuf-encoded ModelProto");
    sawField = true;
    if (wireType == 0) {
      uint64_t ignored;
      if (!in.ReadVarint64(&ignored))
        return truncated(field->name, at, "ends in the middle of a number");
      continue;
    }
    uint32_t length;
    if (!in.ReadVarint32(&length))
      return truncated(field->name, at, "ends in the middle of its length");
    int64_t left = static_cast<int64_t>(data.size()) - in.CurrentPosition();
    if (static_cast<int64_t>(length) > left)
      return truncated(field->name, at,
                       llvm::formatv("is {0} bytes long but only {1} remain",
                                     length, left)
                           .str());
    in.Skip(static_cast<int>(length));
  }
  // Every top-level field is complete: the damage is inside one of them.
  return makeError(quote(path) +
                   " is truncated or corrupt: a nested message does not "
                   "parse as ONNX");
}

//===----------------------------------------------------------------------===//
// External data
//===----------------------------------------------------------------------===//

/// Whether `path` is `folder` or lies below it; both are normalised.
static bool isInside(StringRef path, StringRef folder) {
  if (path == folder)
    return false;
  llvm::SmallString<256> prefix(folder);
  if (!prefix.ends_with("/"))
    prefix += "/";
  return path.starts_with(prefix);
}

/// The bytes of the external data of `tensor` (described by `what`, e.g.
/// "initializer 'w'"), mapped from a file in `folder` (large slices are
/// mmap'ed: nothing is read until used).
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mapExternalData(StringRef path, StringRef folder, const llvm::Twine &what,
                const onnx::TensorProto &tensor) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    if (key == "location") {
      location = value.str();
    } else if (key == "offset" || key == "length") {
      uint64_t number;
      if (value.getAsInteger(10, number))
        return makeError(quote(path) + ": " + what + " has an invalid " + key +
                         " " + quote(value) + " for its external data");
      if (key == "offset")
        offset = number;
      else
        length = number;
    }
  }
  auto prefix = [&]() { return (quote(path) + ": " + what).str(); };
  if (location.empty())
    return makeError(prefix() + " has external data without a location");
  if (llvm::sys::path::is_absolute(location) ||
      llvm::sys::path::is_absolute(location, llvm::sys::path::Style::windows))
    return makeError(prefix() + " has external data at the absolute path " +
                     quote(location) +
                     "; external data must lie in the model's folder");

  llvm::SmallString<256> file(folder);
  llvm::sys::path::append(file, location);
  llvm::sys::path::remove_dots(file, /*remove_dot_dot=*/true);
  auto outside = [&]() {
    return makeError(prefix() + " has external data at " + quote(location) +
                     ", which is outside the model's folder " + quote(folder));
  };
  if (!isInside(file, folder))
    return outside();
  llvm::SmallString<256> real;
  if (std::error_code ec = llvm::sys::fs::real_path(file, real))
    return makeError(prefix() + ": cannot open its external data file " +
                     quote(file) + ": " + ec.message());
  if (!isInside(real, folder))
    return outside();

  uint64_t size;
  if (std::error_code ec = llvm::sys::fs::file_size(real, size))
    return makeError(prefix() + ": cannot read its external data file " +
                     quote(file) + ": " + ec.message());
  uint64_t wanted = length ? *length : (offset <= size ? size - offset : 0);
  if (offset > size || wanted > size - offset)
    return makeError(llvm::formatv(
        "{0}: its external data file {1} has {2} bytes, fewer than offset "
        "{3} + length {4}",
        prefix(), quote(file), size, offset, wanted));
  auto buffer = llvm::MemoryBuffer::getFileSlice(real, wanted, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer)
    return makeError(prefix() + ": cannot read its external data file " +
                     quote(file) + ": " + buffer.getError().message());
  return std::move(*buffer);
}

/// Replaces the external data of `tensor` with a copy of its bytes.
static llvm::Error loadExternalData(StringRef path, StringRef folder,
                                    const llvm::Twine &what,
                                    onnx::TensorProto &tensor) {
  auto buffer = mapExternalData(path, folder, what, tensor);
  if (!buffer)
    return buffer.takeError();
  tensor.set_raw_data((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  tensor.clear_external_data();
  tensor.clear_data_location();
  return llvm::Error::success();
}

/// Whether the importer may keep `tensor`'s external data mapped rather
/// than copied: a large float32 tensor whose data has exactly its size
/// (anything else is copied, so that the importer's checks report it).
static bool keepsMapped(const onnx::TensorProto &tensor, size_t bytes) {
  if (tensor.data_type() != onnx::TensorProto::FLOAT ||
      bytes < kMappedInitializerBytes)
    return false;
  uint64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0 || (dim != 0 && count > (uint64_t(1) << 40) / dim))
      return false;
    count *= dim;
  }
  return count * sizeof(float) == bytes;
}

static llvm::Error loadAllExternalData(StringRef path,
                                       onnx::ModelProto &model,
                                       MappedInitializers &mapped) {
  llvm::SmallString<256> folder(llvm::sys::path::parent_path(path));
  if (folder.empty())
    folder = ".";
  llvm::SmallString<256> realFolder;
  if (std::error_code ec = llvm::sys::fs::real_path(folder, realFolder))
    return makeError(quote(path) +
                     ": cannot resolve the model's folder: " + ec.message());
  auto isExternal = [](const onnx::TensorProto &t) {
    return t.data_location() == onnx::TensorProto::EXTERNAL;
  };
  onnx::GraphProto *graph = model.mutable_graph();
  for (onnx::TensorProto &init : *graph->mutable_initializer()) {
    if (!isExternal(init))
      continue;
    auto buffer = mapExternalData(path, realFolder,
                                  "initializer " + quote(init.name()), init);
    if (!buffer)
      return buffer.takeError();
    if (keepsMapped(init, (*buffer)->getBufferSize()) &&
        !mapped.count(init.name())) {
      mapped[init.name()] = std::move(*buffer);
      continue;
    }
    init.set_raw_data((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
    init.clear_external_data();
    init.clear_data_location();
  }
  for (onnx::NodeProto &node : *graph->mutable_node())
    for (onnx::AttributeProto &attr : *node.mutable_attribute())
      if (attr.has_t() && isExternal(attr.t()))
        if (llvm::Error err =
                loadExternalData(path, realFolder,
                                 "node " + quote(node.name()) + " attribute " +
                                     quote(attr.name()),
                                 *attr.mutable_t()))
          return err;
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

llvm::Error pipecc::frontend::detail::loadModel(StringRef path,
                                                onnx::ModelProto &model,
                                                MappedInitializers &mapped) {
  // A device or pipe (/dev/zero) would be read forever.
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file &&
      status.type() != llvm::sys::fs::file_type::directory_file)
    return makeError(quote(path) + " is not a regular file");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read " + quote(path) + ": " +
                     buffer.getError().message());
  StringRef data = (*buffer)->getBuffer();
  if (data.empty())
    return makeError(quote(path) + " is not an ONNX model: the file is empty");
  if (data.size() > static_cast<size_t>(INT_MAX))
    return makeError(quote(path) +
                     " is larger than 2 GiB; store its initializers as "
                     "external data");
  if (!model.ParseFromArray(data.data(), static_cast<int>(data.size())))
    return diagnoseParseFailure(path, data);

  auto notAModel = [&](const llvm::Twine &why) {
    return makeError(quote(path) + " is not an ONNX model: " + why);
  };
  if (model.ir_version() <= 0)
    return notAModel("it has no IR version");
  if (!model.has_graph())
    return notAModel("it has no graph");
  if (model.opset_import_size() == 0)
    return notAModel("it imports no operator set (opset_import is empty)");
  if (getDefaultOpset(model) < 1)
    return notAModel("it imports no version of the default ONNX domain");
  return loadAllExternalData(path, model, mapped);
}
