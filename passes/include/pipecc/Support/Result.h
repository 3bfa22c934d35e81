//===- Result.h - Error reporting without exceptions -----------*- C++ -*-===//
//
// pipecc's plain C++ libraries (partitioner, scheduling) are linked into
// MLIR passes built with -fno-exceptions, so failures travel as values: a
// Status for "did it work", a Result<T> for "here is the answer or why there
// is none".
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SUPPORT_RESULT_H
#define PIPECC_SUPPORT_RESULT_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace pipecc::support {

struct Diagnostic {
  std::string message;
};

/// Success, or a diagnostic saying what is wrong.
class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  static Status failure(std::string message) {
    Status status;
    status.diagnostic = Diagnostic{std::move(message)};
    return status;
  }
  bool ok() const { return !diagnostic.has_value(); }
  explicit operator bool() const { return ok(); }
  /// Empty on success.
  const std::string &message() const {
    static const std::string empty;
    return diagnostic ? diagnostic->message : empty;
  }

private:
  std::optional<Diagnostic> diagnostic;
};

/// A value of type T, or the diagnostic explaining why there is none.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value(std::move(value)) {}
  Result(Diagnostic diagnostic) : diagnostic(std::move(diagnostic)) {}
  Result(Status status) : diagnostic(Diagnostic{status.message()}) {
    assert(!status.ok() && "a Result built from a Status must be a failure");
  }

  bool ok() const { return value.has_value(); }
  explicit operator bool() const { return ok(); }
  const std::string &message() const { return diagnostic.message; }

  const T &operator*() const { assert(ok()); return *value; }
  T &operator*() { assert(ok()); return *value; }
  const T *operator->() const { assert(ok()); return &*value; }
  T *operator->() { assert(ok()); return &*value; }

private:
  std::optional<T> value;
  Diagnostic diagnostic;
};

} // namespace pipecc::support

#endif // PIPECC_SUPPORT_RESULT_H
