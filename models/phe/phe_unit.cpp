// PHE: REP XSHA1 and REP XSHA256 (guide §4.1-§4.3; interrupts and faults §1.7; EFLAGS[30]
// §1.8). The behaviour chosen where the guide is silent is in docs/fidelity/phe.md.
#include "models/phe/phe_unit.hpp"

#include <algorithm>
#include <cstring>

#include "models/guest_access.hpp"
#include "models/phe/phe_timing.hpp"
#include "models/phe/sha_backend.hpp"

namespace padlock {

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the state at EDI is copied as host words (§4.3 little-endian layout)");

constexpr uint64_t kBlock = 64;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kHashAlign = 16;  // §4.1: EDI 16-byte aligned or #GP
constexpr uint64_t kHashArea = 128;  // §4.1: 128 bytes must be allocated at EDI

// Compresses `blocks` readable blocks at linear `va`, straight from host memory where the
// guest range is host-contiguous.
void hash_readable(GuestMemory& mem, ShaBlocksFn fn, uint32_t* state, uint64_t va,
                   uint64_t blocks) {
  if (blocks == 0) return;
  if (const uint8_t* p = mem.translate(va, blocks * kBlock, Access::Read)) {
    fn(state, p, blocks);
    return;
  }
  while (blocks != 0) {
    const uint64_t in_page = std::min(blocks, (kPage - (va & (kPage - 1))) / kBlock);
    if (in_page != 0) {
      if (const uint8_t* p = mem.translate(va, in_page * kBlock, Access::Read)) {
        fn(state, p, in_page);
        va += in_page * kBlock;
        blocks -= in_page;
        continue;
      }
    }
    uint8_t blk[kBlock];
    mem.read(va, blk, kBlock);
    fn(state, blk, 1);
    va += kBlock;
    --blocks;
  }
}

// Hashes up to `want` whole blocks from ESI (advancing it). Returns the number hashed; when
// that is less than `want`, *fault_at is the first byte of the next block that faulted.
uint64_t hash_blocks(GuestMemory& mem, unsigned as, ShaBlocksFn fn, uint32_t* state, uint64_t& esi,
                     uint64_t want, uint64_t* fault_at) {
  uint64_t done = 0;
  while (done < want) {
    uint64_t batch = want - done;
    if (as != 64) {
      // A batch never wraps at the address size; a block straddling the wrap goes alone.
      const uint64_t room = (size_mask(as) - esi + 1) / kBlock;
      if (room == 0) {
        uint8_t blk[kBlock];
        if (!read_wrapped(mem, esi, as, blk, kBlock, fault_at)) return done;
        fn(state, blk, 1);
        esi = ea_add(esi, kBlock, as);
        ++done;
        continue;
      }
      batch = std::min(batch, room);
    }
    const uint64_t ok_bytes = mem.accessible(esi, batch * kBlock, Access::Read);
    const uint64_t ok = ok_bytes / kBlock;
    hash_readable(mem, fn, state, esi, ok);
    const uint64_t start = esi;
    esi = ea_add(esi, ok * kBlock, as);
    done += ok;
    if (ok < batch) {
      *fault_at = start + ok_bytes;
      return done;
    }
  }
  return done;
}

// Bytes 20-31 of Zhaoxin's 32-byte XSHA1 store, zero (§4.1 allocates 128 bytes at EDI, so
// they are writable). Data found there is reported (once per instruction: the first store
// clears it) unless `scratch`: EDI is the stack pointer, the 128-byte copy OpenSSL's and
// GnuTLS's padlock_sha*_blocks make on top of their stack, whose tail is left-over stack.
void store_sha1_tail(GuestMemory& mem, uint64_t edi, bool scratch, const ExecEnv& env) {
  constexpr uint64_t kSha1State = 20, kStore = 32;
  uint8_t tail[kStore - kSha1State];
  mem.read(edi + kSha1State, tail, sizeof tail);
  for (const uint8_t b : tail) {
    if (b != 0 && !scratch) {
      env.report(Diag::Xsha1Store32);
      break;
    }
  }
  std::memset(tail, 0, sizeof tail);
  mem.write(edi + kSha1State, tail, sizeof tail);
}

struct Run {
  Outcome out;
  double clocks = 0;

  Outcome finish(Status status) {
    out.status = status;
    out.cycles = out.int_cycles = PheTiming::round(clocks);
    return out;
  }
  Outcome fault(FaultKind kind, uint64_t address, bool write) {
    out.fault = {kind, address, write};
    return finish(Status::Faulted);
  }
};

}  // namespace

PheUnit::PheUnit(const CpuModel& cpu) : cpu_(cpu) {}

Outcome PheUnit::execute(const isa::Decoded& d, ArchState& s, GuestMemory& mem,
                         const ExecEnv& env) {
  // §1.8: PHE borrows the ACE control-word logic, so every REP XSHA clears EFLAGS[30].
  s.set_eflags30(false);

  const bool sha256 = d.id == isa::InsnId::Xsha256;
  const unsigned as = d.addr_size;  // §4.1 "REP prefix": 67h selects SI/DI vs ESI/EDI
  const uint64_t state_bytes = sha256 ? 32 : 20;
  const ShaBackend& backend = active_sha_backend();
  const ShaBlocksFn fn = sha256 ? backend.sha256 : backend.sha1;
  const PheTiming timing = PheTiming::from(cpu_.phe, sha256);

  Run run;
  const uint64_t edi = reg_get(s, Gpr::DI, as);
  // §4.1: the linear address at EDI must be 16-byte aligned, or #GP.
  if (edi % kHashAlign != 0) return run.fault(FaultKind::GeneralProtection, edi, false);
  // §4.1: 128 bytes at EDI must be allocated; the microcode loads the state from there and
  // stores it back after every block, so the whole area is probed before anything changes.
  if (const uint64_t ok = mem.accessible(edi, kHashArea, Access::Read); ok < kHashArea) {
    return run.fault(FaultKind::PageFault, edi + ok, false);
  }
  if (const uint64_t ok = mem.accessible(edi, kHashArea, Access::Write); ok < kHashArea) {
    return run.fault(FaultKind::PageFault, edi + ok, true);
  }

  run.clocks = timing.startup;
  uint32_t state[8];
  mem.read(edi, state, state_bytes);  // §4.3: plain little-endian words

  uint64_t esi = reg_get(s, Gpr::SI, as);
  const uint64_t eax = reg_get(s, Gpr::AX, as);
  const uint64_t ecx = reg_get(s, Gpr::CX, as);

  // Zhaoxin: XSHA1 stores 32 bytes, bytes 20-31 zero (docs/zhaoxin.md, "Quirks").
  const bool store32 = !sha256 && cpu_.phe.sha1_stores_32_bytes;
  const bool scratch = edi == reg_get(s, Gpr::SP, as);
  auto commit = [&](uint64_t blocks, uint64_t bytes) {
    // §4.1: after each block the hash at EDI is overwritten and ESI/EAX reflect it.
    mem.write(edi, state, state_bytes);
    if (store32) store_sha1_tail(mem, edi, scratch, env);
    reg_set(s, Gpr::SI, esi, as);
    run.out.bytes += bytes;
    run.out.blocks += static_cast<uint32_t>(blocks);
    run.clocks += static_cast<double>(blocks) * timing.per_block;
  };

  if (cpu_.phe.partial_rax_minus1 && eax == size_mask(as)) {
    // Nano: RAX = -1 hashes ECX whole blocks without padding (OpenSSL padlock_sha*_blocks,
    // GnuTLS sha-padlock.c, Linux padlock-sha.c). ECX counts down so a resume continues.
    uint64_t count = ecx;
    while (count != 0) {
      const uint64_t until_irq = timing.blocks_until_interrupt(env, run.clocks);
      const uint64_t want = std::min({count, until_irq, env.host_batch(kBlock)});
      uint64_t fault_at = 0;
      const uint64_t got = hash_blocks(mem, as, fn, state, esi, want, &fault_at);
      if (got != 0) {
        count -= got;
        reg_set(s, Gpr::CX, count, as);
        commit(got, got * kBlock);
      }
      if (got < want) return run.fault(FaultKind::PageFault, fault_at, false);
      if ((want == until_irq || env.host_stop_requested()) && count != 0) {
        return run.finish(Status::Interrupted);
      }
    }
    return run.finish(Status::Completed);
  }

  // §4.1: EAX = bytes already hashed, ECX = total bytes. EAX > ECX can only come from
  // software: nothing is left to hash. EAX == ECX != 0 (all bytes hashed, none left) runs
  // the final step alone: the padding block with the length ECX. Linux padlock-sha.c's
  // final() relies on it (docs/fidelity/phe.md). The final step is atomic, so no resume
  // point has EAX == ECX.
  // Zhaoxin: ECX = 0 hashes nothing and does not pad (docs/zhaoxin.md, "Quirks").
  if (ecx == 0 && cpu_.phe.ecx0_does_nothing) {
    env.report(Diag::XshaEcxZero);
    return run.finish(Status::Completed);
  }
  if (eax > ecx) {
    env.report(Diag::XshaEaxBeyondEcx);
    return run.finish(Status::Completed);
  }
  if (eax != 0 && eax == ecx) env.report(Diag::XshaPadOnly);
  if (eax % kBlock != 0) env.report(Diag::XshaEaxNotBlock);

  uint64_t done = eax;
  // Whole blocks while more than one block remains; each is an interruptible point (§1.7).
  uint64_t loop_blocks = ecx == done ? 0 : (ecx - done - 1) / kBlock;
  while (loop_blocks != 0) {
    const uint64_t until_irq = timing.blocks_until_interrupt(env, run.clocks);
    const uint64_t want = std::min({loop_blocks, until_irq, env.host_batch(kBlock)});
    uint64_t fault_at = 0;
    const uint64_t got = hash_blocks(mem, as, fn, state, esi, want, &fault_at);
    if (got != 0) {
      loop_blocks -= got;
      done += got * kBlock;
      reg_set(s, Gpr::AX, done, as);
      commit(got, got * kBlock);
    }
    if (got < want) return run.fault(FaultKind::PageFault, fault_at, false);
    if (want == until_irq || env.host_stop_requested()) return run.finish(Status::Interrupted);
  }

  // The last 1..64 bytes (none for ECX = 0) and the FIPS 180-2 padding (§4.1 "Padding")
  // form one atomic step: only after it does EAX reach ECX.
  const uint64_t tail = ecx - done;
  uint8_t last[2 * kBlock] = {};
  uint64_t fault_at = 0;
  if (!read_wrapped(mem, esi, as, last, tail, &fault_at)) {
    return run.fault(FaultKind::PageFault, fault_at, false);
  }
  last[tail] = 0x80;
  const uint64_t pad_blocks = tail + 1 + 8 <= kBlock ? 1 : 2;
  const uint64_t bits = ecx * 8;  // the length of the whole input stream
  for (int i = 0; i < 8; ++i)
    last[pad_blocks * kBlock - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  fn(state, last, pad_blocks);
  esi = ea_add(esi, tail, as);
  reg_set(s, Gpr::AX, ecx, as);  // §4.1: "When the REP XSHA instruction completes, EAX == ECX"
  commit(pad_blocks, tail);
  run.clocks += timing.padding;
  return run.finish(Status::Completed);
}

// §4.1: the message is read from ESI on; the hash words at EDI are the result.
void PheUnit::report_spans(const isa::Decoded& d, const ArchState& before, const ArchState&,
                           GuestMemory&, Outcome& o) {
  const unsigned as = d.addr_size;
  o.input = {reg_get(before, Gpr::SI, as), o.bytes};
  o.output = {reg_get(before, Gpr::DI, as), d.id == isa::InsnId::Xsha256 ? 32u : 20u};
}

}  // namespace padlock
