#include "models/diagnostics.hpp"

#include <cstddef>

namespace padlock {

namespace {
constexpr DiagInfo kDiags[] = {
    {Diag::RepnePrefix, "repne-prefix", "§2.1, §3.1, §4.1, §5.1",
     "F2 (REPNE) acts as F3 (REP): the instruction runs normally"},
    {Diag::MissingRep, "missing-rep", "§3.1, §4.1, §5.1",
     "XCRYPT, XSHA or MONTMUL without REP raises #UD"},
    {Diag::CiphrSet, "cw-ciphr", "§3.2",
     "CW[6] = 1 is ignored: the instruction computes AES as if CIPHR = 0"},
    {Diag::KsizeReserved, "cw-ksize-reserved", "§3.2",
     "KSIZE = 3 raises #GP; nothing is loaded or stored and EFLAGS[30] is unchanged"},
    {Diag::HwKeygenNot128, "cw-hw-keygen-not-128", "§3.2",
     "KEYGN = 0 with a 192/256-bit key raises #GP; nothing is loaded or stored"},
    {Diag::DgestOnNehemiah, "cw-dgest-nehemiah", "§3.2",
     "DGEST on Nehemiah is ignored: EDI advances as in normal CBC/CFB"},
    {Diag::AlignOnNehemiah, "cw-align-nehemiah", "§3.2",
     "ALIGN on Nehemiah is ignored: pointers must still be 16-byte aligned (#GP otherwise)"},
    {Diag::CtrOnNehemiah, "ctr-on-nehemiah", "§0, §7.1, §7.2",
     "REP XCRYPTCTR on Nehemiah ACE raises #UD"},
    {Diag::DgestIgnoredMode, "cw-dgest-mode", "§3.2 note, App. A 13",
     "DGEST in ECB, CTR or OFB is ignored: EDI advances normally"},
    {Diag::ControlWordReserved, "cw-reserved", "§3.2",
     "CW[127:12] are ignored"},
    {Diag::InterMode, "cw-inter", "§3.2 note",
     "INTER = 1: each block's output is the state after ROUND rounds without the final "
     "round's MixColumns omission (see docs/fidelity.md)"},
    {Diag::CtrCounterWrap, "ctr-counter-wrap", "§3.1, App. A 12",
     "the 16-bit counter wraps from 0xFFFF to 0x0000 with no carry into byte 13"},
    {Diag::XshaEaxBeyondEcx, "xsha-eax-beyond-ecx", "§4.1",
     "EAX > ECX at start: no input is hashed, only the final padding of EAX bytes"},
    {Diag::MontmulBadEcx, "montmul-bad-ecx", "§5.1",
     "ECX outside 256..32768 or not a multiple of 128 raises #GP before any access"},
    {Diag::MontmulBadState, "montmul-bad-state", "§5.1",
     "an EAX restart state we could not have written restarts from the beginning"},
    {Diag::RngMsrReserved, "rng-msr-reserved", "§2.2",
     "reserved bits written to MSR 0x110B are dropped; they read back as 0"},
    {Diag::RngFilterCountLow, "rng-fcnt-low", "§2.2",
     "FCNT < 8 with FLTR = 1: the filter uses the value as written"},
    {Diag::RngFieldReserved, "rng-field-reserved", "§2.2",
     "a field reserved on this processor is stored but has no effect"},
};
static_assert(sizeof(kDiags) / sizeof(kDiags[0]) == static_cast<size_t>(Diag::Count),
              "one row per Diag");
}  // namespace

const DiagInfo& diag_info(Diag d) { return kDiags[static_cast<size_t>(d)]; }

}  // namespace padlock
