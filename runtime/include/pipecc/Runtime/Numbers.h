//===- Numbers.h - The one parser of numeric options ------------*- C++ -*-===//
//
// Every number on a command line, the compiler's (--stages, --microbatches,
// --lr, ...) and the rank executables' (--steps, --lr), is read here, so that
// both accept exactly the same texts and refuse the others with the same
// message. Plain C++ without exceptions, MPI or LLVM: pipecc links it as
// well as the runtime.
//
// Accepted: decimal only. An integer is [+-]?[0-9]+; a real number is
// [+-]?([0-9]+(.[0-9]*)?|.[0-9]+)([eE][+-]?[0-9]+)?. No hexadecimal, no
// inf or nan, no spaces or other characters before or after.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_NUMBERS_H
#define PIPECC_RUNTIME_NUMBERS_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pipecc::rt {

/// The decimal integer `text` in [min, max]. Otherwise nullopt, and `error`
/// says why in one line naming `option`:
///   --stages 'abc': expected a decimal integer
///   --stages '0': expected an integer from 1 to 2147483647
std::optional<int64_t> parseIntegerOption(std::string_view option,
                                          std::string_view text, int64_t min,
                                          int64_t max, std::string &error);

/// A learning rate: a decimal number whose float32 value (what the ranks
/// compute with) is positive, finite and normal, i.e. in [FLT_MIN, FLT_MAX]
/// after rounding. Returns that float32 value; otherwise nullopt and a
/// one-line `error` naming `option`.
std::optional<float> parseLearningRateOption(std::string_view option,
                                             std::string_view text,
                                             std::string &error);

/// Whether `lr` is a learning rate parseLearningRateOption could return.
bool isValidLearningRate(float lr);

/// A non-negative decimal number whose double value is finite (seconds,
/// limits); otherwise nullopt and a one-line `error` naming `option`.
std::optional<double> parseNonNegativeRealOption(std::string_view option,
                                                 std::string_view text,
                                                 std::string &error);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_NUMBERS_H
