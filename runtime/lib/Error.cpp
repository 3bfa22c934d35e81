//===- Error.cpp ----------------------------------------------------------===//
#include "pipecc/Runtime/Error.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace pipecc::rt {

namespace {
int errorRank = -1;
AbortHandler abortHandler = nullptr;

/// The message as one line: names in it come from the model (tensor and
/// input names may hold newlines), and one error must not forge another.
std::string oneLine(const std::string &message) {
  static const char hex[] = "0123456789abcdef";
  std::string line;
  for (unsigned char c : message) {
    if (c < 0x20 || c == 0x7f) {
      line += "\\x";
      line += hex[c >> 4];
      line += hex[c & 15];
    } else {
      line += static_cast<char>(c);
    }
  }
  return line;
}
} // namespace

void setErrorRank(int rank) { errorRank = rank; }
void setAbortHandler(AbortHandler handler) { abortHandler = handler; }

void fatalError(const std::string &message) {
  std::fflush(stdout);
  std::string line = oneLine(message);
  if (errorRank >= 0)
    std::fprintf(stderr, "pipecc-runtime: error: rank %d: %s\n", errorRank,
                 line.c_str());
  else
    std::fprintf(stderr, "pipecc-runtime: error: %s\n", line.c_str());
  std::fflush(stderr);
  if (abortHandler)
    abortHandler(1);
  // _exit, not exit: a transport's progress thread may still be running,
  // and static destructors must not race with it. Output is flushed above.
  _exit(1);
}

} // namespace pipecc::rt
