//===- Error.h - Runtime error reporting ------------------------*- C++ -*-===//
//
// Inside the runtime, failures are C++ exceptions (RuntimeError) so that the
// pieces stay unit-testable; every C API entry point converts them into one
// error line on stderr plus the end of the job through fatalError(). A rank
// that fails must take the whole job down: a peer blocked in a receive would
// otherwise hang forever. The transport says how (MPI_Abort under MPI; the
// socket transport's peers see the connection close, and out/launch stops
// the others).
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_ERROR_H
#define PIPECC_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace pipecc::rt {

class RuntimeError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

inline std::string toMessagePart(const std::string &s) { return s; }
inline std::string toMessagePart(const char *s) { return s ? s : "(null)"; }
inline std::string toMessagePart(char c) { return std::string(1, c); }
template <typename T>
auto toMessagePart(const T &value) -> decltype(std::to_string(value)) {
  return std::to_string(value);
}

/// Throws RuntimeError built from the concatenation of `parts`.
template <typename... Parts>
[[noreturn]] void fail(const Parts &...parts) {
  std::string message;
  ((message += toMessagePart(parts)), ...);
  throw RuntimeError(message);
}

/// Prints "pipecc-runtime: error: rank R: message" to stderr ("rank R: "
/// only once a transport has set the rank), calls the abort handler, then
/// exits with code 1.
[[noreturn]] void fatalError(const std::string &message);

/// The rank named in error lines; -1 (the default) names none.
void setErrorRank(int rank);
/// Called by fatalError after printing, to end the whole job (MPI_Abort);
/// nullptr (the default) just exits this process.
using AbortHandler = void (*)(int exitCode);
void setAbortHandler(AbortHandler handler);

/// Runs `body`; any exception becomes fatalError(). Used at the C boundary.
template <typename Body> auto guardCall(Body &&body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception &e) {
    fatalError(e.what());
  }
}

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_ERROR_H
