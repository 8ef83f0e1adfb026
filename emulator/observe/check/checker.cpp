#include "emulator/observe/check/checker.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "models/ace/ace_key_ram.hpp"

namespace padlock::emu::check {

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// Whether `n` bytes at `va` equal `want` (false when they cannot be read).
bool same_bytes(GuestMemory& mem, uint64_t va, const uint8_t* want, unsigned n) {
  uint8_t buf[256];
  return n <= sizeof buf && mem.read(va, buf, n) && std::memcmp(buf, want, n) == 0;
}

// Diags whose #UD or #GP the unit explains itself (not a missing unit or misalignment).
constexpr uint64_t bit(Diag d) {
  return uint64_t{1} << kind_of(d);
}
constexpr uint64_t kExplainedFaults =
    bit(Diag::MissingRep) | bit(Diag::CtrOnNehemiah) | bit(Diag::MontmulAddr64) |
    bit(Diag::KsizeReserved) | bit(Diag::HwKeygenNot128) | bit(Diag::MontmulBadEcx) |
    bit(Diag::MontmulBadState) | bit(Diag::Sm3BadEbx) | bit(Diag::Sm3BadEax) |
    bit(Diag::Sm4BadControlWord) | bit(Diag::Sm4ModeAbsent) | bit(Diag::Sm2BadEdx) |
    bit(Diag::NotModelled);

// Input fetch group in bytes of `cpu` for an XCRYPT mode (models/cpu_model.hpp prefetch_*).
unsigned fetch_group(const CpuModel& cpu, isa::InsnId id) {
  switch (id) {
    case isa::InsnId::XcryptEcb:
      return std::max(32u, cpu.ace.prefetch_ecb);
    case isa::InsnId::XcryptCbc:
      return std::max(16u, cpu.ace.prefetch_cbc);
    case isa::InsnId::XcryptCtr:
      return std::max(16u, cpu.ace.prefetch_ctr);
    default:
      return 16;
  }
}

// A return address follows a CALL. A direct CALL (E8 rel32) must target `callee` (the
// function of the frame below; 0: any); an indirect one (FF /2) is taken as it is.
bool after_call(GuestMemory& mem, SourceLookup& lookup, uint64_t ra, uint64_t callee) {
  uint8_t b[8];
  if (ra < 8 || !mem.read(ra - 8, b, 8)) return false;
  if (b[3] == 0xE8) {
    int32_t rel;
    std::memcpy(&rel, b + 4, 4);
    return callee == 0 || lookup.function_entry(ra + static_cast<int64_t>(rel)) == callee;
  }
  // Not after a segment override: i386 Linux's system-call gate `call *%gs:0x10` leaves its
  // return address in every syscall wrapper's frame, stale ones included.
  for (int len : {2, 3, 6, 7}) {
    const int at = 8 - len;
    if (b[at] == 0xFF && ((b[at + 1] >> 3) & 7) == 2) return at == 0 || (b[at - 1] != 0x65);
  }
  return false;
}

}  // namespace

Checker::Checker(const CpuModel& cpu, bool guest64, SourceLookup* lookup)
    : cpu_(cpu), nano_(find_cpu_model("nano")), guest64_(guest64), lookup_(lookup) {}

bool Checker::has_error() const {
  return std::any_of(findings_.begin(), findings_.end(), [](const Finding& f) {
    return kind_info(f.kind).severity == Severity::Error;
  });
}

Finding* Checker::raise(unsigned kind, const PadlockRecord& r, GuestMemory& mem) {
  const uint64_t key = r.pc * kKindCount + kind;
  const auto it = index_.find(key);
  if (it != index_.end()) {
    ++findings_[it->second].count;
    return nullptr;
  }
  index_.emplace(key, findings_.size());
  Finding& f = findings_.emplace_back();
  f.kind = kind;
  f.pc = r.pc;
  f.count = 1;
  f.first = seq_;
  f.insn = r.decoded.id;
  backtrace(f, r, mem);
  return &f;
}

// A short backtrace by scanning the stack for return addresses into loaded code (the
// guests are built without frame pointers): words at ESP upwards that point just past a
// CALL of the frame below. A heuristic: a stale word after an indirect CALL can appear,
// a tail call hides a frame.
void Checker::backtrace(Finding& f, const PadlockRecord& r, GuestMemory& mem) {
  f.frames[0].pc = r.pc;
  f.depth = 1;
  if (lookup_ == nullptr) return;
  const unsigned word = guest64_ ? 8 : 4;
  const uint64_t sp = r.before[Gpr::SP];
  constexpr unsigned kScanWords = 512;
  for (unsigned i = 0; i < kScanWords && f.depth < std::size(f.frames); ++i) {
    uint64_t v = 0;
    if (!mem.read(sp + uint64_t(i) * word, &v, word)) break;
    const uint64_t callee = lookup_->function_entry(f.frames[f.depth - 1].pc);
    if (v == 0 || !lookup_->is_code(v) || !after_call(mem, *lookup_, v, callee)) continue;
    f.frames[f.depth++].pc = v;
  }
  for (unsigned i = 0; i < f.depth; ++i) f.frames[i].object = lookup_->object_at(f.frames[i].pc);
}

void Checker::on_padlock(const PadlockRecord& r, GuestMemory& mem) {
  const Outcome& o = r.outcome;
  // The units' diagnostics: each set bit is a finding of its own kind.
  for (uint64_t bits = o.diags; bits != 0; bits &= bits - 1) {
    const unsigned d = static_cast<unsigned>(__builtin_ctzll(bits));
    if (Finding* f = raise(d, r, mem)) f->detail = diag_info(static_cast<Diag>(d)).name;
  }
  const isa::InsnId id = r.decoded.id;
  if (isa::is_xcrypt(id)) {
    check_xcrypt(r, mem);
  } else if (id == isa::InsnId::Xstore || id == isa::InsnId::RepXstore) {
    check_xstore(r, mem);
  }
  if (o.status == Status::Faulted) check_fault(r, mem);
  ++seq_;
}

void Checker::on_msr_write(uint32_t msr, uint64_t value, uint32_t diags, uint64_t pc, uint64_t sp,
                           GuestMemory& mem) {
  PadlockRecord r;
  r.pc = pc;
  r.decoded.id = isa::InsnId::Count;  // not a PadLock instruction: "WRMSR" in reports
  r.before[Gpr::SP] = sp;
  for (uint32_t bits = diags; bits != 0; bits &= bits - 1) {
    const unsigned d = static_cast<unsigned>(__builtin_ctz(bits));
    if (Finding* f = raise(d, r, mem)) {
      f->detail = "WRMSR " + hex(msr) + " <- " + hex(value);
    }
  }
}

void Checker::check_xcrypt(const PadlockRecord& r, GuestMemory& mem) {
  const Outcome& o = r.outcome;
  const unsigned as = r.decoded.addr_size;
  const uint64_t edx = reg_get(r.before, Gpr::DX, as), ebx = reg_get(r.before, Gpr::BX, as);
  const uint64_t esi = reg_get(r.before, Gpr::SI, as), edi = reg_get(r.before, Gpr::DI, as);
  const uint64_t ecx = reg_get(r.before, Gpr::CX, as);

  if (o.key_reloaded) {
    // §1.8: EFLAGS[30] was 0: the engine read the control word at EDX and the key at EBX.
    loaded_.valid = mem.read(edx, loaded_.cw, 16);
    loaded_.cw_addr = edx;
    loaded_.key_addr = ebx;
    loaded_.key_len = ace::key_load_bytes(o.cw);
    loaded_.valid = loaded_.valid && mem.read(ebx, loaded_.key, loaded_.key_len);
  } else if (o.cw_cached && loaded_.valid) {
    // §1.8: EFLAGS[30] = 1: nothing is reloaded. Memory should still hold what was loaded.
    const bool cw_same = same_bytes(mem, edx, loaded_.cw, 16);
    const bool key_same = same_bytes(mem, ebx, loaded_.key, loaded_.key_len);
    if (!cw_same || !key_same) {
      if (Finding* f = raise(kind_of(Own::StaleKey), r, mem)) {
        f->detail = std::string(cw_same ? "" : "control word at EDX=" + hex(edx)) +
                    (cw_same || key_same ? "" : " and ") +
                    (key_same ? "" : "key at EBX=" + hex(ebx)) +
                    " differ from those loaded (EDX=" + hex(loaded_.cw_addr) +
                    ", EBX=" + hex(loaded_.key_addr) + ")";
      }
    } else if (edx != loaded_.cw_addr || ebx != loaded_.key_addr) {
      if (Finding* f = raise(kind_of(Own::StaleKeyAddress), r, mem)) {
        f->detail = "EDX=" + hex(edx) + " EBX=" + hex(ebx) +
                    ", loaded from EDX=" + hex(loaded_.cw_addr) + " EBX=" + hex(loaded_.key_addr);
      }
    }
  }

  // §3.1: "setting ESI == EDI initially is valid for all ACE modes, although it is not
  // recommended for message digests"; other overlaps are not defined.
  if (o.has_cw && o.cw.dgest() && esi == edi && ecx != 0) {
    if (Finding* f = raise(kind_of(Own::DigestInPlace), r, mem)) f->detail = "ESI=EDI=" + hex(esi);
  } else if (esi != edi && ecx != 0) {
    const uint64_t len = ecx * 16;
    if (esi < edi + len && edi < esi + len) {
      if (Finding* f = raise(kind_of(Own::OverlapPartial), r, mem)) {
        f->detail = "ESI=" + hex(esi) + " EDI=" + hex(edi) + " ECX=" + std::to_string(ecx);
      }
    }
  }

  // §3.1 ERRATA, §6.6: the even-count and interrupt cases of stepping 8.
  if (cpu_.ctr_errata && r.decoded.id == isa::InsnId::XcryptCtr && ecx % 2 == 0 &&
      ecx > cpu_.ace.ctr_interrupt_min_remaining) {
    if (Finding* f = raise(kind_of(Own::CtrErratum), r, mem))
      f->detail = "ECX=" + std::to_string(ecx);
  }

  // Nano's wider input groups (Linux padlock-aes.c ecb_fetch_bytes/cbc_fetch_bytes).
  if (nano_ != nullptr && o.status == Status::Completed && ecx != 0) {
    const unsigned wide = fetch_group(*nano_, r.decoded.id);
    if (wide > fetch_group(cpu_, r.decoded.id)) {
      const uint64_t len = ecx * 16, end = esi + len;
      const uint64_t fetched = (len + wide - 1) / wide * wide;
      const uint64_t extra = fetched - len;
      if (extra != 0 && mem.accessible(end, extra, Access::Read) < extra) {
        if (Finding* f = raise(kind_of(Own::PrefetchPastEnd), r, mem)) {
          f->detail =
              "input " + hex(esi) + ".." + hex(end) + ", Nano reads to " + hex(esi + fetched);
        }
      }
    }
  }
}

void Checker::check_xstore(const PadlockRecord& r, GuestMemory& mem) {
  const unsigned as = r.decoded.addr_size;
  const uint64_t edi = reg_get(r.before, Gpr::DI, as);
  // §2.1: XSTORE stores 0..8 bytes; REP XSTORE up to 7 beyond the last requested byte.
  const bool rep = r.decoded.id == isa::InsnId::RepXstore;
  const uint64_t from = rep ? edi + reg_get(r.before, Gpr::CX, as) : edi;
  const uint64_t span = rep ? 7 : 8;
  if (mem.accessible(from, span, Access::Write) < span) {
    if (Finding* f = raise(kind_of(Own::XstoreOverrun), r, mem)) {
      f->detail =
          "EDI=" + hex(edi) + ": " + hex(from) + ".." + hex(from + span) + " is not all writable";
    }
  }
}

void Checker::check_fault(const PadlockRecord& r, GuestMemory& mem) {
  const Outcome& o = r.outcome;
  if ((o.diags & kExplainedFaults) != 0) return;
  if (o.fault.kind == FaultKind::InvalidOpcode) {
    if (Finding* f = raise(kind_of(Own::UnitUnavailable), r, mem)) {
      f->detail = std::string(isa::info(r.decoded.id).guide_name) + " on " + cpu_.name +
                  (r.before.cr4_osfxsr ? "" : " with CR4[9] (OSFXSR) clear");
    }
  } else if (o.fault.kind == FaultKind::DeviceNotAvailable) {
    if (Finding* f = raise(kind_of(Own::FpuNotAvailable), r, mem)) f->detail = "CR0.TS = 1";
  } else if (o.fault.kind == FaultKind::GeneralProtection) {
    if (Finding* f = raise(kind_of(Own::AlignmentFault), r, mem)) {
      f->detail = "#GP at address " + hex(o.fault.address);
    }
  }
}

void Checker::finish() {
  if (lookup_ == nullptr) return;
  // A caller's return address follows its CALL: look up the CALL's last byte.
  std::vector<Frame*> frames;
  const size_t from = located_;
  for (size_t k = from; k < findings_.size(); ++k) {
    Finding& f = findings_[k];
    for (unsigned i = 1; i < f.depth; ++i) --f.frames[i].pc;
    for (unsigned i = 0; i < f.depth; ++i) frames.push_back(&f.frames[i]);
  }
  lookup_->locate(frames.data(), frames.size());
  for (size_t k = from; k < findings_.size(); ++k) {
    Finding& f = findings_[k];
    for (unsigned i = 1; i < f.depth; ++i) ++f.frames[i].pc;
  }
  located_ = findings_.size();
}

}  // namespace padlock::emu::check
