//===- Json.cpp -----------------------------------------------------------===//
#include "pipecc/Runtime/Json.h"
#include "pipecc/Runtime/Error.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace pipecc::rt {

const char *jsonKindName(JsonValue::Kind kind) {
  switch (kind) {
  case JsonValue::Kind::Null: return "null";
  case JsonValue::Kind::Bool: return "boolean";
  case JsonValue::Kind::Integer: return "integer";
  case JsonValue::Kind::Number: return "number";
  case JsonValue::Kind::String: return "string";
  case JsonValue::Kind::Array: return "array";
  case JsonValue::Kind::Object: return "object";
  }
  return "?";
}

JsonValue JsonValue::boolean(bool value) {
  JsonValue v; v.kind_ = Kind::Bool; v.bool_ = value; return v;
}
JsonValue JsonValue::integer(int64_t value) {
  JsonValue v; v.kind_ = Kind::Integer; v.integer_ = value; return v;
}
JsonValue JsonValue::number(double value) {
  JsonValue v; v.kind_ = Kind::Number; v.number_ = value; return v;
}
JsonValue JsonValue::string(std::string value) {
  JsonValue v; v.kind_ = Kind::String; v.string_ = std::move(value); return v;
}
JsonValue JsonValue::array(std::vector<JsonValue> elements) {
  JsonValue v; v.kind_ = Kind::Array; v.elements_ = std::move(elements); return v;
}
JsonValue JsonValue::object(std::vector<Member> members) {
  JsonValue v; v.kind_ = Kind::Object; v.members_ = std::move(members); return v;
}

static void expectKind(const JsonValue &v, JsonValue::Kind kind) {
  if (v.kind() != kind)
    fail("JSON: expected ", jsonKindName(kind), ", got ", jsonKindName(v.kind()));
}

bool JsonValue::asBool() const { expectKind(*this, Kind::Bool); return bool_; }
int64_t JsonValue::asInteger() const {
  expectKind(*this, Kind::Integer);
  return integer_;
}
double JsonValue::asNumber() const {
  if (kind_ == Kind::Integer)
    return static_cast<double>(integer_);
  expectKind(*this, Kind::Number);
  return number_;
}
const std::string &JsonValue::asString() const {
  expectKind(*this, Kind::String);
  return string_;
}
const std::vector<JsonValue> &JsonValue::asArray() const {
  expectKind(*this, Kind::Array);
  return elements_;
}
const std::vector<JsonValue::Member> &JsonValue::asObject() const {
  expectKind(*this, Kind::Object);
  return members_;
}

const JsonValue *JsonValue::find(const std::string &key) const {
  if (kind_ != Kind::Object)
    return nullptr;
  for (const Member &member : members_)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

void JsonValue::push(JsonValue element) {
  expectKind(*this, Kind::Array);
  elements_.push_back(std::move(element));
}

void JsonValue::set(std::string key, JsonValue value) {
  expectKind(*this, Kind::Object);
  for (Member &member : members_)
    if (member.first == key) {
      member.second = std::move(value);
      return;
    }
  members_.emplace_back(std::move(key), std::move(value));
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

static void writeString(const std::string &s, std::string &out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c); // UTF-8 passes through unchanged
      }
    }
  }
  out += '"';
}

void JsonValue::serializeTo(std::string &out) const {
  switch (kind_) {
  case Kind::Null: out += "null"; break;
  case Kind::Bool: out += bool_ ? "true" : "false"; break;
  case Kind::Integer: out += std::to_string(integer_); break;
  case Kind::Number: {
    if (!std::isfinite(number_))
      fail("JSON: cannot serialize non-finite number");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", number_);
    out += buf;
    break;
  }
  case Kind::String: writeString(string_, out); break;
  case Kind::Array:
    out += '[';
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (i) out += ',';
      elements_[i].serializeTo(out);
    }
    out += ']';
    break;
  case Kind::Object:
    out += '{';
    for (size_t i = 0; i < members_.size(); ++i) {
      if (i) out += ',';
      writeString(members_[i].first, out);
      out += ':';
      members_[i].second.serializeTo(out);
    }
    out += '}';
    break;
  }
}

std::string JsonValue::serialize() const {
  std::string out;
  serializeTo(out);
  return out;
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {
class Parser {
public:
  explicit Parser(const std::string &text) : text_(text) {}

  JsonValue parseDocument() {
    JsonValue value = parseValue(0);
    skipSpace();
    if (pos_ != text_.size())
      error("trailing characters after the JSON value");
    return value;
  }

private:
  // Deep nesting only comes from hostile input; bound the recursion.
  static constexpr int kMaxDepth = 64;

  [[noreturn]] void error(const std::string &what) const {
    fail("JSON: ", what, " at byte ", pos_);
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c))
      error(std::string("expected '") + c + "'");
  }
  bool consumeWord(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (text_.compare(pos_, n, word) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }

  JsonValue parseValue(int depth) {
    if (depth > kMaxDepth)
      error("nesting too deep");
    skipSpace();
    if (pos_ >= text_.size())
      error("unexpected end of input");
    char c = text_[pos_];
    if (c == '{')
      return parseObject(depth);
    if (c == '[')
      return parseArray(depth);
    if (c == '"')
      return JsonValue::string(parseString());
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber();
    if (consumeWord("true"))
      return JsonValue::boolean(true);
    if (consumeWord("false"))
      return JsonValue::boolean(false);
    if (consumeWord("null"))
      return JsonValue();
    error(std::string("unexpected character '") + c + "'");
  }

  JsonValue parseObject(int depth) {
    expect('{');
    JsonValue object = JsonValue::object();
    if (consume('}'))
      return object;
    do {
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"')
        error("expected a string key");
      std::string key = parseString();
      if (object.find(key))
        error("duplicate key \"" + key + "\"");
      expect(':');
      object.set(std::move(key), parseValue(depth + 1));
    } while (consume(','));
    expect('}');
    return object;
  }

  JsonValue parseArray(int depth) {
    expect('[');
    JsonValue array = JsonValue::array();
    if (consume(']'))
      return array;
    do {
      array.push(parseValue(depth + 1));
    } while (consume(','));
    expect(']');
    return array;
  }

  unsigned parseHex4() {
    if (pos_ + 4 > text_.size())
      error("truncated \\u escape");
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      value <<= 4;
      if (c >= '0' && c <= '9') value |= c - '0';
      else if (c >= 'a' && c <= 'f') value |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') value |= c - 'A' + 10;
      else error("bad hex digit in \\u escape");
    }
    return value;
  }

  static void appendUtf8(unsigned cp, std::string &out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string parseString() {
    ++pos_; // opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size())
        error("unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        error("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size())
        error("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp = parseHex4();
        if (cp >= 0xD800 && cp < 0xDC00) { // surrogate pair
          if (!consumeWord("\\u"))
            error("unpaired surrogate in \\u escape");
          unsigned low = parseHex4();
          if (low < 0xDC00 || low >= 0xE000)
            error("bad low surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(cp, out);
        break;
      }
      default:
        error(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  JsonValue parseNumber() {
    size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    bool isInteger = true;
    auto digits = [&] {
      size_t first = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
        ++pos_;
      if (pos_ == first)
        error("expected digits in number");
    };
    digits();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      isInteger = false;
      ++pos_;
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      isInteger = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      digits();
    }
    std::string token = text_.substr(start, pos_ - start);
    errno = 0;
    if (isInteger) {
      long long value = std::strtoll(token.c_str(), nullptr, 10);
      if (errno == ERANGE)
        error("integer out of range: " + token);
      return JsonValue::integer(value);
    }
    return JsonValue::number(std::strtod(token.c_str(), nullptr));
  }

  const std::string &text_;
  size_t pos_ = 0;
};
} // namespace

JsonValue JsonValue::parse(const std::string &text) {
  return Parser(text).parseDocument();
}

} // namespace pipecc::rt
