#include "direct_model.hpp"

#include <cstring>
#include <stdexcept>

#include "emulator/memory/address_text.hpp"

namespace padlock::python {

namespace {

// Calls fn(host_ptr, offset, n) for each page-bounded chunk of [va, va+len).
template <typename Fn>
void for_each_page(FlatMemory& mem, uint64_t va, uint64_t len, Fn&& fn) {
  uint64_t done = 0;
  while (done < len) {
    const uint64_t addr = va + done;
    uint64_t n = FlatMemory::kPage - (addr & (FlatMemory::kPage - 1));
    if (n > len - done) n = len - done;
    uint8_t* p = nullptr;
    try {
      p = mem.host(addr, n);
    } catch (const std::invalid_argument&) {
      throw UnmappedAddress("address " + emu::hex(addr) + " is not mapped");
    }
    fn(p, done, n);
    done += n;
  }
}
}  // namespace

namespace {
emu::VirtualTimeConfig clock_at(double mhz) {
  emu::VirtualTimeConfig c;
  c.mhz = mhz;
  c.irq_hz = 0;  // interrupts come from interrupt_at
  return c;
}
}  // namespace

DirectModel::DirectModel(const CpuModel& cpu, unsigned bits, const PadlockConfig& config,
                         double mhz, const emu::PadlockTiming& timing)
    : bits_(bits),
      padlock_(cpu, config),
      vt_(clock_at(mhz)),
      core_(padlock_, vt_, stats_, this, timing) {
  if (bits != 32 && bits != 64) throw std::invalid_argument("bits must be 32 or 64");
  if (bits == 64 && !cpu.long_mode) {
    throw std::invalid_argument(std::string("CPU model ") + cpu.name + " cannot run 64-bit code");
  }
}

void DirectModel::write(uint64_t va, const std::string& bytes) {
  for_each_page(mem_, va, bytes.size(), [&](uint8_t* p, uint64_t off, uint64_t n) {
    std::memcpy(p, bytes.data() + off, n);
  });
}

std::string DirectModel::read(uint64_t va, uint64_t len) {
  std::string out(len, '\0');
  for_each_page(mem_, va, len,
                [&](uint8_t* p, uint64_t off, uint64_t n) { std::memcpy(out.data() + off, p, n); });
  return out;
}

std::string DirectModel::encode(isa::InsnId id, unsigned addr_size) const {
  if (static_cast<size_t>(id) >= isa::kInsnCount)
    throw std::invalid_argument("no such instruction");
  const unsigned natural = bits_;
  const unsigned toggled = bits_ == 64 ? 32 : 16;
  if (addr_size == 0) addr_size = natural;
  if (addr_size != natural && addr_size != toggled) {
    throw std::invalid_argument("address size " + std::to_string(addr_size) +
                                " is not reachable in " + std::to_string(bits_) + "-bit mode");
  }
  const isa::InsnInfo& row = isa::info(id);
  std::string bytes;
  if (addr_size != natural) bytes.push_back('\x67');
  if (row.rep == isa::PrefixRule::Required || row.rep == isa::PrefixRule::Selects)
    bytes.push_back('\xF3');
  if (row.repne == isa::PrefixRule::Selects) bytes.push_back('\xF2');  // SM2
  bytes.push_back('\x0F');
  bytes.push_back(static_cast<char>(row.opcode2));
  bytes.push_back(static_cast<char>(row.modrm));
  return bytes;
}

ExecEnv DirectModel::env() {
  ExecEnv e;
  e.now = vt_.now();
  e.interrupt_at = interrupt_at;
  e.mhz = vt_.mhz();
  e.pc = pc;
  e.diag = this;
  return e;
}

Execution DirectModel::execute_bytes(const std::string& bytes) {
  Execution x;
  x.decoded = isa::decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), mode());
  if (x.decoded.status == isa::DecodeStatus::NotPadlock) {
    throw std::invalid_argument("not a PadLock instruction");
  }
  pending_.clear();
  const emu::PadlockRecord& r = core_.execute(x.decoded, state_, mem_, pc, interrupt_at);
  x.start = r.start;
  x.outcome = r.outcome;
  x.diagnostics.swap(pending_);
  return x;
}

}  // namespace padlock::python
