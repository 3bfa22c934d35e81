//===- Numbers.cpp --------------------------------------------------------===//
#include "pipecc/Runtime/Numbers.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace pipecc::rt {

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// Skips [0-9]* at `pos`; returns how many digits there were.
size_t skipDigits(std::string_view text, size_t &pos) {
  size_t start = pos;
  while (pos < text.size() && isDigit(text[pos]))
    ++pos;
  return pos - start;
}

bool isDecimalInteger(std::string_view text) {
  size_t pos = 0;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
    ++pos;
  return skipDigits(text, pos) > 0 && pos == text.size();
}

bool isDecimalReal(std::string_view text) {
  size_t pos = 0;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
    ++pos;
  size_t digits = skipDigits(text, pos);
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    digits += skipDigits(text, pos);
  }
  if (digits == 0)
    return false;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
      ++pos;
    if (skipDigits(text, pos) == 0)
      return false;
  }
  return pos == text.size();
}

std::string prefix(std::string_view option, std::string_view text) {
  return std::string(option) + " '" + std::string(text) + "': ";
}
} // namespace

std::optional<int64_t> parseIntegerOption(std::string_view option,
                                          std::string_view text, int64_t min,
                                          int64_t max, std::string &error) {
  if (!isDecimalInteger(text)) {
    error = prefix(option, text) + "expected a decimal integer";
    return std::nullopt;
  }
  std::string copy(text);
  errno = 0;
  long long value = std::strtoll(copy.c_str(), nullptr, 10);
  if (errno == ERANGE || value < min || value > max) {
    error = prefix(option, text) + "expected an integer from " +
            std::to_string(min) + " to " + std::to_string(max);
    return std::nullopt;
  }
  return static_cast<int64_t>(value);
}

bool isValidLearningRate(float lr) {
  return std::fpclassify(lr) == FP_NORMAL && lr > 0;
}

std::optional<float> parseLearningRateOption(std::string_view option,
                                             std::string_view text,
                                             std::string &error) {
  if (!isDecimalReal(text)) {
    error = prefix(option, text) + "expected a decimal number";
    return std::nullopt;
  }
  // Zero or negative is read from the text: "-0" and "0e5" are no
  // learning rates whatever their rounding.
  bool negative = text[0] == '-';
  bool zero =
      text.substr(0, text.find_first_of("eE")).find_first_of("123456789") ==
      std::string_view::npos;
  if (negative || zero) {
    error = prefix(option, text) + "the learning rate must be positive";
    return std::nullopt;
  }
  // strtof rounds the decimal text to float32 directly (no double rounding
  // through a double); the grammar check leaves it nothing to skip.
  std::string copy(text);
  float value = std::strtof(copy.c_str(), nullptr);
  if (std::isinf(value)) {
    error =
        prefix(option, text) + "too large for float32 (at most 3.40282347e+38)";
    return std::nullopt;
  }
  if (!isValidLearningRate(value)) {
    error = prefix(option, text) + "too small for float32 (at least "
                                   "1.17549435e-38, the smallest normal)";
    return std::nullopt;
  }
  return value;
}

std::optional<double> parseNonNegativeRealOption(std::string_view option,
                                                 std::string_view text,
                                                 std::string &error) {
  if (!isDecimalReal(text)) {
    error = prefix(option, text) + "expected a decimal number";
    return std::nullopt;
  }
  std::string copy(text);
  double value = std::strtod(copy.c_str(), nullptr);
  if (text[0] == '-' && value != 0) {
    error = prefix(option, text) + "must not be negative";
    return std::nullopt;
  }
  if (std::isinf(value)) {
    error = prefix(option, text) + "too large (at most 1.79769313e+308)";
    return std::nullopt;
  }
  return value == 0 ? 0.0 : value; // no -0
}

} // namespace pipecc::rt
