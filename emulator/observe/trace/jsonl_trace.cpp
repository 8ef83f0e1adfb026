#include "emulator/observe/trace/jsonl_trace.hpp"

#include "emulator/observe/trace/json_text.hpp"

namespace padlock::emu::trace {

namespace {

// Register names by Gpr index, for 32- and 64-bit guests.
constexpr const char* kGpr32[8] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"};
constexpr const char* kGpr64[8] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"};
// The instruction table's RegBit order, as written.
constexpr isa::RegBit kRegOrder[] = {isa::kEAX, isa::kECX, isa::kEDX,
                                     isa::kEBX, isa::kESI, isa::kEDI};
constexpr int kRegIndex[] = {0, 1, 2, 3, 6, 7};

void registers(std::string& out, const char* key, const uint64_t* gpr, uint16_t set, bool g64) {
  json_key(out, key);
  out += '{';
  for (size_t i = 0; i < std::size(kRegOrder); ++i) {
    if ((set & kRegOrder[i]) == 0) continue;
    const int r = kRegIndex[i];
    json_key(out, g64 ? kGpr64[r] : kGpr32[r]);
    json_hex(out, g64 ? gpr[r] : gpr[r] & 0xFFFFFFFFull, g64 ? 16 : 8);
  }
  out += '}';
}

void control_word(std::string& out, const PadlockEvent& ev) {
  // §3.2 "Control word fields".
  const isa::ControlWord& cw = ev.outcome.cw;
  static constexpr const char* kKsize[] = {"128", "192", "256", "reserved"};
  json_key(out, "cw");
  out += '{';
  json_key(out, "raw");
  json_hex(out, cw.raw, 8);
  json_key(out, "source");
  json_string(out, ev.outcome.cw_cached ? "cached" : "memory");
  json_key(out, "mode");
  json_string(out, xcrypt_mode(ev.d.id));
  json_key(out, "rounds");
  json_u64(out, cw.rounds());
  json_key(out, "ksize");
  json_string(out, kKsize[static_cast<int>(cw.ksize())]);
  json_key(out, "crypt");
  json_string(out, cw.decrypt() ? "decrypt" : "encrypt");
  json_key(out, "keygen");
  json_string(out, cw.keygn() ? "memory" : "hardware");
  json_key(out, "align");
  json_bool(out, cw.align());
  json_key(out, "digest");
  json_bool(out, cw.dgest());
  json_key(out, "inter");
  json_bool(out, cw.inter());
  json_key(out, "ciphr");
  json_bool(out, cw.ciphr());
  json_key(out, "reserved");
  json_bool(out, cw.reserved_nonzero);
  out += '}';
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::Completed:
      return "completed";
    case Status::Interrupted:
      return "interrupted";
    case Status::Faulted:
      return "faulted";
  }
  return "?";
}

void json_run_settings(std::string& out, const RunInfo& run) {
  json_key(out, "cpu");
  json_string(out, run.cpu);
  json_key(out, "mhz");
  json_f64(out, run.mhz);
  json_key(out, "seed");
  json_u64(out, run.seed);
  json_key(out, "errata");
  json_bool(out, run.errata);
}

const char* xcrypt_mode(isa::InsnId id) {
  switch (id) {
    case isa::InsnId::XcryptEcb:
      return "ecb";
    case isa::InsnId::XcryptCbc:
      return "cbc";
    case isa::InsnId::XcryptCtr:
      return "ctr";
    case isa::InsnId::XcryptCfb:
      return "cfb";
    case isa::InsnId::XcryptOfb:
      return "ofb";
    default:
      return "";
  }
}

JsonlTrace::JsonlTrace(FILE* out, const RunInfo& run, uint64_t max_bytes)
    : out_(out), run_(run), cap_(max_bytes) {
  line_.reserve(1024);
  line_.assign(1, '{');  // not = "{": GCC 12 warns falsely (-Wrestrict, PR 105329)
  json_key(line_, "type");
  json_string(line_, "run");
  json_key(line_, "schema");
  json_u64(line_, kTraceSchema);
  json_key(line_, "program");
  json_string(line_, run.program);
  json_key(line_, "arch");
  json_string(line_, run.guest64 ? "x86_64" : "i386");
  json_run_settings(line_, run);
  line_ += "}\n";
  cap_.take_always(line_.size());
  std::fwrite(line_.data(), 1, line_.size(), out_);
}

bool JsonlTrace::record(const PadlockEvent& ev, const std::string& fn) {
  const isa::InsnInfo& info = ev.d.info();
  const Outcome& o = ev.outcome;
  std::string& l = line_;
  l.assign(1, '{');  // (see above)
  json_key(l, "type");
  json_string(l, "insn");
  json_key(l, "seq");
  json_u64(l, ev.seq);
  json_key(l, "cycle");
  json_u64(l, ev.cycle);
  if (ev.thread >= 0) {
    json_key(l, "thread");
    json_u64(l, static_cast<uint64_t>(ev.thread));
  }
  json_key(l, "pc");
  json_hex(l, ev.pc, ev.guest64 ? 16 : 8);
  json_key(l, "fn");
  json_string(l, fn);
  json_key(l, "cpu");
  json_string(l, run_.cpu);
  json_key(l, "insn");
  json_string(l, info.guide_name);
  json_key(l, "mnemonic");
  json_string(l, info.mnemonic);
  json_key(l, "unit");
  json_string(l, isa::unit_name(info.unit));
  json_key(l, "addr_size");
  json_u64(l, ev.d.addr_size);
  if (ev.outcome.has_cw) control_word(l, ev);
  registers(l, "in", ev.in, info.reads, ev.guest64);
  registers(l, "out", ev.out, info.writes, ev.guest64);
  json_key(l, "eflags30_in");
  json_bool(l, ev.eflags30_in);
  json_key(l, "eflags30_out");
  json_bool(l, ev.eflags30_out);
  json_key(l, "status");
  json_string(l, status_name(o.status));
  json_key(l, "restarted");
  json_bool(l, ev.restarted);
  if (o.status == Status::Faulted) {
    json_key(l, "fault");
    l += '{';
    json_key(l, "kind");
    json_string(l, fault_name(o.fault.kind));
    json_key(l, "addr");
    json_hex(l, o.fault.address, ev.guest64 ? 16 : 8);
    json_key(l, "write");
    json_bool(l, o.fault.write);
    l += '}';
  }
  json_key(l, "bytes");
  json_u64(l, o.bytes);
  json_key(l, "blocks");
  json_u64(l, o.blocks);
  json_key(l, "cycles");
  json_u64(l, o.cycles);
  json_key(l, "int_cycles");
  json_u64(l, o.int_cycles);
  json_key(l, "key_reloaded");
  json_bool(l, o.key_reloaded);
  json_key(l, "result");
  if (ev.result.valid) {
    l += '{';
    json_key(l, "addr");
    json_hex(l, ev.result.addr, ev.guest64 ? 16 : 8);
    json_key(l, "len");
    json_u64(l, ev.result.len);
    json_key(l, "fnv1a64");
    json_hex(l, ev.result.fnv1a64, 16);
    l += '}';
  } else {
    l += "null";
  }
  if (ev.has_iv) {
    json_key(l, "iv");
    l += '"';
    static constexpr char kHex[] = "0123456789abcdef";
    for (const uint8_t b : ev.iv) {
      l += kHex[b >> 4];
      l += kHex[b & 15];
    }
    l += '"';
  }
  json_key(l, "diag");
  l += '[';
  bool first = true;
  for (unsigned i = 0; i < static_cast<unsigned>(Diag::Count); ++i) {
    if ((ev.outcome.diags >> i & 1) == 0) continue;
    if (!first) l += ',';
    first = false;
    json_string(l, diag_info(static_cast<Diag>(i)).name);
  }
  l += "]}\n";
  if (!cap_.take(l.size())) return false;
  std::fwrite(l.data(), 1, l.size(), out_);
  return true;
}

void JsonlTrace::end(const RunEnd& e, uint64_t instructions, uint64_t padlock_cycles) {
  std::string& l = line_;
  l.assign(1, '{');  // (see above)
  json_key(l, "type");
  json_string(l, "end");
  json_key(l, "cycle");
  json_u64(l, e.cycle);
  json_key(l, "instructions");
  json_u64(l, instructions);
  json_key(l, "padlock_cycles");
  json_u64(l, padlock_cycles);
  if (cap_.dropped() != 0) {
    json_key(l, "dropped");
    json_u64(l, cap_.dropped());
  }
  if (e.signaled) {
    json_key(l, "signal");
    json_i64(l, e.signal);
  } else {
    json_key(l, "exit_code");
    json_i64(l, e.exit_code);
  }
  l += "}\n";
  std::fwrite(l.data(), 1, l.size(), out_);
}

}  // namespace padlock::emu::trace
