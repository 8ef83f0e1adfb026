// PLACEHOLDER until the PHE helper lands the real model.
#include "models/phe/phe_unit.hpp"
namespace padlock {
PheUnit::PheUnit(const CpuModel& cpu) : cpu_(cpu) {}
Outcome PheUnit::execute(const isa::Decoded&, ArchState&, GuestMemory&, const ExecEnv&) { return Outcome::fault_ud(); }
}  // namespace padlock
