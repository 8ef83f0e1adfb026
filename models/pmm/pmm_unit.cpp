// PLACEHOLDER until the PMM helper lands the real model.
#include "models/pmm/pmm_unit.hpp"
namespace padlock {
PmmUnit::PmmUnit(const CpuModel& cpu) : cpu_(cpu) {}
Outcome PmmUnit::execute(const isa::Decoded&, ArchState&, GuestMemory&, const ExecEnv&) { return Outcome::fault_ud(); }
}  // namespace padlock
