// The function-level harness: emu::Machine as padlock_emu._core.Machine and
// emu::ObjectLoader as _core.ObjectLoader. padlock_emu/machine.py wraps them (argument
// marshalling, stubs by name, hook lists, exceptions).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.hpp"
#include "emulator/harness/loader_source_lookup.hpp"
#include "emulator/harness/machine.hpp"
#include "emulator/harness/object_loader.hpp"
#include "emulator/observe/check/report.hpp"
#include "models/cpu_model.hpp"
#include "models/state_io.hpp"
#include "sigint_guard.hpp"

namespace py = pybind11;

namespace padlock::python {

namespace {

const char* const kGpr32[8] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"};
const char* const kGpr64[8] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"};

py::dict regs_dict(const ArchState& s, bool guest64) {
  py::dict d;
  for (int i = 0; i < 8; ++i) {
    d[guest64 ? kGpr64[i] : kGpr32[i]] = guest64 ? s.gpr[i] : (s.gpr[i] & 0xFFFFFFFFu);
  }
  d["eflags"] = s.eflags & 0xFFFFFFFFu;
  return d;
}

}  // namespace

void bind_machine(py::module_& m) {
  PyObject* machine_error = register_error<emu::MachineError>(
      m, "MachineError",
      "Bad use of the function harness (unmapped memory, unknown register or symbol, ...)",
      m.attr("PadlockError").ptr());
  register_error<StateError>(m, "SnapshotError",
                             "A snapshot that does not fit this Machine (another CPU model, bits, "
                             "mhz or timing, or not written by this build)",
                             machine_error);

  using emu::Machine;
  using emu::MachineFault;

  py::enum_<MachineFault::Kind>(m, "StopKind", "Why a call did not return")
      .value("Signal", MachineFault::Kind::Signal)
      .value("Syscall", MachineFault::Kind::Syscall)
      .value("Timeout", MachineFault::Kind::Timeout)
      .value("InternalStop", MachineFault::Kind::InternalStop)
      .value("Interrupted", MachineFault::Kind::Interrupted);

  py::class_<MachineFault>(m, "MachineFault", "How a call ended other than by returning")
      .def_readonly("kind", &MachineFault::kind)
      .def_readonly("signo", &MachineFault::signo)
      .def_readonly("code", &MachineFault::code)
      .def_readonly("address", &MachineFault::address)
      .def_readonly("trapno", &MachineFault::trapno)
      .def_readonly("pc", &MachineFault::pc)
      .def_readonly("disassembly", &MachineFault::disassembly)
      .def_readonly("write", &MachineFault::write)
      .def_readonly("is_padlock", &MachineFault::is_padlock)
      .def_property_readonly("insn",
                             [](const MachineFault& f) -> py::object {
                               if (f.insn == isa::InsnId::Count) return py::none();
                               return py::cast(f.insn);
                             })
      .def_readonly("padlock", &MachineFault::padlock)
      .def_readonly("syscall_number", &MachineFault::syscall_number);

  py::class_<emu::CallResult>(m, "CallResult", "What one Machine.call did")
      .def_readonly("returned", &emu::CallResult::returned)
      .def_readonly("value", &emu::CallResult::value)
      .def_readonly("value_hi", &emu::CallResult::value_hi)
      .def_readonly("fault", &emu::CallResult::fault)
      .def_readonly("cycles", &emu::CallResult::cycles)
      .def_readonly("instructions", &emu::CallResult::instructions)
      .def_readonly("padlock_cycles", &emu::CallResult::padlock_cycles)
      .def_readonly("padlock_count", &emu::CallResult::padlock_count)
      .def_readonly("stub_calls", &emu::CallResult::stub_calls);

  py::class_<emu::PadlockEvent>(m, "PadlockEventData", "One PadLock instruction seen by a hook")
      .def_readonly("pc", &emu::PadlockEvent::pc)
      .def_readonly("now", &emu::PadlockEvent::now)
      .def_readonly("decoded", &emu::PadlockEvent::decoded)
      .def_readonly("outcome", &emu::PadlockEvent::outcome)
      .def_readonly("executed", &emu::PadlockEvent::executed)
      .def_property_readonly("eflags30_before",
                             [](const emu::PadlockEvent& e) { return e.before.eflags30(); })
      .def_property_readonly("eflags30_after",
                             [](const emu::PadlockEvent& e) { return e.after.eflags30(); })
      .def("regs_before",
           [](const emu::PadlockEvent& e, bool guest64) { return regs_dict(e.before, guest64); })
      .def("regs_after",
           [](const emu::PadlockEvent& e, bool guest64) { return regs_dict(e.after, guest64); });

  py::class_<emu::StubSlot>(m, "StubSlot")
      .def_readonly("name", &emu::StubSlot::name)
      .def_readonly("address", &emu::StubSlot::address);

  py::class_<Machine>(m, "Machine",
                      "One CPU model's processor with an empty user-mode address space: load "
                      "ELF files and call their functions (emulator/harness/machine.hpp)")
      .def(py::init([](py::object cpu, unsigned bits, uint64_t seed, bool host_entropy, bool errata,
                       std::optional<double> mhz, bool timing) {
             return new Machine(cpu_arg(cpu), bits, padlock_config(seed, host_entropy, errata),
                                mhz ? *mhz : 0.0, emu::PadlockTiming{timing, timing});
           }),
           py::arg("cpu") = "esther", py::kw_only(), py::arg("bits") = 32, py::arg("seed") = 0,
           py::arg("host_entropy") = false, py::arg("errata") = true, py::arg("mhz") = py::none(),
           py::arg("timing") = true,
           "timing=True (default) charges PadLock time as the CLI does with --timing on: the "
           "cache model's memory stalls and the §3.3 overlap (docs/timing.md); False: the "
           "units' clocks alone")
      .def_property_readonly(
          "cpu", [](Machine& mm) -> const CpuModel& { return mm.padlock().model(); },
          py::return_value_policy::reference)
      .def_property_readonly("bits", &Machine::bits)
      .def_property_readonly("mhz", &Machine::mhz)
      .def_readonly_static("TLS_BASE", &Machine::kTlsBase)
      .def_readonly_static("STUB_BASE", &Machine::kStubBase)
      .def_readonly_static("ARENA_BASE", &Machine::kArenaBase)
      .def_readonly_static("STACK_TOP", &Machine::kStackTop)
      .def_readonly_static("STACK_SIZE", &Machine::kStackSize)
      // Memory.
      .def(
          "map",
          [](Machine& mm, uint64_t va, uint64_t n, uint8_t prot) { mm.memory().map(va, n, prot); },
          py::arg("va"), py::arg("length"), py::arg("prot"))
      .def(
          "unmap", [](Machine& mm, uint64_t va, uint64_t n) { mm.memory().unmap(va, n); },
          py::arg("va"), py::arg("length"))
      .def(
          "protect",
          [](Machine& mm, uint64_t va, uint64_t n, uint8_t prot) {
            mm.memory().protect(va, n, prot);
          },
          py::arg("va"), py::arg("length"), py::arg("prot"))
      .def(
          "reserve",
          [](Machine& mm, uint64_t n, uint64_t align) { return mm.memory().reserve(n, align); },
          py::arg("length"), py::arg("align") = 4096)
      .def(
          "page_flags", [](Machine& mm, uint64_t va) { return mm.memory().space().flags(va); },
          py::arg("va"))
      .def(
          "read",
          [](Machine& mm, uint64_t va, uint64_t n) {
            std::string s(n, '\0');
            mm.memory().read(va, s.data(), n);
            return py::bytes(s);
          },
          py::arg("va"), py::arg("length"))
      .def(
          "write",
          [](Machine& mm, uint64_t va, const py::bytes& b) {
            const std::string s = b;
            mm.memory().write(va, s.data(), s.size());
          },
          py::arg("va"), py::arg("data"))
      // Registers.
      .def("reg", &Machine::reg, py::arg("name"))
      .def("set_reg", &Machine::set_reg, py::arg("name"), py::arg("value"))
      .def_static("is_register", &Machine::is_register)
      .def_property("eflags30", &Machine::eflags30, &Machine::set_eflags30)
      .def_property(
          "cr4_osfxsr", [](Machine& mm) { return mm.control_registers().cr4_osfxsr; },
          [](Machine& mm, bool on) { mm.control_registers().cr4_osfxsr = on; })
      .def_property(
          "cr0_ts", [](Machine& mm) { return mm.control_registers().cr0_ts; },
          [](Machine& mm, bool on) { mm.control_registers().cr0_ts = on; })
      // Time.
      .def_property_readonly("now", [](Machine& mm) { return mm.clock().now(); })
      .def(
          "advance", [](Machine& mm, uint64_t cycles) { mm.clock().advance(cycles); },
          py::arg("cycles"))
      .def_property(
          "interrupt_at",
          [](const Machine& mm) -> py::object {
            if (mm.interrupt_at == UINT64_MAX) return py::none();
            return py::int_(mm.interrupt_at);
          },
          [](Machine& mm, std::optional<uint64_t> c) { mm.interrupt_at = c ? *c : UINT64_MAX; })
      .def_readonly("interrupts_taken", &Machine::interrupts_taken)
      // Stubs, calls, hooks.
      .def("stub_address", &Machine::stub_address, py::arg("name"))
      .def("has_stub", &Machine::has_stub, py::arg("name"))
      .def("stubs", &Machine::stubs)
      .def(
          "stub_at",
          [](const Machine& mm, uint64_t a) -> py::object {
            const emu::StubSlot* s = mm.stub_at(a);
            if (s == nullptr) return py::none();
            return py::cast(*s);
          },
          py::arg("address"))
      .def(
          "set_stub_handler",
          [](Machine& mm, py::function f) {
            mm.set_stub_handler([f](Machine&, const emu::StubSlot& slot) -> uint64_t {
              py::object r = f(slot.name, slot.address);
              return r.cast<uint64_t>();
            });
          },
          py::arg("handler"), "handler(name, address) -> int, called when guest code enters a stub")
      .def("arg", &Machine::arg, py::arg("index"))
      .def_property_readonly("call_depth", &Machine::call_depth)
      .def(
          "call",
          [](Machine& mm, uint64_t address, const std::vector<uint64_t>& args,
             uint64_t timeout_us) {
            // The outermost call takes SIGINT (sigint_guard.hpp); calls nested in a stub
            // stop with it, each returning kind Interrupted.
            if (mm.call_depth() > 0) return mm.call(address, args, timeout_us);
            emu::CallResult r;
            try {
              SigintGuard guard([](void* t) { static_cast<Machine*>(t)->interrupt_from_host(); },
                                &mm);
              r = mm.call(address, args, timeout_us);
            } catch (...) {
              if (SigintGuard::take_interrupted()) SigintGuard::interrupt_python();
              throw;
            }
            if (SigintGuard::take_interrupted()) SigintGuard::interrupt_python();
            return r;
          },
          py::arg("address"), py::arg("args"), py::arg("timeout_us") = 0)
      .def(
          "set_padlock_hooks",
          [](Machine& mm, std::optional<py::function> before, std::optional<py::function> after) {
            Machine::PadlockHook b, a;
            if (before) b = [f = *before](Machine&, const emu::PadlockEvent& e) { f(e); };
            if (after) a = [f = *after](Machine&, const emu::PadlockEvent& e) { f(e); };
            mm.set_padlock_hooks(std::move(b), std::move(a));
          },
          py::arg("before"), py::arg("after"))
      .def(
          "add_code_hook",
          [](Machine& mm, uint64_t begin, uint64_t end, py::function f) {
            return mm.add_code_hook(begin, end, [f](Machine&, uint64_t a, uint32_t n) { f(a, n); });
          },
          py::arg("begin"), py::arg("end"), py::arg("callback"))
      .def(
          "add_memory_hook",
          [](Machine& mm, uint64_t begin, uint64_t end, bool reads, bool writes, py::function f) {
            return mm.add_memory_hook(
                begin, end, reads, writes,
                [f](Machine&, bool w, uint64_t a, int n, uint64_t v) { f(w, a, n, v); });
          },
          py::arg("begin"), py::arg("end"), py::arg("reads"), py::arg("writes"),
          py::arg("callback"))
      .def("remove_hook", &Machine::remove_hook, py::arg("id"))
      .def(
          "set_syscall_hook",
          [](Machine& mm, std::optional<py::function> f) {
            Machine::SyscallHook h;
            if (f) h = [g = *f](Machine&, uint64_t nr) { return g(nr).cast<bool>(); };
            mm.set_syscall_hook(std::move(h));
          },
          py::arg("callback"))
      .def("stats", [](const Machine& mm) { return stats_to_dict(mm.stats()); })
      .def(
          "enable_check",
          [](Machine& mm, const emu::ObjectLoader& loader) {
            mm.enable_check(std::make_unique<emu::LoaderSourceLookup>(loader));
          },
          py::arg("loader"), "Run the PadLock checker on every PadLock instruction from now on")
      .def(
          "check_findings",
          [](Machine& mm) {
            std::vector<std::string> out;
            emu::check::Checker* c = mm.checker();
            if (c == nullptr) return out;
            c->finish();
            const emu::check::ReportInfo info{"", mm.padlock().model().name};
            for (const emu::check::Finding& f : c->findings()) {
              out.push_back(emu::check::finding_json(f, info));
            }
            return out;
          },
          "The checker's findings so far, one JSON object (text) each")
      .def(
          "check_sarif",
          [](Machine& mm, const std::string& program) {
            emu::check::Checker* c = mm.checker();
            if (c == nullptr) return std::string();
            c->finish();
            return emu::check::sarif_text(c->findings(), {program, mm.padlock().model().name});
          },
          py::arg("program") = "", "The checker's findings so far as a SARIF 2.1.0 log (text)")
      .def("take_diagnostics",
           [](Machine& mm) {
             py::list out;
             for (const auto& d : mm.take_diagnostics()) {
               out.append(py::make_tuple(py::str(diag_info(d.id).name), d.pc));
             }
             return out;
           })
      .def("disassemble", &Machine::disassemble, py::arg("pc"))
      .def(
          "snapshot",
          [](const Machine& mm) {
            const std::vector<uint8_t> s = mm.snapshot();
            return py::bytes(reinterpret_cast<const char*>(s.data()), s.size());
          },
          "The machine's state as bytes (emulator/harness/machine.hpp)")
      .def(
          "restore",
          [](Machine& mm, const py::bytes& b) {
            const std::string_view s = b;
            mm.restore(reinterpret_cast<const uint8_t*>(s.data()), s.size());
          },
          py::arg("data"))
      .def(
          "rdmsr",
          [](Machine& mm, uint32_t msr) -> py::object {
            uint64_t v = 0;
            if (!mm.rdmsr(msr, v)) return py::none();
            return py::int_(v);
          },
          py::arg("msr"))
      .def("wrmsr", &Machine::wrmsr, py::arg("msr"), py::arg("value"));

  py::class_<emu::MachineSymbol>(m, "MachineSymbol")
      .def_readonly("name", &emu::MachineSymbol::name)
      .def_readonly("address", &emu::MachineSymbol::address)
      .def_readonly("size", &emu::MachineSymbol::size)
      .def_readonly("type", &emu::MachineSymbol::type)
      .def_readonly("bind", &emu::MachineSymbol::bind);

  py::class_<emu::LoadedObject>(m, "LoadedObjectData")
      .def_readonly("path", &emu::LoadedObject::path)
      .def_readonly("type", &emu::LoadedObject::type)
      .def_readonly("bias", &emu::LoadedObject::bias)
      .def_readonly("start", &emu::LoadedObject::start)
      .def_readonly("end", &emu::LoadedObject::end)
      .def_readonly("entry", &emu::LoadedObject::entry)
      .def_readonly("symbols", &emu::LoadedObject::symbols)
      .def_readonly("sections", &emu::LoadedObject::sections)
      .def_readonly("imports", &emu::LoadedObject::imports)
      .def_readonly("relocations", &emu::LoadedObject::relocations)
      .def_readonly("skipped", &emu::LoadedObject::skipped);

  py::class_<emu::ObjectLoader>(m, "ObjectLoader")
      .def(py::init<Machine&>(), py::keep_alive<1, 2>())
      .def(
          "load",
          [](emu::ObjectLoader& l, const std::string& path, uint64_t base) {
            return l.load(path, base);  // a copy: Python may keep it
          },
          py::arg("path"), py::arg("base") = 0)
      .def("define", &emu::ObjectLoader::define, py::arg("name"), py::arg("address"))
      .def("snapshot",
           [](const emu::ObjectLoader& l) {
             const std::vector<uint8_t> s = l.snapshot();
             return py::bytes(reinterpret_cast<const char*>(s.data()), s.size());
           })
      .def(
          "restore",
          [](emu::ObjectLoader& l, const py::bytes& b) {
            const std::string_view s = b;
            l.restore(reinterpret_cast<const uint8_t*>(s.data()), s.size());
          },
          py::arg("data"))
      .def(
          "find",
          [](const emu::ObjectLoader& l, const std::string& name) -> py::object {
            const emu::MachineSymbol* s = l.find(name);
            if (s == nullptr) return py::none();
            return py::cast(*s);
          },
          py::arg("name"));
}

}  // namespace padlock::python
