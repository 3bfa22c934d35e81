//===- Escape.h - Printing text that comes from a model ---------*- C++ -*-===//
//
// Names, op types, domains and file names come from files a user may not
// have written. Printed raw, a name holding "\npipecc: compiled OK" forges a
// line of output, and bytes that are not UTF-8 garble the terminal. Every
// message that quotes such text passes it through here.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SUPPORT_ESCAPE_H
#define PIPECC_SUPPORT_ESCAPE_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace pipecc::support {

/// `text` made safe to quote in a one-line message, C-style: `\` and quotes
/// become `\\`, `\'`, `\"`; control characters become `\n`, `\t`, `\r` or
/// `\xNN`; bytes that are not UTF-8 become `\xNN`; the Unicode line
/// separators and bidirectional overrides, which can reorder or break a
/// line on a terminal, become `\uNNNN`. Other UTF-8 text stays readable.
std::string escape(llvm::StringRef text);

/// `escape(text)` between single quotes: `'name'`.
std::string quote(llvm::StringRef text);

/// `message` made one line: control characters, invalid UTF-8 and the
/// Unicode line and bidi characters escaped as `escape` does, backslashes
/// and quotes kept. Text already escaped passes through unchanged, so a
/// printer can apply it to every message it prints.
std::string toOneLine(llvm::StringRef message);

/// The offset of the first byte of `text` that is not part of valid UTF-8
/// (or a NUL byte, which ends C strings), if any.
std::optional<size_t> findInvalidNameByte(llvm::StringRef text);

} // namespace pipecc::support

#endif // PIPECC_SUPPORT_ESCAPE_H
