// Trace records: the JSON line of one PadLock instruction (fields, control-word decoding,
// registers from the instruction table) and the result digest.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "emulator/observe/trace/jsonl_trace.hpp"
#include "emulator/observe/trace/result_digest.hpp"
#include "emulator/trace_reader/trace_file.hpp"
#include "models/flat_memory.hpp"

namespace padlock::emu::trace {
namespace {

// Lines written by a JsonlTrace, parsed back.
std::vector<Record> lines_of(const std::string& text) {
  std::vector<Record> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = text.find('\n', start);
    Record v;
    std::string err;
    EXPECT_TRUE(parse_record(text.substr(start, nl - start), v, err)) << err;
    out.push_back(v);
    start = nl + 1;
  }
  return out;
}

PadlockEvent cbc_decrypt_event() {
  PadlockEvent ev;
  ev.seq = 7;
  ev.cycle = 1000;
  ev.end = 1234;
  ev.pc = 0x8049eae;
  ev.d.status = isa::DecodeStatus::Ok;
  ev.d.id = isa::InsnId::XcryptCbc;
  ev.d.length = 4;
  ev.d.addr_size = 32;
  const uint64_t in[8] = {0x1000, 4, 0x2000, 0x3000, 0, 0, 0x4000, 0x5000};
  std::memcpy(ev.in, in, sizeof in);
  std::memcpy(ev.out, in, sizeof in);
  ev.out[1] = 0;
  ev.out[6] = 0x4040;
  ev.out[7] = 0x5040;
  ev.eflags30_in = false;
  ev.eflags30_out = true;
  ev.outcome.cycles = 234;
  ev.outcome.int_cycles = 230;
  ev.outcome.bytes = 64;
  ev.outcome.blocks = 4;
  ev.outcome.key_reloaded = true;
  ev.outcome.has_cw = true;
  // §3.2: ROUND 14, KEYGN (schedule from memory), CRYPT = decrypt, KSIZE 256.
  ev.outcome.cw.raw = 14 | 1u << 7 | 1u << 9 | 2u << 10;
  ev.outcome.diags = 1u << static_cast<unsigned>(Diag::InterMode);
  return ev;
}

TEST(TraceRecord, LineHoldsTheDocumentedFields) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  RunInfo run{"guest_aes_i386", false, "esther-c5j", 1600, 5, false};
  JsonlTrace t(f, run);
  t.record(cbc_decrypt_event(), "padlock_xcrypt_cbc");
  t.end(RunEnd{5000, false, 3, 0}, 1, 234);
  std::fclose(f);
  const std::string text(buf, len);
  std::free(buf);
  const std::vector<Record> lines = lines_of(text);
  ASSERT_EQ(lines.size(), 3u);

  const Record& r = lines[0];
  EXPECT_EQ(str(r, "type"), "run");
  EXPECT_EQ(u64(r, "schema"), 1u);
  EXPECT_EQ(str(r, "program"), "guest_aes_i386");
  EXPECT_EQ(str(r, "arch"), "i386");
  EXPECT_EQ(str(r, "cpu"), "esther-c5j");
  EXPECT_EQ(member(r, "mhz")->dump(), "1600");
  EXPECT_EQ(u64(r, "seed"), 5u);
  EXPECT_FALSE(flag(r, "errata"));

  const Record& i = lines[1];
  EXPECT_EQ(str(i, "type"), "insn");
  EXPECT_EQ(u64(i, "seq"), 7u);
  EXPECT_EQ(u64(i, "cycle"), 1000u);
  EXPECT_EQ(str(i, "pc"), "0x08049eae");
  EXPECT_EQ(str(i, "fn"), "padlock_xcrypt_cbc");
  EXPECT_EQ(str(i, "cpu"), "esther-c5j");
  EXPECT_EQ(str(i, "insn"), "REP XCRYPTCBC");  // the guide's name, from the table
  EXPECT_EQ(str(i, "mnemonic"), "xcryptcbc");  // Capstone's
  EXPECT_EQ(str(i, "unit"), "ACE");
  const Record* cw = member(i, "cw");
  ASSERT_NE(cw, nullptr);
  EXPECT_EQ(str(*cw, "raw"), "0x00000a8e");
  EXPECT_EQ(str(*cw, "source"), "memory");
  EXPECT_EQ(str(*cw, "mode"), "cbc");
  EXPECT_EQ(u64(*cw, "rounds"), 14u);
  EXPECT_EQ(str(*cw, "ksize"), "256");
  EXPECT_EQ(str(*cw, "crypt"), "decrypt");
  EXPECT_EQ(str(*cw, "keygen"), "memory");
  EXPECT_FALSE(flag(*cw, "align"));
  EXPECT_FALSE(flag(*cw, "digest"));
  EXPECT_FALSE(flag(*cw, "inter"));
  // Registers: REP XCRYPTCBC reads EAX ECX EDX EBX ESI EDI and writes EAX ECX ESI EDI
  // (§3.1, the instruction table).
  const Record* in = member(i, "in");
  ASSERT_EQ(in->size(), 6u);
  EXPECT_EQ(str(*in, "edx"), "0x00002000");
  const Record* out = member(i, "out");
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ(str(*out, "ecx"), "0x00000000");
  EXPECT_EQ(str(*out, "edi"), "0x00005040");
  EXPECT_EQ(member(*out, "edx"), nullptr);
  EXPECT_FALSE(flag(i, "eflags30_in"));
  EXPECT_TRUE(flag(i, "eflags30_out"));
  EXPECT_EQ(str(i, "status"), "completed");
  EXPECT_FALSE(flag(i, "restarted"));
  EXPECT_EQ(member(i, "fault"), nullptr);
  EXPECT_EQ(u64(i, "bytes"), 64u);
  EXPECT_EQ(u64(i, "blocks"), 4u);
  EXPECT_EQ(u64(i, "cycles"), 234u);
  EXPECT_EQ(u64(i, "int_cycles"), 230u);
  EXPECT_TRUE(flag(i, "key_reloaded"));
  EXPECT_TRUE(member(i, "result")->is_null());
  ASSERT_EQ(member(i, "diag")->size(), 1u);
  EXPECT_EQ((*member(i, "diag"))[0], diag_info(Diag::InterMode).name);

  const Record& e = lines[2];
  EXPECT_EQ(str(e, "type"), "end");
  EXPECT_EQ(u64(e, "cycle"), 5000u);
  EXPECT_EQ(u64(e, "instructions"), 1u);
  EXPECT_EQ(u64(e, "padlock_cycles"), 234u);
  EXPECT_EQ(u64(e, "exit_code"), 3u);
}

TEST(TraceRecord, FaultAndCachedControlWord) {
  PadlockEvent ev = cbc_decrypt_event();
  ev.guest64 = true;
  ev.outcome.cw_cached = true;
  ev.eflags30_in = true;
  ev.restarted = true;
  ev.outcome.status = Status::Faulted;
  ev.outcome.fault = {FaultKind::PageFault, 0x5000, true};
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  JsonlTrace t(f, RunInfo{"p", true, "nano", 1600, 0, true});
  t.record(ev, "f");
  std::fclose(f);
  const std::vector<Record> lines = lines_of(std::string(buf, len));
  std::free(buf);
  const Record& i = lines[1];
  EXPECT_EQ(str(*member(i, "cw"), "source"), "cached");
  EXPECT_EQ(str(i, "status"), "faulted");
  EXPECT_TRUE(flag(i, "restarted"));
  EXPECT_EQ(str(*member(i, "fault"), "kind"), "#PF");
  EXPECT_EQ(str(*member(i, "fault"), "addr"), "0x0000000000005000");  // 64-bit guest: 16 digits
  EXPECT_TRUE(flag(*member(i, "fault"), "write"));
  EXPECT_EQ(str(*member(i, "in"), "rax"), "0x0000000000001000");
}

// FNV-1a 64 reference value (Fowler/Noll/Vo test suite): "foobar".
constexpr uint64_t kFnvFoobar = 0x85944171f73967e8ull;

TEST(TraceRecord, ResultDigestHashesTheReportedOutputSpan) {
  FlatMemory mem;
  mem.map(0x10000, 0x1000);
  std::memcpy(mem.host(0x10100, 6), "foobar", 6);
  PadlockEvent ev;
  ev.outcome.output = {0x10100, 6};
  capture_results(ev, mem);
  ASSERT_TRUE(ev.result.valid);
  EXPECT_EQ(ev.result.addr, 0x10100u);
  EXPECT_EQ(ev.result.len, 6u);
  EXPECT_EQ(ev.result.fnv1a64, kFnvFoobar);
  EXPECT_FALSE(ev.has_iv);

  // Nothing stored: no digest.
  ev.outcome.output = {0x10100, 0};
  capture_results(ev, mem);
  EXPECT_FALSE(ev.result.valid);

  // The chaining block at EAX afterwards (REP XCRYPTCTR's counter).
  ev.outcome.output = {0x10100, 6};
  ev.outcome.chain = {0x10300, 16};
  for (int k = 0; k < 16; ++k) mem.host(0x10300, 16)[k] = static_cast<uint8_t>(0xf0 + k);
  capture_results(ev, mem);
  EXPECT_EQ(ev.result.fnv1a64, kFnvFoobar);
  ASSERT_TRUE(ev.has_iv);
  EXPECT_EQ(ev.iv[0], 0xf0);
  EXPECT_EQ(ev.iv[15], 0xff);

  // Unreadable output or chaining block: neither is reported.
  ev.outcome.output = {0x20000, 16};
  ev.outcome.chain = {0x20000, 16};
  capture_results(ev, mem);
  EXPECT_FALSE(ev.result.valid);
  EXPECT_FALSE(ev.has_iv);
}

}  // namespace
}  // namespace padlock::emu::trace
