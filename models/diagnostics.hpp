// Diagnostics: every case the guide leaves undefined (or silent) gets a deterministic
// behaviour, documented in docs/fidelity.md, and each occurrence is reported here so
// the emulator can show it (--strace, --trace, stats). Never guess silently.
#pragma once

#include <cstdint>

namespace padlock {

enum class Diag : uint16_t {
  RepnePrefix,          // §2.1/§3.1/§4.1/§5.1 REPNE undefined
  MissingRep,           // §3.1/§4.1/§5.1 "must be used with the REP prefix"
  CiphrSet,             // §3.2 CW[6] = 1 undefined
  KsizeReserved,        // §3.2 KSIZE = 3 undefined
  HwKeygenNot128,       // §3.2 KEYGN = 0 with a 192/256-bit key undefined
  DgestOnNehemiah,      // §3.2 DGEST != 0 undefined on Nehemiah
  AlignOnNehemiah,      // §3.2 ALIGN != 0 undefined on Nehemiah
  CtrOnNehemiah,        // §0 note: CTR is ACE2 (Esther) only
  DgestIgnoredMode,     // §3.2 note: DGEST in ECB/CTR/OFB not defined
  ControlWordReserved,  // §3.2 CW[127:12] should be 0
  InterMode,            // §3.2 note: the intermediate-result layout is not defined
  CtrCounterWrap,       // App. A 12: carry out of the 16-bit counter not defined
  XshaEaxBeyondEcx,     // §4.1 EAX > ECX at start (progress past the end)
  MontmulBadEcx,        // §5.1 ECX outside 256..32768 or not a multiple of 128
  MontmulBadState,      // §5.1 EAX (restart state) not one we could have written
  RngMsrReserved,       // §2.2 reserved bits written non-zero
  RngFilterCountLow,    // §2.2 FCNT < 8 with FLTR = 1 "unexpected results"
  RngFieldReserved,     // §2.2 SRC before Nehemiah stepping 8, FLTR/FAIL/FCNT on Esther
  RngRepByteCount,      // §2.1 REP XSTORE: EAX[4:0] byte count not defined
  AceKeyRam16Rounds,    // §3.2 KEYGN = 1 loads 16 values; 16 rounds need 17
  XshaEaxNotBlock,      // §4.1 EAX at start not 0 and not a multiple of 64
  MontmulTNotZero,      // §5.1 T "initially must be all zero" but is not
  MontmulAddr64,        // §5.1 64-bit addressing (no 67h) on a chip that needs 67h
  XshaPadOnly,          // §4.1 EAX == ECX != 0 at start (everything hashed, padding due)
  // The late Nano's and Zhaoxin's units (docs/fidelity/phe2.md, docs/fidelity/gmi.md).
  Phe2EaxIgnored,      // REP XSHA384/512: no caller sets EAX
  Phe2EcxZero,         // REP XSHA384/512 with ECX = 0
  Xsha384State,        // REP XSHA384: no caller; the state it expects is not public
  Sm3BadEbx,           // CCS_HASH with EBX != 0x20 (GMI §1.1)
  Sm3BadEax,           // CCS_HASH with EAX neither 0 nor -1 (GMI §1.1)
  Sm4BadControlWord,   // CCS_ENCRYPT: EAX[5:1] != 10000b or EAX[10:6] not one mode (GMI §1.2)
  Sm4ControlReserved,  // CCS_ENCRYPT: EAX[31:12] not 0
  Sm4MacMode,          // CCS_ENCRYPT: MAC (EAX[11]) outside CBC and CFB (GMI §1.2)
  Sm4ModeAbsent,       // CCS_ENCRYPT: CFB, OFB or CTR on a part without them (ZX-C)
  Sm4CtrWrap,          // CCS_ENCRYPT CTR: the 16-bit counter wraps
  Sm2BadEdx,           // SM2 with EDX != 8: not public, not modelled
  NotModelled,         // REP XRNG2, REP XMODEXP, REP MONTMUL2: not public, not modelled
  // Zhaoxin's PHE (docs/zhaoxin.md, "Quirks"): behaviour VIA's chips do not share.
  Xsha1Store32,  // XSHA1 zeroed non-zero bytes 20-31 at EDI (its 32-byte store)
  XshaEcxZero,   // XSHA1/XSHA256 one-shot with ECX = 0: nothing hashed, no padding
  Count
};

// What kind of gap in the guide a diagnostic marks.
enum class DiagKind : uint8_t {
  // The program did something the guide calls undefined or does not cover (a reserved
  // field, a bad count): shown to the user by default.
  UndefinedUse,
  // A well-defined use whose output field the guide leaves undefined (the REP XSTORE byte
  // count): counted and traced, shown only when the user asks for every diagnostic.
  UndefinedResult,
};

struct DiagInfo {
  Diag id;
  const char* name;     // stable identifier used in traces
  const char* section;  // guide section that leaves it undefined
  const char* choice;   // the behaviour we chose (also in docs/fidelity.md)
  DiagKind kind = DiagKind::UndefinedUse;
};

const DiagInfo& diag_info(Diag d);

// Receives diagnostics. The models call it only on undefined cases, never on the
// normal path, so an implementation may allocate or log.
class DiagnosticSink {
 public:
  virtual ~DiagnosticSink() = default;
  virtual void report(Diag d, uint64_t pc) = 0;
};

}  // namespace padlock
