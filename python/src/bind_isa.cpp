// Instruction table, decoder, control word and MSR constants, exported from isa/ so
// Python never retypes an opcode or a bit position.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "isa/control_word.hpp"
#include "isa/decoder.hpp"
#include "isa/instruction_table.hpp"
#include "isa/msr.hpp"
#include "models/padlock.hpp"

namespace py = pybind11;

namespace padlock::python {

namespace {

using isa::ControlWord;
using isa::KeySize;

// Builds a control word from its fields (§3.2 "Control word fields"). The positions
// here are checked field by field against isa::ControlWord's decoders by
// tests/python/test_isa.py::test_control_word_roundtrip.
ControlWord make_control_word(unsigned rounds, bool dgest, bool align, bool ciphr, bool keygn,
                              bool inter, bool decrypt, KeySize ksize) {
  if (rounds > 16)
    throw py::value_error("ROUND is a 4-bit field: rounds must be 0..16 (16 is encoded as 0)");
  ControlWord cw;
  cw.raw = (rounds & 0xF) | unsigned(dgest) << 4 | unsigned(align) << 5 | unsigned(ciphr) << 6 |
           unsigned(keygn) << 7 | unsigned(inter) << 8 | unsigned(decrypt) << 9 |
           static_cast<unsigned>(ksize) << 10;
  return cw;
}

ControlWord control_word_from_bytes(const py::bytes& b) {
  const std::string s = b;
  if (s.size() != 16) throw py::value_error("a control word is 16 bytes (§3.2)");
  return ControlWord::from_bytes(reinterpret_cast<const uint8_t*>(s.data()));
}

py::bytes control_word_to_bytes(const ControlWord& cw) {
  std::string s(16, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>(cw.raw >> (8 * i) & 0xFF);
  return py::bytes(s);
}

std::string control_word_repr(const ControlWord& cw) {
  static const char* kKsize[] = {"Aes128", "Aes192", "Aes256", "Reserved"};
  std::string r = "ControlWord(raw=0x" + [&] {
    char buf[12];
    std::snprintf(buf, sizeof buf, "%03x", cw.raw);
    return std::string(buf);
  }();
  r += ", rounds=" + std::to_string(cw.rounds());
  r += std::string(", ksize=") + kKsize[static_cast<int>(cw.ksize())];
  r += cw.decrypt() ? ", decrypt" : ", encrypt";
  if (cw.keygn()) r += ", keygn";
  if (cw.dgest()) r += ", dgest";
  if (cw.align()) r += ", align";
  if (cw.ciphr()) r += ", ciphr";
  if (cw.inter()) r += ", inter";
  if (cw.reserved_nonzero) r += ", reserved_nonzero";
  return r + ")";
}

}  // namespace

void bind_isa(py::module_& m) {
  py::enum_<isa::Unit>(m, "Unit", "PadLock unit (§1.1)")
      .value("Rng", isa::Unit::Rng)
      .value("Ace", isa::Unit::Ace)
      .value("Phe", isa::Unit::Phe)
      .value("Pmm", isa::Unit::Pmm)
      .value("Phe2", isa::Unit::Phe2)
      .value("Ccs", isa::Unit::Ccs)
      .value("Sm2", isa::Unit::Sm2)
      .value("Rsa", isa::Unit::Rsa)
      .value("Rng2", isa::Unit::Rng2);
  m.def("unit_name", &isa::unit_name, "The guide's name of a unit: RNG, ACE, PHE, PMM");

  py::enum_<isa::InsnId>(m, "InsnId",
                         "Row of the PadLock instruction table (isa/instruction_table.hpp)")
      .value("Xstore", isa::InsnId::Xstore)
      .value("RepXstore", isa::InsnId::RepXstore)
      .value("XcryptEcb", isa::InsnId::XcryptEcb)
      .value("XcryptCbc", isa::InsnId::XcryptCbc)
      .value("XcryptCtr", isa::InsnId::XcryptCtr)
      .value("XcryptCfb", isa::InsnId::XcryptCfb)
      .value("XcryptOfb", isa::InsnId::XcryptOfb)
      .value("Montmul", isa::InsnId::Montmul)
      .value("Xsha1", isa::InsnId::Xsha1)
      .value("Xsha256", isa::InsnId::Xsha256)
      .value("Xsha384", isa::InsnId::Xsha384)
      .value("Xsha512", isa::InsnId::Xsha512)
      .value("CcsHash", isa::InsnId::CcsHash)
      .value("CcsEncrypt", isa::InsnId::CcsEncrypt)
      .value("Sm2", isa::InsnId::Sm2)
      .value("Montmul2", isa::InsnId::Montmul2)
      .value("Xmodexp", isa::InsnId::Xmodexp)
      .value("Xrng2", isa::InsnId::Xrng2);
  static_assert(isa::kInsnCount == 18, "bind every InsnId above");

  py::enum_<isa::RegBit>(m, "RegBit", py::arithmetic(), "Register bits of InsnInfo.reads/writes")
      .value("EAX", isa::kEAX)
      .value("ECX", isa::kECX)
      .value("EDX", isa::kEDX)
      .value("EBX", isa::kEBX)
      .value("ESI", isa::kESI)
      .value("EDI", isa::kEDI)
      .value("EFLAGS30", isa::kEFLAGS30)
      .value("MemRead", isa::kMemRead)
      .value("MemWrite", isa::kMemWrite);

  py::enum_<isa::PrefixRule>(m, "PrefixRule", "How a prefix affects an instruction")
      .value("Required", isa::PrefixRule::Required)
      .value("Selects", isa::PrefixRule::Selects)
      .value("Absent", isa::PrefixRule::Absent)
      .value("Ignored", isa::PrefixRule::Ignored)
      .value("Undefined", isa::PrefixRule::Undefined)
      .value("Illegal", isa::PrefixRule::Illegal);

  py::class_<isa::InsnInfo>(m, "InsnInfo", "One row of the PadLock instruction table")
      .def_readonly("id", &isa::InsnInfo::id)
      .def_readonly("mnemonic", &isa::InsnInfo::mnemonic)
      .def_readonly("guide_name", &isa::InsnInfo::guide_name)
      .def_readonly("unit", &isa::InsnInfo::unit)
      .def_readonly("opcode2", &isa::InsnInfo::opcode2)
      .def_readonly("modrm", &isa::InsnInfo::modrm)
      .def_readonly("rep", &isa::InsnInfo::rep)
      .def_readonly("repne", &isa::InsnInfo::repne)
      .def_readonly("opsize", &isa::InsnInfo::opsize)
      .def_readonly("reads", &isa::InsnInfo::reads)
      .def_readonly("writes", &isa::InsnInfo::writes)
      .def_readonly("section", &isa::InsnInfo::section)
      .def("__repr__", [](const isa::InsnInfo& i) {
        return std::string("<InsnInfo ") + i.guide_name + " (" + i.section + ")>";
      });
  m.def(
      "instructions",
      [] {
        py::list out;
        for (const isa::InsnInfo& row : isa::kInstructions)
          out.append(py::cast(row, py::return_value_policy::reference));
        return out;
      },
      "All rows of the PadLock instruction table, in InsnId order");
  m.def(
      "info",
      [](isa::InsnId id) -> const isa::InsnInfo& {
        if (static_cast<size_t>(id) >= isa::kInsnCount)
          throw py::value_error("no such instruction");
        return isa::info(id);
      },
      py::return_value_policy::reference, "The table row of an instruction");

  py::enum_<isa::CpuMode>(m, "CpuMode")
      .value("Protected32", isa::CpuMode::Protected32)
      .value("Long64", isa::CpuMode::Long64);
  py::enum_<isa::DecodeStatus>(m, "DecodeStatus")
      .value("Ok", isa::DecodeStatus::Ok)
      .value("NotPadlock", isa::DecodeStatus::NotPadlock)
      .value("InvalidOpcode", isa::DecodeStatus::InvalidOpcode);
  py::class_<isa::Decoded>(m, "Decoded", "isa::decode's view of the bytes at the PC")
      .def_readonly("status", &isa::Decoded::status)
      .def_property_readonly("id",
                             [](const isa::Decoded& d) -> py::object {
                               if (d.id == isa::InsnId::Count) return py::none();
                               return py::cast(d.id);
                             })
      .def_readonly("length", &isa::Decoded::length)
      .def_readonly("addr_size", &isa::Decoded::addr_size)
      .def_readonly("repne", &isa::Decoded::repne)
      .def_readonly("rep_missing", &isa::Decoded::rep_missing)
      .def_readonly("opsize", &isa::Decoded::opsize)
      .def_readonly("lock", &isa::Decoded::lock)
      .def_readonly("segment_override", &isa::Decoded::segment_override)
      .def_readonly("rex", &isa::Decoded::rex)
      .def("__repr__", [](const isa::Decoded& d) {
        if (d.status == isa::DecodeStatus::NotPadlock) return std::string("<Decoded NotPadlock>");
        return std::string("<Decoded ") + d.info().guide_name +
               " length=" + std::to_string(d.length) + " addr_size=" + std::to_string(d.addr_size) +
               (d.status == isa::DecodeStatus::InvalidOpcode ? " #UD" : "") + ">";
      });
  m.def(
      "decode",
      [](const py::bytes& b, isa::CpuMode mode) {
        const std::string s = b;
        return isa::decode(reinterpret_cast<const uint8_t*>(s.data()), s.size(), mode);
      },
      py::arg("data"), py::arg("mode") = isa::CpuMode::Protected32,
      "Decode a PadLock instruction at the start of `data` (isa::decode)");

  py::enum_<KeySize>(m, "KeySize", "CW[11:10] KSIZE (§3.2)")
      .value("Aes128", KeySize::Aes128)
      .value("Aes192", KeySize::Aes192)
      .value("Aes256", KeySize::Aes256)
      .value("Reserved", KeySize::Reserved);
  py::class_<ControlWord>(m, "ControlWord",
                          "The ACE control word (§3.2); decoders from isa/control_word.hpp")
      .def(py::init([](uint32_t raw) {
             ControlWord cw;
             cw.raw = raw;
             return cw;
           }),
           py::arg("raw") = 0, "From bits 31:0 (bits 127:32 zero)")
      .def_static("from_bytes", &control_word_from_bytes, py::arg("data"),
                  "From the 16 bytes at ES:[EDX]")
      .def_static("make", &make_control_word, py::kw_only(), py::arg("rounds"),
                  py::arg("dgest") = false, py::arg("align") = false, py::arg("ciphr") = false,
                  py::arg("keygn") = false, py::arg("inter") = false, py::arg("decrypt") = false,
                  py::arg("ksize") = KeySize::Aes128, "Build a control word from its fields (§3.2)")
      .def("to_bytes", &control_word_to_bytes, "The 16 bytes a program stores at ES:[EDX]")
      .def_readwrite("raw", &ControlWord::raw)
      .def_readonly("reserved_nonzero", &ControlWord::reserved_nonzero)
      .def_property_readonly("rounds", &ControlWord::rounds)
      .def_property_readonly("dgest", &ControlWord::dgest)
      .def_property_readonly("align", &ControlWord::align)
      .def_property_readonly("ciphr", &ControlWord::ciphr)
      .def_property_readonly("keygn", &ControlWord::keygn)
      .def_property_readonly("inter", &ControlWord::inter)
      .def_property_readonly("decrypt", &ControlWord::decrypt)
      .def_property_readonly("ksize", &ControlWord::ksize)
      .def("__int__", [](const ControlWord& cw) { return cw.raw; })
      .def("__eq__",
           [](const ControlWord& a, const ControlWord& b) {
             return a.raw == b.raw && a.reserved_nonzero == b.reserved_nonzero;
           })
      .def("__repr__", &control_word_repr);

  // MSRs (§1.4, §1.5, §2.2) and CPUID 0xC0000001 EDX bits (§1.3).
  m.attr("MSR_RNG") = isa::kMsrRng;
  m.attr("MSR_FCR") = isa::kMsrFcr;
  m.attr("MSR_FCR57") = isa::kMsrFcr57;
  m.attr("MSR_RNG_RESET") = isa::kMsrRngReset;
  m.attr("FCR_PADLOCK_ENABLE") = isa::kFcrPadlockEnable;
  py::class_<isa::RngMsr>(m, "RngMsr", "MSR 0x110B fields (§2.2)")
      .def(py::init([](uint32_t raw) {
             isa::RngMsr r;
             r.raw = raw;
             return r;
           }),
           py::arg("raw") = isa::kMsrRngReset)
      .def_readwrite("raw", &isa::RngMsr::raw)
      .def_property_readonly("bcnt", &isa::RngMsr::bcnt)
      .def_property_readonly("enbl", &isa::RngMsr::enbl)
      .def_property_readonly("src", &isa::RngMsr::src)
      .def_property_readonly("bias", &isa::RngMsr::bias)
      .def_property_readonly("rbts", &isa::RngMsr::rbts)
      .def_property_readonly("fltr", &isa::RngMsr::fltr)
      .def_property_readonly("fail", &isa::RngMsr::fail)
      .def_property_readonly("fcnt", &isa::RngMsr::fcnt)
      .def_readonly_static("WRITABLE_MASK", &isa::RngMsr::kWritableMask)
      .def_readonly_static("RESERVED_MASK", &isa::RngMsr::kReservedMask);
  py::dict centaur;
  centaur["RNG_PRESENT"] = kRngPresent;
  centaur["RNG_ENABLED"] = kRngEnabled;
  centaur["ACE_PRESENT"] = kAcePresent;
  centaur["ACE_ENABLED"] = kAceEnabled;
  centaur["ACE2_PRESENT"] = kAce2Present;
  centaur["ACE2_ENABLED"] = kAce2Enabled;
  centaur["PHE_PRESENT"] = kPhePresent;
  centaur["PHE_ENABLED"] = kPheEnabled;
  centaur["PMM_PRESENT"] = kPmmPresent;
  centaur["PMM_ENABLED"] = kPmmEnabled;
  m.attr("CENTAUR_FEATURES") = centaur;

  // §4.1 "Output data (hash) pointer": the FIPS 180-2 initial hash values a program must
  // store at ES:[EDI], each a little-endian 32-bit integer.
  py::dict sha_init;
  sha_init[py::cast(isa::InsnId::Xsha1)] =
      py::make_tuple(0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u);
  sha_init[py::cast(isa::InsnId::Xsha256)] =
      py::make_tuple(0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au, 0x510E527Fu, 0x9B05688Cu,
                     0x1F83D9ABu, 0x5BE0CD19u);
  m.attr("SHA_INITIAL_STATE") = sha_init;
}

}  // namespace padlock::python
