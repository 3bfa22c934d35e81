//===- Json.h - Minimal JSON value, parser and writer -----------*- C++ -*-===//
//
// Just enough JSON for safetensors headers: objects keep their key order,
// integers are kept exactly as int64 (data offsets exceed a double's 53 bits
// only for > 8 PiB files, but exactness is cheap), other numbers as double.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_JSON_H
#define PIPECC_RUNTIME_JSON_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pipecc::rt {

class JsonValue {
public:
  enum class Kind { Null, Bool, Integer, Number, String, Array, Object };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;
  static JsonValue boolean(bool value);
  static JsonValue integer(int64_t value);
  static JsonValue number(double value);
  static JsonValue string(std::string value);
  static JsonValue array(std::vector<JsonValue> elements = {});
  static JsonValue object(std::vector<Member> members = {});

  Kind kind() const { return kind_; }
  bool isObject() const { return kind_ == Kind::Object; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isString() const { return kind_ == Kind::String; }
  bool isInteger() const { return kind_ == Kind::Integer; }

  /// Accessors throw RuntimeError when the kind does not match.
  bool asBool() const;
  int64_t asInteger() const;
  double asNumber() const; // Integer or Number
  const std::string &asString() const;
  const std::vector<JsonValue> &asArray() const;
  const std::vector<Member> &asObject() const;

  /// Object member by key, nullptr when absent (or not an object).
  const JsonValue *find(const std::string &key) const;
  /// Appends to an array / object.
  void push(JsonValue element);
  void set(std::string key, JsonValue value);

  /// Compact serialization.
  std::string serialize() const;
  /// Parses a whole document; trailing non-space text is an error. Errors
  /// throw RuntimeError with the byte offset.
  static JsonValue parse(const std::string &text);

private:
  void serializeTo(std::string &out) const;

  Kind kind_ = Kind::Null;
  bool bool_ = false;
  int64_t integer_ = 0;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> elements_;
  std::vector<Member> members_;
};

const char *jsonKindName(JsonValue::Kind kind);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_JSON_H
