// Lookup of the measured x86 costs (models/timing/x86_measured.hpp). Keys are short; every
// variant tried is built in a stack buffer, so a lookup allocates nothing.
#include "models/timing/x86_measured.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "models/cpus/calibrated.hpp"

namespace padlock::timing {

namespace {

constexpr const char* kCoreNames[kX86CoreCount] = {"Nehemiah", "Esther", "Nano",
                                                   "Nano3000", "ZX-C",   "LuJiaZui"};

template <typename Row>
const Row* find_row(std::span<const Row> rows, std::string_view key) {
  auto it = std::lower_bound(rows.begin(), rows.end(), key, [](const Row& r, std::string_view k) {
    return std::string_view(r.key) < k;
  });
  return it != rows.end() && std::string_view(it->key) == key ? &*it : nullptr;
}

// A key split into mnemonic (with a LOCK prefix) and operand tokens.
struct Form {
  std::string_view mnemonic;
  std::array<std::string_view, 4> ops{};
  size_t n = 0;
};

Form parse(std::string_view key) {
  Form f;
  size_t start = key.starts_with("LOCK ") ? 5 : 0;
  size_t sp = key.find(' ', start);
  f.mnemonic = key.substr(0, sp);
  if (sp == std::string_view::npos) return f;
  std::string_view rest = key.substr(sp + 1);
  while (!rest.empty() && f.n < f.ops.size()) {
    size_t comma = rest.find(", ");
    f.ops[f.n++] = rest.substr(0, comma);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 2);
  }
  return f;
}

// Bounded key builder.
struct KeyBuf {
  char s[64];
  size_t n = 0;
  void put(std::string_view t) {
    const size_t k = std::min(t.size(), sizeof s - n);
    std::memcpy(s + n, t.data(), k);
    n += k;
  }
  std::string_view view() const { return {s, n}; }
};

std::string_view build(KeyBuf& b, std::string_view mnemonic, const Form& f) {
  b.n = 0;
  b.put(mnemonic);
  for (size_t i = 0; i < f.n; ++i) {
    b.put(i == 0 ? " " : ", ");
    b.put(f.ops[i]);
  }
  return b.view();
}

bool is_imm(std::string_view t) {
  return t == "1" || (t.size() >= 2 && t[0] == 'i');
}
bool is_sized_mem(std::string_view t) {
  return t.size() >= 2 && t[0] == 'm' && t[1] >= '0' && t[1] <= '9';
}

// The register token of the size of `t` ("m32"/"r32" -> "r32", "m128" -> "xmm").
std::string_view reg_like(std::string_view t) {
  if (t == "mm" || t == "xmm" || t == "st") return t;
  if (t == "m8" || t == "r8") return "r8";
  if (t == "m16" || t == "r16") return "r16";
  if (t == "m32" || t == "r32") return "r32";
  if (t == "m64" || t == "r64") return "r64";
  if (t == "m128") return "xmm";
  return {};
}

// Immediate tokens tried in place of `t`, the register form last.
std::array<std::string_view, 3> imm_alternatives(std::string_view t, std::string_view op0) {
  std::string_view reg = reg_like(op0);
  if (t == "i8") return {"i32", "i16", reg};
  if (t == "i16") return {"i8", reg, {}};
  if (t == "i32") return {"i8", reg, {}};
  if (t == "i64") return {"i32", "i8", reg};
  if (t == "1") return {"i8", {}, {}};
  return {};
}

// The row of `f` under `mnemonic`, trying other immediate sizes. `altered` is set when
// the row is not of the exact key.
const MeasuredRow* lookup_form(X86Core core, std::string_view mnemonic, Form f, bool& altered) {
  const auto rows = measured_core(core).rows;
  KeyBuf b;
  altered = false;
  if (const MeasuredRow* r = find_row(rows, build(b, mnemonic, f))) return r;
  for (size_t i = 1; i < f.n; ++i) {
    if (!is_imm(f.ops[i])) continue;
    for (std::string_view alt : imm_alternatives(f.ops[i], f.ops[0])) {
      if (alt.empty()) continue;
      Form g = f;
      g.ops[i] = alt;
      if (const MeasuredRow* r = find_row(rows, build(b, mnemonic, g))) {
        altered = true;
        return r;
      }
    }
  }
  return nullptr;
}

// Simple ALU operations that take ADD's figures for forms the dumps time only for ADD
// (memory destinations): same single-clock integer unit, same load/store traffic.
bool alu_analogue(std::string_view m) {
  constexpr std::string_view kAlu[] = {"SUB", "AND", "OR",  "XOR", "ADC",
                                       "SBB", "INC", "DEC", "NEG", "NOT"};
  return std::find(std::begin(kAlu), std::end(kAlu), m) != std::end(kAlu);
}

// Instructions whose memory operand 0 is only read.
bool reads_op0_only(std::string_view m) {
  constexpr std::string_view kRead[] = {"CMP", "TEST", "BT", "MUL", "IMUL", "DIV", "IDIV"};
  return std::find(std::begin(kRead), std::end(kRead), m) != std::end(kRead);
}

InsnCost make_cost(double latency, double throughput, CostBasis basis, const MeasuredRow* row) {
  InsnCost c;
  c.latency = c.data_latency = latency;
  c.throughput = throughput;
  c.basis = basis;
  c.row = row;
  return c;
}

double latency_of(const MeasuredRow& r) {
  return r.latency >= 0 ? r.latency : r.throughput;
}

}  // namespace

X86Core x86_core(const char* core) {
  for (size_t i = 0; core != nullptr && i < kX86CoreCount; ++i) {
    if (std::strcmp(core, kCoreNames[i]) == 0) return static_cast<X86Core>(i);
  }
  return X86Core::Esther;
}

const char* x86_core_name(X86Core core) {
  return kCoreNames[static_cast<size_t>(core)];
}

const MeasuredRow* find_measured(X86Core core, std::string_view key) {
  return find_row(measured_core(core).rows, key);
}

const char* cost_basis_name(CostBasis b) {
  constexpr const char* kNames[] = {"measured", "measured, other immediate form",
                                    "measured register form + load-use latency",
                                    "measured ADD form", "class table"};
  const auto i = static_cast<size_t>(b);
  return i < std::size(kNames) ? kNames[i] : "?";
}

// A read-modify-write of memory (ADD m32, r32; INC m8 ...) holds the issue slot for its
// load and its store. The dumps' throughput of these forms is the rate of a chain of them
// on one address, which waits for each store to be forwarded to the next load: Nehemiah
// times ADD [m32], r32 at 5.33 clocks but ADD [m16], r16 at 2.33, and PUSH r32 + POP r32
// at 10 (CentaurHauls0000698_C5P_Nehemiah_InstLatX86.txt:73-75, 373). Those memory dependencies are
// not modelled (x86_block_model.hpp); the issue cost is the load's throughput plus the store's (MOV
// m32, r32), when that is smaller (a choice; docs/timing.md, "x86 costs").
static double rmw_issue(X86Core core, const Form& f, std::string_view bare, double t) {
  if (f.n == 0 || !is_sized_mem(f.ops[0]) || reads_op0_only(bare) || bare == "MOV") return t;
  const MeasuredCore& mc = measured_core(core);
  const MeasuredRow* store = find_measured(core, "MOV m32, r32");
  if (store == nullptr || !mc.load_throughput.present()) return t;
  return std::min(t, mc.load_throughput.clocks + store->throughput);
}

// The cost with its measured (pointer-chase) latency for every consumer.
static InsnCost resolve_latency(X86Core core, std::string_view key, InsnClass cls,
                                bool reads_memory) {
  InsnCost c;
  const MeasuredCore& mc = measured_core(core);
  if (!key.empty()) {
    Form f = parse(key);
    const std::string_view lock = key.starts_with("LOCK ") ? "LOCK " : "";
    const std::string_view bare = f.mnemonic.substr(lock.size());
    // XCHG is symmetric; the dumps time "XCHG r32, [m32]".
    if (bare == "XCHG" && f.n == 2 && is_sized_mem(f.ops[0])) std::swap(f.ops[0], f.ops[1]);
    bool altered = false;
    if (const MeasuredRow* r = lookup_form(core, f.mnemonic, f, altered)) {
      return make_cost(latency_of(*r),
                       lock.empty() ? rmw_issue(core, f, bare, r->throughput) : r->throughput,
                       altered ? CostBasis::OtherImmediate : CostBasis::Measured, r);
    }
    // A locked read-modify-write (LOCK XADD, LOCK CMPXCHG ...) costs what the lock costs:
    // LOCK ADD's figures. The other simple ALU operations take ADD's.
    if (alu_analogue(bare) || !lock.empty()) {
      Form g = f;
      if (g.n == 1) g.ops[g.n++] = "i8";  // INC/DEC/NEG/NOT x -> ADD x, i8
      KeyBuf m;
      m.put(lock);
      m.put("ADD");
      if (const MeasuredRow* r = lookup_form(core, m.view(), g, altered)) {
        return make_cost(latency_of(*r),
                         lock.empty() ? rmw_issue(core, g, bare, r->throughput) : r->throughput,
                         CostBasis::AluAnalogue, r);
      }
    }
    // A memory source: the register form's figures after the load.
    for (size_t i = 0; i < f.n; ++i) {
      if (!is_sized_mem(f.ops[i]) || (i == 0 && !reads_op0_only(bare))) continue;
      Form g = f;
      std::string_view other = f.n > 1 ? f.ops[i == 0 ? 1 : 0] : std::string_view{};
      g.ops[i] = (other == "xmm" || other == "mm") ? other : reg_like(f.ops[i]);
      if (const MeasuredRow* r = lookup_form(core, f.mnemonic, g, altered)) {
        return make_cost(mc.load_use.clocks + latency_of(*r),
                         std::max(r->throughput, mc.load_throughput.clocks),
                         CostBasis::RegisterPlusLoad, r);
      }
      break;
    }
  }
  const double k = x86_costs_for_core(mc.core).cost(cls);
  c.latency = reads_memory ? std::max(k, mc.load_use.clocks) : k;
  c.throughput = k;
  c.basis = CostBasis::Class;
  c.row = nullptr;
  return c;
}

// The measured latency of a load form is a pointer chase: the loaded value feeds the next
// load's address. A value used as data waits less: the in-order cores execute after their
// data-cache stages, so an operation on a loaded value follows the load without the
// address-generation part of that chase (a choice; docs/timing.md, "x86 costs"). The data
// latency of a form that loads is its latency less the load-use latency, plus one clock.
InsnCost resolve_insn_cost(X86Core core, std::string_view key, InsnClass cls, bool reads_memory) {
  InsnCost c = resolve_latency(core, key, cls, reads_memory);
  const double load_use = measured_core(core).load_use.clocks;
  c.data_latency = reads_memory ? std::max(1.0, c.latency - load_use) : c.latency;
  return c;
}

// Extra clocks of a misaligned string element, per core (RepStringCost::misaligned).
const MisalignedElement& misaligned_element(X86Core core) {
  static constexpr const char* kChoice =
      "choice: Nehemiah's (no source times misaligned strings on this core)";
  static constexpr MisalignedElement kCores[kX86CoreCount] = {
      {cpus::calibrated::kNehemiahMisalignedStringElement.value,
       cpus::calibrated::kNehemiahMisalignedStringElement.source},
      {cpus::calibrated::kNehemiahMisalignedStringElement.value, kChoice},
      {0, "choice: Nano's out-of-order core hides it (no source times it)"},
      {0, "choice: as Nano, an out-of-order core (no source times it)"},
      {0, "choice: as Nano, an out-of-order core (no source times it)"},
      {0, "choice: as Nano, an out-of-order core (no source times it)"},
  };
  return kCores[static_cast<size_t>(core)];
}

RepStringCost rep_string_cost(X86Core core, std::string_view key) {
  const MeasuredCore& mc = measured_core(core);
  const X86Costs& classes = x86_costs_for_core(mc.core);
  RepStringCost c;
  c.startup = classes.cost(InsnClass::RepStartup);
  c.startup_source = classes.clocks[static_cast<size_t>(InsnClass::RepStartup)].source;
  const RepStringRow* row = find_row(mc.rep, key);
  if (row == nullptr) {
    // REPE and REPNE forms of CMPS/SCAS move the same data; the dumps time one of each.
    KeyBuf b;
    if (key.starts_with("REPE ")) {
      b.put("REPNE ");
      b.put(key.substr(5));
    } else if (key.starts_with("REPNE ")) {
      b.put("REPE ");
      b.put(key.substr(6));
    }
    if (b.n > 0) row = find_row(mc.rep, b.view());
  }
  c.row = row;
  c.per_element = row != nullptr ? row->per_element() : classes.cost(InsnClass::String);
  // "REP MOVSD" -> MOVS, D: the string kind and the element size.
  const size_t sp = key.rfind(' ');
  const std::string_view op = sp == std::string_view::npos ? key : key.substr(sp + 1);
  if (op.size() == 5) {
    const std::string_view kind = op.substr(0, 4);
    static constexpr struct {
      char suffix;
      unsigned bytes;
    } kSizes[] = {{'B', 1}, {'W', 2}, {'D', 4}, {'Q', 8}};
    for (const auto& z : kSizes) {
      if (op[4] == z.suffix) c.element_bytes = z.bytes;
    }
    c.reads_esi = kind == "MOVS" || kind == "LODS" || kind == "CMPS";
    c.edi_access = kind == "MOVS" || kind == "STOS" || kind == "CMPS" || kind == "SCAS";
  }
  const MisalignedElement& m = misaligned_element(core);
  c.misaligned = m.clocks;
  c.misaligned_source = m.source;
  return c;
}

}  // namespace padlock::timing
