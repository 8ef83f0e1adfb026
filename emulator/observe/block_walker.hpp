// The instructions of a translated block as guest memory holds them now: Capstone for x86
// code, our decoder for a PadLock instruction, which ends its block (and which the block's
// size may not cover entirely: QEMU stops translating at its opcode). -d in_asm and --mix
// walk each block once.
#pragma once

#include <capstone/capstone.h>

#include <cstdint>
#include <stdexcept>

#include "emulator/cpu/block_cache.hpp"
#include "isa/decoder.hpp"
#include "models/unit_interface.hpp"

namespace padlock::emu {

class BlockWalker {
 public:
  BlockWalker(GuestMemory& mem, bool guest64) : mem_(mem), guest64_(guest64) {
    if (cs_open(CS_ARCH_X86, guest64 ? CS_MODE_64 : CS_MODE_32, &cs_) != CS_ERR_OK) {
      throw std::runtime_error("capstone: cannot open the x86 disassembler");
    }
  }
  ~BlockWalker() { cs_close(&cs_); }
  BlockWalker(const BlockWalker&) = delete;
  BlockWalker& operator=(const BlockWalker&) = delete;

  csh capstone() const { return cs_; }

  // x86(const cs_insn&) for each x86 instruction; padlock(pc, const isa::Decoded&) for a
  // PadLock instruction (the last); undecodable(pc, bytes left) where neither decodes.
  template <typename X86, typename Padlock, typename Undecodable>
  void walk(const BlockInfo& b, X86&& x86, Padlock&& padlock, Undecodable&& undecodable) {
    const uint64_t avail = mem_.accessible(b.address, b.size, Access::Read);
    const uint8_t* code = avail != 0 ? mem_.translate(b.address, avail, Access::Read) : nullptr;
    size_t left = avail;
    uint64_t pc = b.address;
    const isa::CpuMode mode = guest64_ ? isa::CpuMode::Long64 : isa::CpuMode::Protected32;
    cs_insn* insn = cs_malloc(cs_);
    while (left > 0) {
      const uint64_t n = mem_.accessible(pc, 15, Access::Read);
      const isa::Decoded d =
          isa::decode(mem_.translate(pc, n, Access::Read), static_cast<size_t>(n), mode);
      if (d.status != isa::DecodeStatus::NotPadlock) {
        padlock(pc, d);
        break;
      }
      const uint64_t at = pc;
      if (!cs_disasm_iter(cs_, &code, &left, &pc, insn)) {
        undecodable(at, left);
        break;
      }
      x86(*insn);
    }
    cs_free(insn, 1);
  }

 private:
  GuestMemory& mem_;
  bool guest64_;
  csh cs_ = 0;
};

}  // namespace padlock::emu
