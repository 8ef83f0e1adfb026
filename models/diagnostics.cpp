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
     "KSIZE = 3 raises #GP (address = EDX) when the control word is loaded; nothing is "
     "loaded or stored; the exception clears EFLAGS[30]"},
    {Diag::HwKeygenNot128, "cw-hw-keygen-not-128", "§3.2",
     "KEYGN = 0 with a 192/256-bit KSIZE raises #GP (address = EDX) when the control word "
     "is loaded; nothing is loaded or stored"},
    {Diag::DgestOnNehemiah, "cw-dgest-nehemiah", "§3.2",
     "DGEST on Nehemiah is ignored: EDI advances as in normal CBC/CFB"},
    {Diag::AlignOnNehemiah, "cw-align-nehemiah", "§3.2",
     "ALIGN on Nehemiah is ignored: ESI/EDI must still be 16-byte aligned (#GP otherwise) "
     "and no scratch area is used"},
    {Diag::CtrOnNehemiah, "ctr-on-nehemiah", "§0, §7.1, §7.2",
     "REP XCRYPTCTR on Nehemiah ACE raises #UD"},
    {Diag::DgestIgnoredMode, "cw-dgest-mode", "§3.2 note, App. A 13",
     "DGEST in ECB, CTR or OFB is ignored: EDI advances normally"},
    {Diag::ControlWordReserved, "cw-reserved", "§3.2", "CW[127:12] are ignored"},
    {Diag::InterMode, "cw-inter", "§3.2 note",
     "INTER = 1: every one of the ROUND rounds is a full round (MixColumns / "
     "InvMixColumns included), so each output block is the state after ROUND rounds: "
     "FIPS-197 App. C round[ROUND+1].start (encrypt) or .istart (decrypt, Fig. 15 keys)"},
    {Diag::CtrCounterWrap, "ctr-counter-wrap", "§3.1, App. A 12",
     "the 16-bit counter wraps from 0xFFFF to 0x0000 with no carry into byte 13 (OpenSSL "
     "e_padlock-x86_64.pl adds the carry in software)"},
    {Diag::XshaEaxBeyondEcx, "xsha-eax-beyond-ecx", "§4.1",
     "EAX > ECX at start: treated as already complete; nothing is read or hashed and the "
     "registers and the hash at EDI are unchanged (the EDI checks still apply)"},
    {Diag::MontmulBadEcx, "montmul-bad-ecx", "§5.1",
     "ECX outside 256..32768 or not a multiple of 128 raises #GP before any access"},
    {Diag::MontmulBadState, "montmul-bad-state", "§5.1",
     "an EAX restart state the model could not have written (pass index 0 or >= ECX/32, "
     "extension > 3, other bits set) raises #GP before any memory access"},
    {Diag::RngMsrReserved, "rng-msr-reserved", "§2.2",
     "reserved bits written to MSR 0x110B (5, 7, 31:22 and the EDX half) are dropped; "
     "they read back as 0"},
    {Diag::RngFilterCountLow, "rng-fcnt-low", "§2.2",
     "FCNT < 8 with FLTR = 1: the filter keeps runs of at most FCNT bits as written "
     "(FCNT = 0 acts as 1)"},
    {Diag::RngFieldReserved, "rng-field-reserved", "§2.2",
     "a field reserved on this processor (SRC before Nehemiah stepping 8; FLTR, FAIL, FCNT "
     "on Esther) is dropped: it has no effect and reads back as 0"},
    {Diag::RngRepByteCount, "rng-rep-byte-count", "§2.1",
     "REP XSTORE leaves EAX[4:0] = random bytes counted by its last internal XSTORE "
     "(0 if none)",
     DiagKind::UndefinedResult},
    {Diag::AceKeyRam16Rounds, "cw-keyram-16-rounds", "§3.2",
     "KEYGN = 1 with ROUND = 0 (16 rounds): the 17th round key is key RAM entry 0 again "
     "(the 4-bit round index wraps)"},
    {Diag::XshaEaxNotBlock, "xsha-eax-not-block", "§4.1",
     "EAX not a multiple of 64 at start: EAX is taken as the bytes already hashed; whole "
     "blocks are hashed from ESI until at most 64 bytes remain, then the tail is padded "
     "with the length ECX"},
    {Diag::MontmulTNotZero, "montmul-t-not-zero", "§5.1",
     "T not all zero (ECX/32 + 4 words) at EAX = 0: the outer loop accumulates onto it as "
     "the hardware's partial product; words above the inner-loop length are ignored"},
    {Diag::MontmulAddr64, "montmul-addr64", "§5.1",
     "REP MONTMUL in 64-bit mode without 67h on a chip that needs it (Nano): #UD"},
    {Diag::XshaPadOnly, "xsha-pad-only", "§4.1",
     "EAX == ECX != 0 at start: only the final padding block (bit length ECX * 8) is hashed "
     "into the state at EDI; ESI is not read and does not move (Linux "
     "drivers/crypto/padlock-sha.c final() issues it on every C7)"},
    {Diag::Phe2EaxIgnored, "phe2-eax", "docs/fidelity/phe2.md",
     "REP XSHA384/512 does not read EAX and leaves it unchanged: ECX counts 128-byte blocks "
     "and nothing is padded (OpenSSL and GnuTLS padlock_sha512_blocks set no EAX)",
     DiagKind::UndefinedResult},
    {Diag::Phe2EcxZero, "phe2-ecx-zero", "docs/fidelity/phe2.md",
     "REP XSHA384/512 with ECX = 0 does nothing: no memory access, registers unchanged (as "
     "Zhaoxin reports for XSHA1 and XSHA256)"},
    {Diag::Xsha384State, "xsha384-state", "docs/fidelity/phe2.md",
     "REP XSHA384 runs as REP XSHA512 on the 64-byte state at EDI: the software supplies "
     "the SHA-384 IV and truncates the digest"},
    {Diag::Sm3BadEbx, "sm3-ebx", "GMI §1.1",
     "CCS_HASH with EBX != 0x20 (SM3 not selected) raises #UD before any access"},
    {Diag::Sm3BadEax, "sm3-eax", "GMI §1.1",
     "CCS_HASH with EAX neither 0 (pad) nor -1 (blocks) raises #UD before any access"},
    {Diag::Sm4BadControlWord, "sm4-cw", "GMI §1.2",
     "CCS_ENCRYPT with EAX[5:1] != 10000b or EAX[10:6] not exactly one mode raises #UD "
     "before any access"},
    {Diag::Sm4ControlReserved, "sm4-cw-reserved", "GMI §1.2", "EAX[31:12] are ignored"},
    {Diag::Sm4MacMode, "sm4-mac-mode", "GMI §1.2",
     "the MAC bit (EAX[11]) in ECB, OFB or CTR is ignored: EDI advances normally"},
    {Diag::Sm4ModeAbsent, "sm4-mode-absent", "docs/fidelity/gmi.md",
     "CFB, OFB or CTR on a part that has ECB and CBC only (ZX-C, as openEuler's driver "
     "treats it) raises #UD"},
    {Diag::Sm4CtrWrap, "sm4-ctr-wrap", "docs/fidelity/gmi.md",
     "the counter's low 16 bits wrap from 0xFFFF to 0x0000 with no carry into byte 13 "
     "(openEuler sm4-zhaoxin-gmi.c splits its calls at the wrap)"},
    {Diag::Sm2BadEdx, "sm2-edx-not-modelled", "docs/fidelity/gmi.md",
     "SM2 with EDX != 8: the operation is not public; the emulator stops the guest"},
    {Diag::NotModelled, "not-modelled", "docs/fidelity/gmi.md",
     "REP XRNG2, REP XMODEXP and REP MONTMUL2 have no public semantics; the emulator stops "
     "the guest"},
    {Diag::Xsha1Store32, "xsha1-32-byte-store", "§4.1; docs/zhaoxin.md",
     "Zhaoxin: XSHA1 stores 32 bytes at EDI, the 20-byte hash and 12 zero bytes, after every "
     "block; here bytes 20-31 held data, which is lost (Zhaoxin on linux-crypto, "
     "2025-06-16: Linux 6.16 padlock-sha lost its byte count this way)"},
    {Diag::XshaEcxZero, "xsha-ecx0-no-op", "§4.1; docs/zhaoxin.md",
     "Zhaoxin: XSHA1/XSHA256 with ECX = 0 do nothing: no padding block, the hash at EDI and "
     "the registers unchanged (VIA pads the empty message; Zhaoxin, \"lib/crypto: x86/sha: "
     "Add PHE Extensions support\", 2026)"},
};
static_assert(sizeof(kDiags) / sizeof(kDiags[0]) == static_cast<size_t>(Diag::Count),
              "one row per Diag");
}  // namespace

const DiagInfo& diag_info(Diag d) {
  return kDiags[static_cast<size_t>(d)];
}

}  // namespace padlock
