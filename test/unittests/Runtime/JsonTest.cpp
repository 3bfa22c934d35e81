//===- JsonTest.cpp -------------------------------------------------------===//
#include "pipecc/Runtime/Json.h"
#include "TestUtil.h"

using namespace pipecc::rt;

namespace {

TEST(Json, ParsesSafetensorsStyleHeader) {
  JsonValue value = JsonValue::parse(
      R"( {"__metadata__": {"format": "pt"},
           "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
           "big": {"data_offsets": [9007199254740993, -1], "x": 1.5e2,
                   "t": true, "n": null}} )");
  ASSERT_TRUE(value.isObject());
  ASSERT_EQ(value.asObject().size(), 3u);
  EXPECT_EQ(value.asObject()[0].first, "__metadata__"); // order kept
  EXPECT_EQ(value.find("__metadata__")->find("format")->asString(), "pt");
  const JsonValue *w = value.find("w");
  EXPECT_EQ(w->find("shape")->asArray()[1].asInteger(), 3);
  const JsonValue *big = value.find("big");
  // Integers beyond 2^53 stay exact.
  EXPECT_EQ(big->find("data_offsets")->asArray()[0].asInteger(),
            9007199254740993LL);
  EXPECT_EQ(big->find("data_offsets")->asArray()[1].asInteger(), -1);
  EXPECT_DOUBLE_EQ(big->find("x")->asNumber(), 150.0);
  EXPECT_TRUE(big->find("t")->asBool());
  EXPECT_EQ(big->find("n")->kind(), JsonValue::Kind::Null);
  EXPECT_EQ(value.find("absent"), nullptr);
}

TEST(Json, RoundTripsStringsWithEscapes) {
  std::string tricky = "a\"b\\c\nd\te\x01 \xc3\xa9";
  JsonValue value = JsonValue::object({{tricky, JsonValue::string(tricky)}});
  std::string text = value.serialize();
  JsonValue back = JsonValue::parse(text);
  EXPECT_EQ(back.asObject()[0].first, tricky);
  EXPECT_EQ(back.asObject()[0].second.asString(), tricky);
  EXPECT_EQ(JsonValue::parse(R"("\u00e9\ud83d\ude00\/")").asString(),
            "\xc3\xa9\xf0\x9f\x98\x80/");
}

TEST(Json, SerializesCompactly) {
  JsonValue value = JsonValue::object();
  value.set("a", JsonValue::array({JsonValue::integer(1),
                                   JsonValue::integer(-2)}));
  value.set("b", JsonValue::boolean(false));
  value.set("a", JsonValue::string("x")); // replaces, keeps position
  EXPECT_EQ(value.serialize(), R"({"a":"x","b":false})");
}

TEST(Json, ReportsErrorsWithOffset) {
  EXPECT_RUNTIME_ERROR(JsonValue::parse("{\"a\": 1,}"), "expected a string key",
                       "at byte");
  EXPECT_RUNTIME_ERROR(JsonValue::parse("{\"a\": 1} x"), "trailing");
  EXPECT_RUNTIME_ERROR(JsonValue::parse("{\"a\": 1, \"a\": 2}"),
                       "duplicate key \"a\"");
  EXPECT_RUNTIME_ERROR(JsonValue::parse("\"abc"), "unterminated string");
  EXPECT_RUNTIME_ERROR(JsonValue::parse("[1, 2"), "expected ']'");
  EXPECT_RUNTIME_ERROR(JsonValue::parse("99999999999999999999"),
                       "out of range");
  EXPECT_RUNTIME_ERROR(JsonValue::parse(std::string(1000, '[')),
                       "nesting too deep");
  EXPECT_RUNTIME_ERROR(JsonValue::parse("tru"), "unexpected character");
  EXPECT_RUNTIME_ERROR(JsonValue::parse("1").asString(), "expected string");
}

} // namespace
