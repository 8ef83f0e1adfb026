// PLACEHOLDER until the RNG helper lands the real model.
#include "models/rng/rng_unit.hpp"
#include "isa/msr.hpp"
namespace padlock {
struct RngUnit::Impl { uint32_t msr = isa::kMsrRngReset; };
RngUnit::RngUnit(const CpuModel& cpu, uint64_t, bool) : impl_(new Impl) { impl_->msr = cpu.msr_rng_reset; }
RngUnit::~RngUnit() { delete impl_; }
Outcome RngUnit::execute(const isa::Decoded&, ArchState&, GuestMemory&, const ExecEnv&) { return Outcome::fault_ud(); }
uint64_t RngUnit::read_msr(const ExecEnv&) { return impl_->msr; }
void RngUnit::write_msr(uint64_t v, const ExecEnv&) { impl_->msr = static_cast<uint32_t>(v); }
bool RngUnit::enabled() const { return impl_->msr & isa::RngMsr::kEnblBit; }
}  // namespace padlock
