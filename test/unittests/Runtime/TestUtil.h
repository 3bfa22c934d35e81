//===- TestUtil.h - Helpers shared by the runtime unit tests ----*- C++ -*-===//
#ifndef PIPECC_RUNTIME_TESTS_TESTUTIL_H
#define PIPECC_RUNTIME_TESTS_TESTUTIL_H

#include "pipecc/Runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace pipecc::rt::testing {

/// A fresh directory under $TMPDIR, removed at destruction.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base ? base : "/tmp") + "/pipecc-runtime-test-XXXXXX";
    if (!mkdtemp(pattern.data()))
      throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

} // namespace pipecc::rt::testing

/// Expects `statement` to throw RuntimeError whose message contains each of
/// the following strings.
#define EXPECT_RUNTIME_ERROR(statement, ...)                                   \
  do {                                                                         \
    try {                                                                      \
      statement;                                                               \
      ADD_FAILURE() << "expected a RuntimeError from " #statement;             \
    } catch (const ::pipecc::rt::RuntimeError &error) {                        \
      for (const char *part : {__VA_ARGS__})                                   \
        EXPECT_NE(std::string(error.what()).find(part), std::string::npos)     \
            << "message \"" << error.what() << "\" lacks \"" << part << "\"";  \
    }                                                                          \
  } while (0)

#endif // PIPECC_RUNTIME_TESTS_TESTUTIL_H
