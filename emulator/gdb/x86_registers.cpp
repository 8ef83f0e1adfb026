#include "emulator/gdb/x86_registers.hpp"

#include <vector>

namespace padlock::emu::gdb {

namespace {

using S = RegSource;
using F = Feature;

// gdb's names for the general registers, in the order of its i386 and amd64 core features.
constexpr RegDesc kGeneral32[] = {
    {"eax", 32, "int32", F::Core, S::Gpr, 0},    {"ecx", 32, "int32", F::Core, S::Gpr, 1},
    {"edx", 32, "int32", F::Core, S::Gpr, 2},    {"ebx", 32, "int32", F::Core, S::Gpr, 3},
    {"esp", 32, "data_ptr", F::Core, S::Gpr, 4}, {"ebp", 32, "data_ptr", F::Core, S::Gpr, 5},
    {"esi", 32, "int32", F::Core, S::Gpr, 6},    {"edi", 32, "int32", F::Core, S::Gpr, 7},
    {"eip", 32, "code_ptr", F::Core, S::Ip, 0},  {"eflags", 32, "x86_eflags", F::Core, S::Flags, 0},
    {"cs", 32, "int32", F::Core, S::Segment, 0}, {"ss", 32, "int32", F::Core, S::Segment, 1},
    {"ds", 32, "int32", F::Core, S::Segment, 2}, {"es", 32, "int32", F::Core, S::Segment, 3},
    {"fs", 32, "int32", F::Core, S::Segment, 4}, {"gs", 32, "int32", F::Core, S::Segment, 5},
};
constexpr RegDesc kGeneral64[] = {
    {"rax", 64, "int64", F::Core, S::Gpr, 0},    {"rbx", 64, "int64", F::Core, S::Gpr, 3},
    {"rcx", 64, "int64", F::Core, S::Gpr, 1},    {"rdx", 64, "int64", F::Core, S::Gpr, 2},
    {"rsi", 64, "int64", F::Core, S::Gpr, 6},    {"rdi", 64, "int64", F::Core, S::Gpr, 7},
    {"rbp", 64, "data_ptr", F::Core, S::Gpr, 5}, {"rsp", 64, "data_ptr", F::Core, S::Gpr, 4},
    {"r8", 64, "int64", F::Core, S::Gpr, 8},     {"r9", 64, "int64", F::Core, S::Gpr, 9},
    {"r10", 64, "int64", F::Core, S::Gpr, 10},   {"r11", 64, "int64", F::Core, S::Gpr, 11},
    {"r12", 64, "int64", F::Core, S::Gpr, 12},   {"r13", 64, "int64", F::Core, S::Gpr, 13},
    {"r14", 64, "int64", F::Core, S::Gpr, 14},   {"r15", 64, "int64", F::Core, S::Gpr, 15},
    {"rip", 64, "code_ptr", F::Core, S::Ip, 0},  {"eflags", 32, "x86_eflags", F::Core, S::Flags, 0},
    {"cs", 32, "int32", F::Core, S::Segment, 0}, {"ss", 32, "int32", F::Core, S::Segment, 1},
    {"ds", 32, "int32", F::Core, S::Segment, 2}, {"es", 32, "int32", F::Core, S::Segment, 3},
    {"fs", 32, "int32", F::Core, S::Segment, 4}, {"gs", 32, "int32", F::Core, S::Segment, 5},
};
// The x87 registers belong to gdb's core feature too.
constexpr RegDesc kX87[] = {
    {"st0", 80, "i387_ext", F::Core, S::St, 0},
    {"st1", 80, "i387_ext", F::Core, S::St, 1},
    {"st2", 80, "i387_ext", F::Core, S::St, 2},
    {"st3", 80, "i387_ext", F::Core, S::St, 3},
    {"st4", 80, "i387_ext", F::Core, S::St, 4},
    {"st5", 80, "i387_ext", F::Core, S::St, 5},
    {"st6", 80, "i387_ext", F::Core, S::St, 6},
    {"st7", 80, "i387_ext", F::Core, S::St, 7},
    {"fctrl", 32, "int", F::Core, S::FpControl, kFpFctrl},
    {"fstat", 32, "int", F::Core, S::FpControl, kFpFstat},
    {"ftag", 32, "int", F::Core, S::FpControl, kFpFtag},
    {"fiseg", 32, "int", F::Core, S::FpControl, kFpFiseg},
    {"fioff", 32, "int", F::Core, S::FpControl, kFpFioff},
    {"foseg", 32, "int", F::Core, S::FpControl, kFpFoseg},
    {"fooff", 32, "int", F::Core, S::FpControl, kFpFooff},
    {"fop", 32, "int", F::Core, S::FpControl, kFpFop},
};
constexpr const char* kXmmNames[16] = {"xmm0",  "xmm1",  "xmm2",  "xmm3", "xmm4",  "xmm5",
                                       "xmm6",  "xmm7",  "xmm8",  "xmm9", "xmm10", "xmm11",
                                       "xmm12", "xmm13", "xmm14", "xmm15"};

std::vector<RegDesc> build(bool guest64) {
  std::vector<RegDesc> r;
  if (guest64)
    r.assign(std::begin(kGeneral64), std::end(kGeneral64));
  else
    r.assign(std::begin(kGeneral32), std::end(kGeneral32));
  r.insert(r.end(), std::begin(kX87), std::end(kX87));
  for (uint8_t i = 0; i < (guest64 ? 16 : 8); ++i) {
    r.push_back({kXmmNames[i], 128, "x86_vec128", F::Sse, S::Xmm, i});
  }
  r.push_back({"mxcsr", 32, "int", F::Sse, S::Mxcsr, 0});
  r.push_back({guest64 ? "orig_rax" : "orig_eax", static_cast<uint16_t>(guest64 ? 64 : 32), "int",
               F::Linux, S::OrigAx, 0});
  // gdb 13 numbers fs_base/gs_base after the Linux registers for amd64 only: an i386
  // description with them fails its register count (target-descriptions.c assertion). i386
  // TLS bases show as `info registers` of the GS descriptor instead: not at all.
  if (guest64) {
    r.push_back({"fs_base", 64, "int", F::Segments, S::SegmentBase, 0});
    r.push_back({"gs_base", 64, "int", F::Segments, S::SegmentBase, 1});
  }
  return r;
}

const char* feature_name(Feature f) {
  switch (f) {
    case F::Core:
      return "org.gnu.gdb.i386.core";
    case F::Sse:
      return "org.gnu.gdb.i386.sse";
    case F::Linux:
      return "org.gnu.gdb.i386.linux";
    case F::Segments:
      return "org.gnu.gdb.i386.segments";
  }
  return "";
}

// EFLAGS bits by their Intel names (Intel SDM vol. 1 §3.4.3); bit 30 is PadLock's
// key-reload bit, named after guide §1.8.
struct FlagBit {
  const char* name;
  int bit;
};
constexpr FlagBit kEflagsBits[] = {
    {"CF", 0},  {"PF", 2},   {"AF", 4},   {"ZF", 6},  {"SF", 7},         {"TF", 8},
    {"IF", 9},  {"DF", 10},  {"OF", 11},  {"NT", 14}, {"RF", 16},        {"VM", 17},
    {"AC", 18}, {"VIF", 19}, {"VIP", 20}, {"ID", 21}, {"PADLOCK30", 30},
};

// Types the registers above name that gdb does not predefine.
std::string type_definitions() {
  std::string s = "<flags id=\"x86_eflags\" size=\"4\">\n";
  for (const FlagBit& b : kEflagsBits) {
    s += "  <field name=\"" + std::string(b.name) + "\" start=\"" + std::to_string(b.bit) +
         "\" end=\"" + std::to_string(b.bit) + "\"/>\n";
  }
  s += "</flags>\n";
  return s;
}

const char* kVectorTypes =
    "<vector id=\"x86_v4f\" type=\"ieee_single\" count=\"4\"/>\n"
    "<vector id=\"x86_v2d\" type=\"ieee_double\" count=\"2\"/>\n"
    "<vector id=\"x86_v16i8\" type=\"int8\" count=\"16\"/>\n"
    "<vector id=\"x86_v8i16\" type=\"int16\" count=\"8\"/>\n"
    "<vector id=\"x86_v4i32\" type=\"int32\" count=\"4\"/>\n"
    "<vector id=\"x86_v2i64\" type=\"int64\" count=\"2\"/>\n"
    "<union id=\"x86_vec128\">\n"
    "  <field name=\"v4_float\" type=\"x86_v4f\"/>\n"
    "  <field name=\"v2_double\" type=\"x86_v2d\"/>\n"
    "  <field name=\"v16_int8\" type=\"x86_v16i8\"/>\n"
    "  <field name=\"v8_int16\" type=\"x86_v8i16\"/>\n"
    "  <field name=\"v4_int32\" type=\"x86_v4i32\"/>\n"
    "  <field name=\"v2_int64\" type=\"x86_v2i64\"/>\n"
    "  <field name=\"uint128\" type=\"uint128\"/>\n"
    "</union>\n";

}  // namespace

std::span<const RegDesc> x86_registers(bool guest64) {
  static const std::vector<RegDesc> r32 = build(false), r64 = build(true);
  return guest64 ? std::span<const RegDesc>(r64) : std::span<const RegDesc>(r32);
}

std::string x86_target_xml(bool guest64) {
  std::string s =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n<target>\n";
  s += guest64 ? "<architecture>i386:x86-64</architecture>\n"
               : "<architecture>i386</architecture>\n";
  s += "<osabi>GNU/Linux</osabi>\n";
  const auto regs = x86_registers(guest64);
  int regnum = 0;
  for (size_t i = 0; i < regs.size();) {
    const Feature f = regs[i].feature;
    s += "<feature name=\"" + std::string(feature_name(f)) + "\">\n";
    if (f == F::Core) s += type_definitions();
    if (f == F::Sse) s += kVectorTypes;
    for (; i < regs.size() && regs[i].feature == f; ++i, ++regnum) {
      const RegDesc& r = regs[i];
      s += "<reg name=\"" + std::string(r.name) + "\" bitsize=\"" + std::to_string(r.bits) +
           "\" type=\"" + r.type + "\" regnum=\"" + std::to_string(regnum) + "\"";
      if (r.source == S::St || r.source == S::FpControl) s += " group=\"float\"";
      if (r.source == S::Xmm || r.source == S::Mxcsr) s += " group=\"vector\"";
      s += "/>\n";
    }
    s += "</feature>\n";
  }
  s += "</target>\n";
  return s;
}

}  // namespace padlock::emu::gdb
