//===- GradCheckTest.cpp - One GoogleTest per gradient-check case ---------===//
//
// `GradCheckTests --fd-table` prints the per-op table of checked cases
// instead of running them (scripts/update-fd-table.py puts it into
// docs/testing.md; test/Docs/fd-table.test keeps the two in sync).
//
//===----------------------------------------------------------------------===//

#include "GradCheck.h"

#include "gtest/gtest.h"

#include <cstring>
#include <iostream>
#include <map>

using namespace pipecc::gradcheck;

namespace {

class GradCheckTest : public ::testing::TestWithParam<size_t> {};

TEST_P(GradCheckTest, MatchesCentralDifferences) {
  const Case &c = allCases()[GetParam()];
  SCOPED_TRACE(expandBody(c));
  std::string failure = checkCase(c, /*seed=*/GetParam() + 1);
  EXPECT_TRUE(failure.empty()) << failure;
}

/// `<op>_<n>`: the op's name, then the case's number among that op's cases.
std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  std::map<std::string, int> seen;
  for (const Case &c : allCases()) {
    std::string name;
    for (char ch : c.op)
      name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    names.push_back(name + "_" + std::to_string(seen[c.op]++));
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(
    Ops, GradCheckTest, ::testing::Range<size_t>(0, allCases().size()),
    [](const ::testing::TestParamInfo<size_t> &info) {
      static const std::vector<std::string> names = caseNames();
      return names[info.param];
    });

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--fd-table") == 0) {
      std::cout << perOpTable(allCases());
      return 0;
    }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
