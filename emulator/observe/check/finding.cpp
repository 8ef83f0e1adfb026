#include "emulator/observe/check/finding.hpp"

#include <array>

namespace padlock::emu::check {

namespace {

constexpr const char* kUndefinedChip =
    "the guide leaves this undefined: the real chip may differ from this run";

// Diagnostics of documented quirks rather than gaps in the guide: what the chip does.
struct ChipLine {
  Diag id;
  const char* chip;
};
constexpr ChipLine kQuirkChip[] = {
    {Diag::Xsha1Store32,
     "Zhaoxin parts store 32 bytes; a 20-byte digest buffer is overrun (VIA's chips store "
     "20)"},
    {Diag::XshaEcxZero,
     "Zhaoxin parts leave the hash unchanged, so a caller expecting the padded empty message "
     "(as on VIA) gets a wrong digest; Linux 6.16's padlock-sha self-tests fail this way"},
};

// Severity of each Diag, in Diag order: an error when the chip faults or the result is
// certainly not what the program asked for, a note for a defined use with an undefined
// output field or a case a real client needs, a warning otherwise.
constexpr Severity kDiagSeverity[] = {
    Severity::Warning,  // RepnePrefix
    Severity::Error,    // MissingRep: #UD
    Severity::Warning,  // CiphrSet
    Severity::Error,    // KsizeReserved: #GP
    Severity::Error,    // HwKeygenNot128: #GP
    Severity::Warning,  // DgestOnNehemiah
    Severity::Warning,  // AlignOnNehemiah
    Severity::Error,    // CtrOnNehemiah: #UD
    Severity::Warning,  // DgestIgnoredMode
    Severity::Warning,  // ControlWordReserved
    Severity::Warning,  // InterMode
    Severity::Warning,  // CtrCounterWrap
    Severity::Warning,  // XshaEaxBeyondEcx
    Severity::Error,    // MontmulBadEcx: #GP
    Severity::Error,    // MontmulBadState: #GP
    Severity::Warning,  // RngMsrReserved
    Severity::Warning,  // RngFilterCountLow
    Severity::Warning,  // RngFieldReserved
    Severity::Note,     // RngRepByteCount
    Severity::Warning,  // AceKeyRam16Rounds
    Severity::Warning,  // XshaEaxNotBlock
    Severity::Warning,  // MontmulTNotZero
    Severity::Error,    // MontmulAddr64: #UD
    Severity::Note,     // XshaPadOnly: Linux padlock-sha.c relies on it
    Severity::Note,     // Phe2EaxIgnored: every caller leaves EAX as it is
    Severity::Warning,  // Phe2EcxZero
    Severity::Warning,  // Xsha384State
    Severity::Error,    // Sm3BadEbx: #UD
    Severity::Error,    // Sm3BadEax: #UD
    Severity::Error,    // Sm4BadControlWord: #UD
    Severity::Warning,  // Sm4ControlReserved
    Severity::Warning,  // Sm4MacMode
    Severity::Error,    // Sm4ModeAbsent: #UD
    Severity::Warning,  // Sm4CtrWrap
    Severity::Error,    // Sm2BadEdx: the emulator stops
    Severity::Error,    // NotModelled: the emulator stops
    Severity::Error,    // Xsha1Store32: the caller's data next to the hash is overwritten
    Severity::Error,    // XshaEcxZero: the digest is not what VIA's chips give
};
static_assert(std::size(kDiagSeverity) == kDiagKinds, "one severity per Diag");

constexpr KindInfo kOwn[] = {
    {"stale-key", Severity::Error, "§1.8",
     "REP XCRYPT ran with EFLAGS[30] = 1, but the control word at EDX or the key at EBX is not "
     "what the engine loaded",
     "the chip reuses the control word and key it loaded earlier (§1.8: they are not "
     "reloaded), so this instruction uses the old key and direction"},
    {"stale-key-address", Severity::Warning, "§1.8",
     "REP XCRYPT ran with EFLAGS[30] = 1 and EDX or EBX pointing elsewhere than at the load; "
     "the bytes there are the same",
     "the chip uses the loaded copy; the result is right only while both copies stay equal"},
    {"overlap-partial", Severity::Warning, "§3.1",
     "the input and output of REP XCRYPT overlap without ESI == EDI",
     "the guide defines only ESI == EDI; with a partial overlap the chip's block fetch groups "
     "decide whether input bytes are read before or after they are overwritten"},
    {"dgest-in-place", Severity::Warning, "§3.1",
     "REP XCRYPT with DGEST runs in place (ESI == EDI)",
     "the guide calls in-place operation \"not recommended for message digests\""},
    {"ctr-erratum", Severity::Warning, "§3.1 ERRATA, §6.6",
     "REP XCRYPTCTR with an even ECX long enough to be interrupted, on the stepping with the "
     "CTR erratum",
     "Esther stepping 8 may leave a wrong ciphertext and counter if an interrupt arrives "
     "inside; the guide's CTR_ERRATA.C checks the counter and re-executes"},
    {"prefetch-past-end", Severity::Warning, "§3.1",
     "the input ends where Nano's input fetch group reaches an inaccessible page",
     "Nano reads REP XCRYPTECB/CBC/CTR input in 128/64/64-byte groups and faults here; Linux "
     "padlock-aes.c and OpenSSL copy such inputs to a buffer"},
    {"xstore-overrun", Severity::Warning, "§2.1",
     "XSTORE can store past the requested bytes into memory that is not writable",
     "plain XSTORE stores up to 8 bytes; REP XSTORE may store up to 7 bytes beyond ECX: the "
     "chip faults or overwrites what follows"},
    {"unit-unavailable", Severity::Error, "§1.2, §1.3",
     "a PadLock instruction of a unit this processor lacks or has disabled (FCR, MSR 0x110B), "
     "or any PadLock instruction with CR4[9] (OSFXSR) clear",
     "the chip raises #UD (invalid opcode): the program gets SIGILL"},
    {"alignment-fault", Severity::Error, "§3.1, §4.1",
     "a pointer the instruction needs 16-byte aligned is not",
     "the chip raises #GP: the program gets SIGSEGV"},
    {"fpu-not-available", Severity::Error, "§1.2 note",
     "a PadLock instruction ran in kernel code with CR0.TS set (no kernel_fpu_begin or "
     "irq_ts_save before it)",
     "PadLock runs in the SSE datapath, so the chip raises #NM (device not available) as an "
     "SSE instruction would; older Linux drivers cleared TS with irq_ts_save() first"},
};
static_assert(std::size(kOwn) == static_cast<size_t>(Own::Count), "one row per Own kind");

std::array<KindInfo, kKindCount> make_table() {
  std::array<KindInfo, kKindCount> t{};
  for (unsigned i = 0; i < kDiagKinds; ++i) {
    const DiagInfo& d = diag_info(static_cast<Diag>(i));
    t[i] = {d.name, kDiagSeverity[i], d.section, d.choice, kUndefinedChip};
  }
  for (const ChipLine& q : kQuirkChip) t[kind_of(q.id)].chip = q.chip;
  for (unsigned i = 0; i < std::size(kOwn); ++i) t[kDiagKinds + i] = kOwn[i];
  return t;
}

}  // namespace

const char* severity_name(Severity s) {
  static constexpr const char* kNames[] = {"note", "warning", "error"};
  return kNames[static_cast<unsigned>(s)];
}

const KindInfo& kind_info(unsigned kind) {
  static const std::array<KindInfo, kKindCount> table = make_table();
  return table[kind];
}

}  // namespace padlock::emu::check
