//===- NumbersTest.cpp - The one parser of numeric options ----------------===//
#include "pipecc/Runtime/Numbers.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

using namespace pipecc::rt;

namespace {

std::string integerError(const std::string &text, int64_t min = 1,
                         int64_t max = 100) {
  std::string error;
  EXPECT_FALSE(parseIntegerOption("--stages", text, min, max, error))
      << "accepted '" << text << "'";
  return error;
}

std::string lrError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(parseLearningRateOption("--lr", text, error))
      << "accepted '" << text << "'";
  return error;
}

float lr(const std::string &text) {
  std::string error;
  std::optional<float> value = parseLearningRateOption("--lr", text, error);
  EXPECT_TRUE(value) << text << ": " << error;
  return value.value_or(-1);
}

TEST(Numbers, IntegersInRange) {
  std::string error;
  EXPECT_EQ(parseIntegerOption("--stages", "4", 1, 100, error), 4);
  EXPECT_EQ(parseIntegerOption("--stages", "+4", 1, 100, error), 4);
  EXPECT_EQ(parseIntegerOption("--stages", "007", 1, 100, error), 7);
  EXPECT_EQ(parseIntegerOption("--steps", "9223372036854775807", 0,
                               std::numeric_limits<int64_t>::max(), error),
            std::numeric_limits<int64_t>::max());
}

TEST(Numbers, IntegersRefused) {
  EXPECT_EQ(integerError("abc"), "--stages 'abc': expected a decimal integer");
  for (const char *text : {"", " 4", "4 ", "4x", "0x10", "4.0", "1e2", "+", "-",
                           "--4", "inf", "nan", "٣"})
    EXPECT_NE(integerError(text).find("expected a decimal integer"),
              std::string::npos)
        << text;
  EXPECT_EQ(integerError("0"), "--stages '0': expected an integer from 1 to "
                               "100");
  EXPECT_EQ(integerError("-3"), "--stages '-3': expected an integer from 1 "
                                "to 100");
  EXPECT_NE(integerError("101").find("from 1 to 100"), std::string::npos);
  // Beyond int64: a range error, not a wrapped value.
  EXPECT_NE(integerError("99999999999999999999", 0,
                         std::numeric_limits<int64_t>::max())
                .find("expected an integer from 0 to 9223372036854775807"),
            std::string::npos);
}

TEST(Numbers, LearningRateIsTheFloat32TheRanksUse) {
  EXPECT_EQ(lr("0.1"), 0.1f);
  EXPECT_EQ(lr("1e-3"), 1e-3f);
  EXPECT_EQ(lr(".5"), 0.5f);
  EXPECT_EQ(lr("5."), 5.0f);
  EXPECT_EQ(lr("+2E+1"), 20.0f);
  EXPECT_EQ(lr("3.4028234e38"), FLT_MAX);
  EXPECT_EQ(lr("1.1754944e-38"), FLT_MIN);
}

TEST(Numbers, LearningRateRefused) {
  EXPECT_EQ(lrError("0"), "--lr '0': the learning rate must be positive");
  for (const char *text : {"-0", "0.0", "0e10", "-1", "-1e-3", "-1e39"})
    EXPECT_NE(lrError(text).find("must be positive"), std::string::npos)
        << text;
  for (const char *text :
       {"0x10", "inf", "-inf", "nan", "", " 1", "1 ", "1e", "1e+", ".", "e5",
        "1,5", "0.1f", "1..2", "infinity", "0x1p-3"})
    EXPECT_NE(lrError(text).find("expected a decimal number"),
              std::string::npos)
        << text;
  EXPECT_EQ(lrError("1e39"),
            "--lr '1e39': too large for float32 (at most 3.40282347e+38)");
  EXPECT_NE(lrError("3.5e38").find("too large"), std::string::npos);
  // Underflow to zero and to a denormal alike: a denormal rate is not what
  // the user asked for either.
  for (const char *text : {"1e-300", "1e-50", "1e-39", "1e-45"})
    EXPECT_NE(lrError(text).find("too small for float32"), std::string::npos)
        << text;
}

TEST(Numbers, ValidLearningRates) {
  EXPECT_TRUE(isValidLearningRate(0.1f));
  EXPECT_TRUE(isValidLearningRate(FLT_MIN));
  EXPECT_FALSE(isValidLearningRate(0.0f));
  EXPECT_FALSE(isValidLearningRate(-0.0f));
  EXPECT_FALSE(isValidLearningRate(-1.0f));
  EXPECT_FALSE(isValidLearningRate(FLT_MIN / 2));
  EXPECT_FALSE(isValidLearningRate(std::numeric_limits<float>::infinity()));
  EXPECT_FALSE(isValidLearningRate(std::numeric_limits<float>::quiet_NaN()));
}

} // namespace
