//===- Escape.cpp - Printing text that comes from a model -----------------===//

#include "pipecc/Support/Escape.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace pipecc::support;

/// Code points that a terminal may treat as a line break or that reorder
/// the text around them (U+202E shows the rest of a line backwards).
static bool isLineOrBidiControl(llvm::UTF32 codePoint) {
  return (codePoint >= 0x80 && codePoint <= 0x9f) || // C1, including NEL
         codePoint == 0x2028 || codePoint == 0x2029 || codePoint == 0x061c ||
         codePoint == 0x200e || codePoint == 0x200f ||
         (codePoint >= 0x202a && codePoint <= 0x202e) ||
         (codePoint >= 0x2066 && codePoint <= 0x2069);
}

static void escapeInto(llvm::StringRef text, bool escapeQuotes,
                       llvm::raw_ostream &os) {
  auto hexByte = [&](unsigned char c) {
    os << "\\x" << llvm::format_hex_no_prefix(c, 2, /*Upper=*/true);
  };
  const auto *at = reinterpret_cast<const llvm::UTF8 *>(text.begin());
  const auto *end = reinterpret_cast<const llvm::UTF8 *>(text.end());
  while (at < end) {
    unsigned char c = *at;
    if (c < 0x80) {
      ++at;
      switch (c) {
      case '\n':
        os << "\\n";
        continue;
      case '\t':
        os << "\\t";
        continue;
      case '\r':
        os << "\\r";
        continue;
      case '\\':
      case '\'':
      case '"':
        if (escapeQuotes)
          os << '\\';
        os << static_cast<char>(c);
        continue;
      default:
        if (c < 0x20 || c == 0x7f)
          hexByte(c);
        else
          os << static_cast<char>(c);
        continue;
      }
    }
    // A multi-byte sequence: kept when it is valid UTF-8 and harmless.
    const llvm::UTF8 *start = at;
    llvm::UTF32 codePoint;
    if (llvm::convertUTF8Sequence(&at, end, &codePoint,
                                  llvm::strictConversion) !=
        llvm::conversionOK) {
      at = start + 1;
      hexByte(c);
      continue;
    }
    if (isLineOrBidiControl(codePoint))
      os << "\\u" << llvm::format_hex_no_prefix(codePoint, 4, /*Upper=*/true);
    else
      os.write(reinterpret_cast<const char *>(start), at - start);
  }
}

std::string pipecc::support::escape(llvm::StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  escapeInto(text, /*escapeQuotes=*/true, os);
  return out;
}

std::string pipecc::support::quote(llvm::StringRef text) {
  return "'" + escape(text) + "'";
}

std::string pipecc::support::toOneLine(llvm::StringRef message) {
  std::string out;
  llvm::raw_string_ostream os(out);
  escapeInto(message, /*escapeQuotes=*/false, os);
  return out;
}

std::optional<size_t>
pipecc::support::findInvalidNameByte(llvm::StringRef text) {
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.begin());
  const auto *end = reinterpret_cast<const llvm::UTF8 *>(text.end());
  for (const llvm::UTF8 *at = begin; at < end;) {
    if (*at == 0)
      return at - begin;
    llvm::UTF32 codePoint;
    const llvm::UTF8 *start = at;
    if (llvm::convertUTF8Sequence(&at, end, &codePoint,
                                  llvm::strictConversion) != llvm::conversionOK)
      return start - begin;
  }
  return std::nullopt;
}
