// A small JSON reader for the tools that read our own trace files back (`padlock-emu
// trace summary|diff`). Numbers keep their text, so 64-bit integers compare exactly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace padlock::emu::trace {

struct JsonMember;

struct JsonValue {
  enum class Type : uint8_t { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  std::string text;              // String: the decoded string; Number: the number as written
  std::vector<JsonValue> items;  // Array
  // Object, in file order. Not std::pair<std::string, JsonValue>: clang refuses a pair of
  // the class being defined (the fuzz build, fuzz/CMakeLists.txt).
  std::vector<JsonMember> members;

  const JsonValue* get(std::string_view key) const;                 // Object member or nullptr
  uint64_t u64(std::string_view key, uint64_t fallback = 0) const;  // integer member
  std::string str(std::string_view key) const;                      // string member ("" if absent)
  bool flag(std::string_view key) const;  // boolean member (false if absent)
  // Compact JSON text (members in order), for messages.
  std::string dump() const;

  bool operator==(const JsonValue& o) const;
};

// One member of an object: the key and its value (named as std::pair's).
struct JsonMember {
  std::string first;
  JsonValue second;
  JsonMember(std::string key, JsonValue value) : first(std::move(key)), second(std::move(value)) {}
  bool operator==(const JsonMember& o) const { return first == o.first && second == o.second; }
};

// Parses one JSON text; on error returns false with a reason in `error`.
bool parse_json(std::string_view text, JsonValue& out, std::string& error);

}  // namespace padlock::emu::trace
