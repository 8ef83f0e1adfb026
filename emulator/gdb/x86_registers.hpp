// The registers gdb sees for an i386 or x86-64 guest, in the order of the target
// description we send (qXfer:features:read:target.xml), which is also the order of the
// `g` packet. gdb matches them by name against its own i386/amd64 feature sets
// (the GDB manual, "Standard Target Features", "i386 Features").
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace padlock::emu::gdb {

// Where a register's value lives in the guest's state.
enum class RegSource : uint8_t {
  Gpr,          // index: x86 encoding order (AX CX DX BX SP BP SI DI R8..R15)
  Ip,           // EIP / RIP
  Flags,        // EFLAGS, bit 30 the PadLock key-reload bit (guide §1.8)
  Segment,      // index: 0 CS, 1 SS, 2 DS, 3 ES, 4 FS, 5 GS (the selector)
  SegmentBase,  // index: 0 FS, 1 GS (the base address of the descriptor in use)
  St,           // index: x87 register ST(i), 80 bits
  FpControl,    // index: kFp* below
  Xmm,          // index: XMMi
  Mxcsr,
  OrigAx,  // orig_eax/orig_rax of Linux's ptrace frame: -1, no system call in progress
};

enum FpControlIndex : uint8_t {
  kFpFctrl,
  kFpFstat,
  kFpFtag,
  kFpFiseg,
  kFpFioff,
  kFpFoseg,
  kFpFooff,
  kFpFop,
};

enum class Feature : uint8_t { Core, Sse, Linux, Segments };

struct RegDesc {
  const char* name;
  uint16_t bits;
  const char* type;  // a gdb predefined type or one the description defines
  Feature feature;
  RegSource source;
  uint8_t index;
};

std::span<const RegDesc> x86_registers(bool guest64);
// The whole target description document for qXfer:features:read:target.xml.
std::string x86_target_xml(bool guest64);

}  // namespace padlock::emu::gdb
