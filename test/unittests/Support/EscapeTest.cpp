//===- EscapeTest.cpp - Text from a model in messages ---------------------===//

#include "pipecc/Support/Escape.h"

#include <gtest/gtest.h>

using namespace pipecc::support;

namespace {

TEST(EscapeTest, ForgedLinesStayOnOneLine) {
  EXPECT_EQ(escape("evil\npipecc: compiled OK"), "evil\\npipecc: compiled OK");
  EXPECT_EQ(escape("a\r\tb"), "a\\r\\tb");
  EXPECT_EQ(escape("\x1b[2J\x7f"), "\\x1B[2J\\x7F");
  EXPECT_EQ(escape(std::string("w\0x", 3)), "w\\x00x");
}

TEST(EscapeTest, QuotesAndBackslashes) {
  EXPECT_EQ(escape("it's \"x\" \\"), "it\\'s \\\"x\\\" \\\\");
  EXPECT_EQ(quote("a'b"), "'a\\'b'");
}

TEST(EscapeTest, Utf8StaysReadableInvalidBytesDoNot) {
  EXPECT_EQ(escape("caf\xc3\xa9 \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(escape("w\xff"), "w\\xFF");
  EXPECT_EQ(escape("x\xc3("), "x\\xC3(");               // truncated sequence
  EXPECT_EQ(escape("\xed\xa0\x80"), "\\xED\\xA0\\x80"); // a surrogate
  EXPECT_EQ(escape("\xc0\xaf"), "\\xC0\\xAF");          // overlong '/'
}

TEST(EscapeTest, LineAndBidiControlsAreEscaped) {
  // Narrow literals are UTF-8: "\u2028" is LINE SEPARATOR's three bytes.
  EXPECT_EQ(escape("a\u2028b"), "a\\u2028b");
  EXPECT_EQ(escape("\u202Etxt"), "\\u202Etxt"); // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(escape("\xc2\x85"), "\\u0085");     // NEL
}

TEST(EscapeTest, OneLineKeepsQuotesAndIsIdempotent) {
  EXPECT_EQ(toOneLine("node 'a'\nb"), "node 'a'\\nb");
  std::string escaped = quote("x\n\xff'\\");
  EXPECT_EQ(toOneLine(escaped), escaped);
}

TEST(EscapeTest, InvalidNameBytes) {
  EXPECT_EQ(findInvalidNameByte("w\xc3\xa9\n\"\\"), std::nullopt);
  EXPECT_EQ(findInvalidNameByte("w\xff"), std::optional<size_t>(1));
  EXPECT_EQ(findInvalidNameByte(std::string("ab\0", 3)),
            std::optional<size_t>(2));
  EXPECT_EQ(findInvalidNameByte("mm\xed\xa0\x80"), std::optional<size_t>(2));
}

} // namespace
