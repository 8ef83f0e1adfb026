// The direct model API: DirectModel as padlock_emu._core.Model, with Outcome, Fault and
// the diagnostics each execution reported.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "direct_model.hpp"
#include "emulator/memory/address_text.hpp"
#include "models/cpu_model.hpp"

namespace py = pybind11;

namespace padlock::python {

namespace {

void check_size(unsigned size) {
  if (size != 16 && size != 32 && size != 64)
    throw py::value_error("register size must be 16, 32 or 64");
}

}  // namespace

void bind_model(py::module_& m) {
  // Exceptions: PadlockError is the base of every padlock_emu error (padlock_emu/errors.py
  // derives the fault exceptions from it); UnmappedMemoryError is also a LookupError.
  static PyObject* padlock_error =
      PyErr_NewExceptionWithDoc("padlock_emu._core.PadlockError",
                                "Base class of padlock_emu errors", PyExc_Exception, nullptr);
  m.attr("PadlockError") = py::handle(padlock_error);
  register_error<UnmappedAddress>(
      m, "UnmappedMemoryError", "A direct-model memory access touched an unmapped page",
      py::make_tuple(py::handle(padlock_error), py::handle(PyExc_LookupError)).ptr());

  py::enum_<Gpr>(m, "Gpr", "General-purpose register index of ArchState.gpr")
      .value("AX", Gpr::AX)
      .value("CX", Gpr::CX)
      .value("DX", Gpr::DX)
      .value("BX", Gpr::BX)
      .value("SP", Gpr::SP)
      .value("BP", Gpr::BP)
      .value("SI", Gpr::SI)
      .value("DI", Gpr::DI);

  py::enum_<FlatMemory::Perm>(m, "Perm", py::arithmetic(),
                              "Page permissions of the direct model's memory")
      .value("NONE", FlatMemory::kNone)
      .value("R", FlatMemory::kRead)
      .value("W", FlatMemory::kWrite)
      .value("RW", FlatMemory::kRW);
  m.attr("PAGE_SIZE") = FlatMemory::kPage;

  py::enum_<Access>(m, "Access").value("Read", Access::Read).value("Write", Access::Write);

  py::enum_<FaultKind>(m, "FaultKind")
      .value("NoFault", FaultKind::None)
      .value("InvalidOpcode", FaultKind::InvalidOpcode)
      .value("GeneralProtection", FaultKind::GeneralProtection)
      .value("PageFault", FaultKind::PageFault)
      .value("DeviceNotAvailable", FaultKind::DeviceNotAvailable)
      .value("NotModelled", FaultKind::NotModelled);
  m.def("fault_name", &fault_name, "Mnemonic of a fault kind: #UD, #GP, #PF");

  py::enum_<Status>(m, "Status")
      .value("Completed", Status::Completed)
      .value("Faulted", Status::Faulted)
      .value("Interrupted", Status::Interrupted);

  py::class_<Fault>(m, "Fault")
      .def_readonly("kind", &Fault::kind)
      .def_readonly("address", &Fault::address)
      .def_readonly("write", &Fault::write)
      .def("__repr__", [](const Fault& f) {
        if (f.kind == FaultKind::None) return std::string("<Fault none>");
        return std::string("<Fault ") + fault_name(f.kind) + " at " + emu::hex(f.address) +
               (f.write ? " (write)" : "") + ">";
      });

  py::class_<Outcome>(m, "Outcome",
                      "What one PadLock instruction did and cost (models/unit_interface.hpp)")
      .def_readonly("status", &Outcome::status)
      .def_readonly("fault", &Outcome::fault)
      .def_readonly("cycles", &Outcome::cycles)
      .def_readonly("int_cycles", &Outcome::int_cycles)
      .def_readonly("bytes", &Outcome::bytes)
      .def_readonly("blocks", &Outcome::blocks)
      .def_readonly("key_reloaded", &Outcome::key_reloaded);

  py::class_<DiagEvent>(m, "DiagEvent", "One diagnostic a model reported")
      .def_readonly("id", &DiagEvent::id)
      .def_readonly("pc", &DiagEvent::pc)
      .def_property_readonly(
          "info", [](const DiagEvent& e) -> const DiagInfo& { return diag_info(e.id); },
          py::return_value_policy::reference)
      .def_property_readonly("name",
                             [](const DiagEvent& e) { return std::string(diag_info(e.id).name); })
      .def("__repr__", [](const DiagEvent& e) {
        return std::string("<DiagEvent ") + diag_info(e.id).name + " at " + emu::hex(e.pc) + ">";
      });

  py::class_<Execution>(m, "Execution",
                        "One execute(): the model's Outcome, the decoded instruction, the start "
                        "clock and the diagnostics reported")
      .def_readonly("outcome", &Execution::outcome)
      .def_readonly("decoded", &Execution::decoded)
      .def_readonly("start", &Execution::start)
      .def_readonly("diagnostics", &Execution::diagnostics)
      .def_property_readonly("status", [](const Execution& x) { return x.outcome.status; })
      .def_property_readonly("fault", [](const Execution& x) { return x.outcome.fault; })
      .def_property_readonly("cycles", [](const Execution& x) { return x.outcome.cycles; })
      .def_property_readonly("int_cycles", [](const Execution& x) { return x.outcome.int_cycles; })
      .def_property_readonly("bytes", [](const Execution& x) { return x.outcome.bytes; })
      .def_property_readonly("blocks", [](const Execution& x) { return x.outcome.blocks; })
      .def_property_readonly("key_reloaded",
                             [](const Execution& x) { return x.outcome.key_reloaded; })
      .def("__repr__", [](const Execution& x) {
        static const char* kStatus[] = {"Completed", "Faulted", "Interrupted"};
        std::string r = "<Execution ";
        r += x.decoded.status == isa::DecodeStatus::NotPadlock ? "?" : x.decoded.info().guide_name;
        r += std::string(" ") + kStatus[static_cast<int>(x.outcome.status)];
        if (x.outcome.status == Status::Faulted) {
          r += std::string(" ") + fault_name(x.outcome.fault.kind);
          if (x.outcome.fault.kind != FaultKind::InvalidOpcode)
            r += " at " + emu::hex(x.outcome.fault.address);
        }
        r += " cycles=" + std::to_string(x.outcome.cycles);
        for (const DiagEvent& e : x.diagnostics) r += std::string(" !") + diag_info(e.id).name;
        return r + ">";
      });

  py::class_<DirectModel>(m, "Model",
                          "One CPU's PadLock units with flat memory and registers: run single "
                          "PadLock instructions on buffers (no ELF, no Unicorn)")
      .def(py::init([](py::object cpu, unsigned bits, uint64_t seed, bool host_entropy, bool errata,
                       std::optional<double> mhz, bool timing) {
             const CpuModel& c = cpu_arg(cpu);
             return new DirectModel(c, bits, padlock_config(seed, host_entropy, errata),
                                    mhz ? *mhz : c.default_mhz.value,
                                    emu::PadlockTiming{timing, timing});
           }),
           py::arg("cpu") = "esther", py::kw_only(), py::arg("bits") = 32, py::arg("seed") = 0,
           py::arg("host_entropy") = false, py::arg("errata") = true, py::arg("mhz") = py::none(),
           py::arg("timing") = false,
           "timing=True charges PadLock time as the CLI does with --timing on: the cache "
           "model's memory stalls and the §3.3 overlap (docs/timing.md); False: the units' "
           "clocks alone, as the guide's tables give them")
      .def_property_readonly("cpu", &DirectModel::cpu, py::return_value_policy::reference)
      .def_property_readonly("bits", &DirectModel::bits)
      .def_property_readonly("mode", &DirectModel::mode)
      // Memory.
      .def("map", &DirectModel::map, py::arg("va"), py::arg("length"),
           py::arg("perm") = FlatMemory::kRW,
           "Map [va, va+length) rounded out to pages, zero-filled")
      .def("protect", &DirectModel::protect, py::arg("va"), py::arg("length"), py::arg("perm"))
      .def(
          "write", [](DirectModel& d, uint64_t va, const py::bytes& b) { d.write(va, b); },
          py::arg("va"), py::arg("data"),
          "Write bytes, ignoring permissions (pages must be mapped)")
      .def(
          "read", [](DirectModel& d, uint64_t va, uint64_t n) { return py::bytes(d.read(va, n)); },
          py::arg("va"), py::arg("length"),
          "Read bytes, ignoring permissions (pages must be mapped)")
      .def("accessible", &DirectModel::accessible, py::arg("va"), py::arg("length"),
           py::arg("access"),
           "How many bytes from va the models may access (GuestMemory::accessible)")
      // Registers.
      .def(
          "get_reg",
          [](DirectModel& d, Gpr r, unsigned size) {
            check_size(size);
            return reg_get(d.state(), r, size);
          },
          py::arg("reg"), py::arg("size") = 64, "Register value at 16, 32 or 64 bits (reg_get)")
      .def(
          "set_reg",
          [](DirectModel& d, Gpr r, uint64_t v, unsigned size) {
            check_size(size);
            reg_set(d.state(), r, v, size);
          },
          py::arg("reg"), py::arg("value"), py::arg("size") = 64,
          "Write a register as an x86 write of that size does (reg_set): 32 zero-extends, 16 "
          "merges")
      .def_property(
          "eflags", [](DirectModel& d) { return d.state().eflags; },
          [](DirectModel& d, uint64_t v) { d.state().eflags = v; })
      .def_property(
          "eflags30", [](DirectModel& d) { return d.state().eflags30(); },
          [](DirectModel& d, bool v) { d.state().set_eflags30(v); },
          "EFLAGS[30], the ACE key-loaded bit (§1.8, §3.2)")
      .def_property(
          "cr4_osfxsr", [](DirectModel& d) { return d.state().cr4_osfxsr; },
          [](DirectModel& d, bool v) { d.state().cr4_osfxsr = v; }, "CR4[9] (§1.2)")
      .def_property(
          "cr0_ts", [](DirectModel& d) { return d.state().cr0_ts; },
          [](DirectModel& d, bool v) { d.state().cr0_ts = v; }, "CR0[3] (TS): #NM when set")
      // Execution.
      .def(
          "encode",
          [](const DirectModel& d, isa::InsnId id, unsigned addr_size) {
            return py::bytes(d.encode(id, addr_size));
          },
          py::arg("insn"), py::arg("addr_size") = 0,
          "Canonical bytes of an instruction (REP where required, 67h for the other address size)")
      .def("execute", &DirectModel::execute, py::arg("insn"), py::arg("addr_size") = 0,
           "Execute one instruction by table row through isa::decode and Padlock::execute")
      .def(
          "execute_bytes", [](DirectModel& d, const py::bytes& b) { return d.execute_bytes(b); },
          py::arg("code"), "Decode `code` with isa::decode and execute it")
      .def_property("now", &DirectModel::now, &DirectModel::set_now,
                    "Virtual clock in cycles; execute() advances it by Outcome.cycles")
      .def("advance", &DirectModel::advance, py::arg("cycles"))
      .def_property(
          "interrupt_at",
          [](DirectModel& d) -> py::object {
            if (d.interrupt_at == std::numeric_limits<uint64_t>::max()) return py::none();
            return py::int_(d.interrupt_at);
          },
          [](DirectModel& d, std::optional<uint64_t> c) {
            d.interrupt_at = c ? *c : std::numeric_limits<uint64_t>::max();
          },
          "Cycle at which an external interrupt becomes pending (§1.7), or None")
      .def_property_readonly("mhz", &DirectModel::mhz)
      .def_readwrite("pc", &DirectModel::pc, "Guest PC reported with diagnostics")
      // MSRs and CPUID as the model's chip answers them.
      .def(
          "rdmsr",
          [](DirectModel& d, uint32_t msr) -> py::object {
            uint64_t v = 0;
            if (!d.padlock().rdmsr(msr, v, d.env())) return py::none();
            return py::int_(v);
          },
          py::arg("msr"), "MSR value, or None where RDMSR raises #GP")
      .def(
          "wrmsr",
          [](DirectModel& d, uint32_t msr, uint64_t v) {
            return d.padlock().wrmsr(msr, v, d.env());
          },
          py::arg("msr"), py::arg("value"), "False where WRMSR raises #GP")
      .def(
          "cpuid",
          [](const DirectModel& d, uint32_t leaf, uint32_t sub) {
            const CpuidResult r = const_cast<DirectModel&>(d).padlock().cpuid(leaf, sub);
            return py::make_tuple(r.eax, r.ebx, r.ecx, r.edx);
          },
          py::arg("leaf"), py::arg("subleaf") = 0, "(eax, ebx, ecx, edx)")
      .def("unit_enabled", [](DirectModel& d, isa::Unit u) { return d.padlock().unit_enabled(u); })
      .def_property(
          "ctr_errata", [](DirectModel& d) { return d.padlock().ace().ctr_errata(); },
          [](DirectModel& d, bool on) { d.padlock().ace().set_ctr_errata(on); },
          "The Esther stepping-8 REP XCRYPTCTR erratum (§3.1, §6.6)");
}

}  // namespace padlock::python
