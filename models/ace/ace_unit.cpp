// PLACEHOLDER until the ACE helper lands the real model.
#include "models/ace/ace_unit.hpp"
namespace padlock {
struct AceUnit::Impl { bool errata = false; };
AceUnit::AceUnit(const CpuModel&) : impl_(new Impl) {}
AceUnit::~AceUnit() { delete impl_; }
Outcome AceUnit::execute(const isa::Decoded&, ArchState&, GuestMemory&, const ExecEnv&) { return Outcome::fault_ud(); }
void AceUnit::set_ctr_errata(bool on) { impl_->errata = on; }
bool AceUnit::ctr_errata() const { return impl_->errata; }
}  // namespace padlock
