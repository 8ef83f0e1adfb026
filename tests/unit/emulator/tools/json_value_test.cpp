// The JSON reader behind `trace summary` and `trace diff`.
#include "emulator/tools/json_value.hpp"

#include <gtest/gtest.h>

namespace padlock::emu::trace {
namespace {

TEST(JsonValue, ParsesTraceLikeObjects) {
  JsonValue v;
  std::string err;
  ASSERT_TRUE(parse_json(
      R"({"type":"insn","seq":18446744073709551615,"pc":"0x080497ea","ok":true,"no":false,)"
      R"("r":null,"diag":["a","b"],"in":{"eax":"0x1"},"f":-1.5e3,"s":"q\"\\\u00e9\n"})",
      v, err))
      << err;
  EXPECT_EQ(v.str("type"), "insn");
  EXPECT_EQ(v.u64("seq"), 18446744073709551615ull);  // exact: numbers keep their text
  EXPECT_TRUE(v.flag("ok"));
  EXPECT_FALSE(v.flag("no"));
  EXPECT_EQ(v.get("r")->type, JsonValue::Type::Null);
  ASSERT_EQ(v.get("diag")->items.size(), 2u);
  EXPECT_EQ(v.get("in")->str("eax"), "0x1");
  EXPECT_EQ(v.get("f")->text, "-1.5e3");
  EXPECT_EQ(v.str("s"), "q\"\\\xc3\xa9\n");
  // dump() gives equal JSON back.
  JsonValue again;
  ASSERT_TRUE(parse_json(v.dump(), again, err)) << err;
  EXPECT_TRUE(again == v);
}

TEST(JsonValue, RejectsMalformedText) {
  JsonValue v;
  std::string err;
  for (const char* bad : {"", "{", "{\"a\":}", "[1,]", "{\"a\":1} x", "tru", "\"abc", "01x",
                          "{\"a\" 1}", "[1 2]", "\"\\q\""}) {
    EXPECT_FALSE(parse_json(bad, v, err)) << bad;
    EXPECT_FALSE(err.empty());
  }
}

}  // namespace
}  // namespace padlock::emu::trace
