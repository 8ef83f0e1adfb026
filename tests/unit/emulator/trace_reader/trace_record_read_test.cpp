// A trace line read back (emulator/trace_reader/trace_file.hpp): nlohmann-json parses it; these
// check what the tools rely on: exact 64-bit integers, members in file order, the member
// accessors' defaults, the depth limit and one-line reasons for malformed lines.
#include <gtest/gtest.h>

#include <string>

#include "emulator/trace_reader/trace_file.hpp"

namespace padlock::emu::trace {
namespace {

TEST(TraceRecordRead, KeepsWhatTheToolsRead) {
  Record r;
  std::string err;
  ASSERT_TRUE(parse_record(
      R"({"type":"insn","seq":18446744073709551615,"pc":"0x080497ea","ok":true,"no":false,)"
      R"("r":null,"diag":["a","b"],"in":{"eax":"0x1"},"f":-1.5e3,"s":"q\"\\\u00e9\n"})",
      r, err))
      << err;
  EXPECT_EQ(str(r, "type"), "insn");
  EXPECT_EQ(u64(r, "seq"), 18446744073709551615ull);  // exact, not through a double
  EXPECT_TRUE(flag(r, "ok"));
  EXPECT_FALSE(flag(r, "no"));
  EXPECT_TRUE(member(r, "r")->is_null());
  EXPECT_EQ(member(r, "diag")->size(), 2u);
  EXPECT_EQ(str(*member(r, "in"), "eax"), "0x1");
  EXPECT_EQ(str(r, "s"), "q\"\\\xc3\xa9\n");
  // Absent members and members of another type read as 0, "" and false.
  EXPECT_EQ(u64(r, "absent"), 0u);
  EXPECT_EQ(u64(r, "pc"), 0u);
  EXPECT_EQ(u64(r, "f"), 0u);
  EXPECT_EQ(str(r, "seq"), "");
  EXPECT_FALSE(flag(r, "pc"));
  EXPECT_EQ(member(r, "absent"), nullptr);
  // File order: trace diff reports fields in the order the trace wrote them.
  std::string keys;
  for (const auto& [k, v] : r.items()) keys += k + ",";
  EXPECT_EQ(keys, "type,seq,pc,ok,no,r,diag,in,f,s,");
}

TEST(TraceRecordRead, RejectsMalformedLinesWithOneLineReasons) {
  Record r;
  for (const char* bad :
       {"", "{", "{\"a\":}", "[1,]", "{\"a\":1} x", "tru", "\"abc", "01x", "{\"a\" 1}", "[1 2]",
        "\"\\q\"", "{\"a\":\"\xff\"}", "{\"seq\":40e874}", "-1e400"}) {
    std::string err;
    EXPECT_FALSE(parse_record(bad, r, err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
    EXPECT_EQ(err.find("[json.exception"), std::string::npos) << err;
  }
}

TEST(TraceRecordRead, RefusesDeepNesting) {
  std::string err;
  Record r;
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_TRUE(parse_record(ok, r, err)) << err;
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(parse_record(deep, r, err));
  EXPECT_NE(err.find("nested too deeply"), std::string::npos) << err;
}

}  // namespace
}  // namespace padlock::emu::trace
