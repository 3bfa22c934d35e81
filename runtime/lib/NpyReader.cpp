//===- NpyReader.cpp ------------------------------------------------------===//
//
// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (8, 3), }
// padded with spaces and a final '\n'. We parse that small literal grammar
// (quoted strings, True/False, tuples of integers) rather than pattern-match,
// so unusual but valid spacing and key order are accepted.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/NpyReader.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

namespace pipecc::rt {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct SupportedType {
  DType dtype;
  const char *descr;
  const char *numpyName;
};
constexpr SupportedType kSupportedTypes[] = {
    {DType::F32, "<f4", "float32"},
    {DType::I64, "<i8", "int64"},
    {DType::I32, "<i4", "int32"},
    {DType::Bool, "|b1", "bool"},
};

/// Parser for the header's dict literal.
class HeaderDictParser {
public:
  HeaderDictParser(const std::string &path, const std::string &text)
      : path_(path), text_(text) {}

  NpyHeader parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortranOrder;
    std::optional<Shape> shape;
    expect('{');
    while (!consume('}')) {
      std::string key = parseString();
      expect(':');
      if (key == "descr") {
        skipSpace();
        if (peek() == '[')
          error("structured dtypes are not supported");
        descr = parseString();
      } else if (key == "fortran_order") {
        fortranOrder = parseBool();
      } else if (key == "shape") {
        shape = parseShape();
      } else {
        error("unexpected key '" + key + "' in header");
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skipSpace();
    if (pos_ != text_.size())
      error("trailing characters after the header dict");
    if (!descr || !fortranOrder || !shape)
      error("header lacks one of 'descr', 'fortran_order', 'shape'");
    if (*fortranOrder)
      error("Fortran-order arrays are not supported (save a C-order array, "
            "e.g. np.ascontiguousarray)");

    NpyHeader header;
    header.shape = *shape;
    for (const SupportedType &type : kSupportedTypes)
      if (*descr == type.descr) {
        header.dtype = type.dtype;
        return header;
      }
    error("unsupported dtype '" + *descr +
          "' (supported: little-endian float32 '<f4', int64 '<i8', int32 "
          "'<i4', bool '|b1')");
  }

private:
  [[noreturn]] void error(const std::string &what) const {
    fail(path_, ": bad .npy header: ", what);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c))
      error(std::string("expected '") + c + "' at header offset " +
            std::to_string(pos_));
  }
  std::string parseString() {
    skipSpace();
    char quote = peek();
    if (quote != '\'' && quote != '"')
      error("expected a quoted string at header offset " +
            std::to_string(pos_));
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos)
      error("unterminated string");
    std::string value = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return value;
  }
  bool parseBool() {
    skipSpace();
    if (text_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (text_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    error("expected True or False for 'fortran_order'");
  }
  Shape parseShape() {
    expect('(');
    Shape shape;
    while (!consume(')')) {
      skipSpace();
      size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
        ++pos_;
      // numpy may write "3L" on Python 2-era files.
      std::string digits = text_.substr(start, pos_ - start);
      if (peek() == 'L')
        ++pos_;
      if (digits.empty() || digits.size() > 18)
        error("bad dimension in 'shape'");
      shape.push_back(std::stoll(digits));
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  const std::string &path_;
  const std::string &text_;
  size_t pos_ = 0;
};

uint32_t readLittleEndian(const unsigned char *p, int bytes) {
  uint32_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = (value << 8) | p[i];
  return value;
}

} // namespace

const char *numpyTypeName(DType dtype) {
  for (const SupportedType &type : kSupportedTypes)
    if (type.dtype == dtype)
      return type.numpyName;
  return safetensorsName(dtype);
}

NpyHeader parseNpyHeader(const std::string &path, const char *bytes,
                         size_t size) {
  const auto *u = reinterpret_cast<const unsigned char *>(bytes);
  if (size < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0)
    fail(path, ": not a .npy file (bad magic)");
  int major = u[6];
  if (major < 1 || major > 3)
    fail(path, ": unsupported .npy format version ", major, ".", int(u[7]));
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lengthBytes;
  if (size < prefix)
    fail(path, ": truncated .npy header");
  size_t headerLength = readLittleEndian(u + 8, static_cast<int>(lengthBytes));
  if (size < prefix + headerLength)
    fail(path, ": truncated .npy header (header length ", headerLength,
         " exceeds the file)");
  std::string text(bytes + prefix, headerLength);
  // Padding and the terminating newline are not part of the dict literal.
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' ||
                           text.back() == '\0'))
    text.pop_back();
  NpyHeader header = HeaderDictParser(path, text).parse();
  header.majorVersion = major;
  header.dataOffset = static_cast<int64_t>(prefix + headerLength);
  try {
    byteCount(header.shape, header.dtype);
  } catch (const RuntimeError &e) {
    fail(path, ": ", e.what());
  }
  return header;
}

NpyArray::NpyArray(std::string label, DType dtype, Shape shape,
                   std::vector<char> data)
    : path_(std::move(label)), dtype_(dtype), shape_(std::move(shape)),
      data_(std::move(data)) {
  int64_t expected = byteCount(shape_, dtype_);
  if (expected != bytes())
    fail(path_, ": ", bytes(), " data bytes for shape ",
         shapeToString(shape_), " of ", numpyTypeName(dtype_), " (expected ",
         expected, ")");
}

NpyArray NpyArray::load(const std::string &path) {
  // Sized by the file system, not by the header: a header claiming more
  // data than the file holds is refused below, never allocated for.
  std::vector<char> file = readRegularFile(path);
  NpyHeader header = parseNpyHeader(path, file.data(), file.size());
  int64_t expected = byteCount(header.shape, header.dtype);
  int64_t available = static_cast<int64_t>(file.size()) - header.dataOffset;
  if (available != expected)
    fail(path, ": file holds ", available, " data bytes but shape ",
         shapeToString(header.shape), " of ", numpyTypeName(header.dtype),
         " needs ", expected);
  // Drop the header in place rather than copying a possibly large data set.
  file.erase(file.begin(), file.begin() + header.dataOffset);
  return NpyArray(path, header.dtype, header.shape, std::move(file));
}

ByteSlice NpyArray::slice(int64_t parts, int64_t index) const {
  if (shape_.empty())
    fail(path_, ": a scalar array cannot be split into micro-batches");
  if (parts <= 0)
    fail(path_, ": cannot split into ", parts, " parts");
  if (shape_[0] % parts != 0)
    fail(path_, ": first dimension ", shape_[0],
         " is not divisible into ", parts, " equal parts");
  if (index < 0 || index >= parts)
    fail(path_, ": part ", index, " out of range [0, ", parts, ")");
  int64_t partBytes = bytes() / parts;
  return ByteSlice{data() + index * partBytes, partBytes};
}

void writeNpy(const std::string &path, DType dtype, const Shape &shape,
              const void *data) {
  const char *descr = nullptr;
  for (const SupportedType &type : kSupportedTypes)
    if (type.dtype == dtype)
      descr = type.descr;
  if (!descr)
    fail(path, ": cannot write dtype ", safetensorsName(dtype), " to .npy");
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : shape)
    dict += std::to_string(dim) + (shape.size() == 1 ? "," : ", ");
  if (shape.size() > 1)
    dict.resize(dict.size() - 2);
  dict += "), }";
  // Pad so that the data starts 64-byte aligned, as numpy does.
  int major = dict.size() + 1 + 10 > 65535 ? 2 : 1;
  size_t prefix = kMagicSize + 2 + (major == 1 ? 2 : 4);
  size_t total = prefix + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(major);
  out += '\0';
  uint32_t length = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    out += static_cast<char>((length >> (8 * i)) & 0xFF);
  out += dict;
  const char *bytes = static_cast<const char *>(data);
  out.append(bytes, bytes + elementCount(shape) * elementSize(dtype));
  writeFileAtomically(path, out.data(), out.size());
}

} // namespace pipecc::rt
