//===- Error.h - Runtime error reporting ------------------------*- C++ -*-===//
//
// Inside the runtime, failures are C++ exceptions (RuntimeError) so that the
// pieces stay unit-testable; every C API entry point converts them into one
// error line on stderr plus MPI_Abort(…, 1) through fatalError(). A rank that
// fails must take the whole job down: a peer blocked in MPI_Recv would
// otherwise hang forever.
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

/// Prints "pipecc-runtime: error: rank R: message" to stderr and ends the
/// whole MPI job with exit code 1 (plain exit(1) when MPI is not running).
[[noreturn]] void fatalError(const std::string &message);

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
