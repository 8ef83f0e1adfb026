// padlock_emu._core.run_guest: a whole guest program under the emulator, in-process
// (guest_run.hpp), and the run statistics as plain Python data.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "emulator/loader/elf_loader.hpp"
#include "emulator/options/option_checks.hpp"
#include "emulator/options/run_options.hpp"
#include "guest_run.hpp"
#include "isa/instruction_table.hpp"
#include "models/cpu_model.hpp"
#include "sigint_guard.hpp"

namespace py = pybind11;

namespace padlock::python {

namespace {

// The optional run() arguments this module passes through to RunOptions.
constexpr const char* kRunFeatures[] = {"irq_hz", "trace", "chrome_trace", "profile",   "sysroot",
                                        "timing", "check", "gdb",          "cache_x86", "memory"};

// A number option from Python: None, or an int or a float; a value of another type (a str,
// a bool) raises TypeError with the CLI's message for it (emulator/options/option_checks.hpp).
std::optional<double> number_option(const py::handle& v,
                                    std::string (*message)(const std::string&)) {
  if (v.is_none()) return std::nullopt;
  if (py::isinstance<py::bool_>(v) ||
      !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)))
    throw py::type_error(message(py::str(v)));
  return v.cast<double>();
}

std::string mhz_message(const std::string& text) {
  return emu::mhz_message(text);
}

std::string seed_message(const std::string& text) {
  return emu::seed_message(text);
}

}  // namespace

py::dict stats_to_dict(const emu::Stats& s) {
  py::dict padlock;
  for (size_t i = 0; i < isa::kInsnCount; ++i) {
    const emu::InsnStats& st = s.insn[i];
    if (st.count == 0) continue;
    py::dict d;
    d["count"] = st.count;
    d["bytes"] = st.bytes;
    d["cycles"] = st.cycles;
    d["faults"] = st.faults;
    d["key_reloads"] = st.key_reloads;
    d["interrupted"] = st.interrupted;
    padlock[py::str(isa::kInstructions[i].guide_name)] = d;
  }
  py::dict diag;
  for (size_t i = 0; i < static_cast<size_t>(Diag::Count); ++i) {
    if (s.diag[i] != 0) diag[py::str(diag_info(static_cast<Diag>(i)).name)] = s.diag[i];
  }
  py::dict out;
  out["padlock"] = padlock;
  out["padlock_cycles"] = s.padlock_cycles;
  out["instructions"] = s.guest_insns;
  out["syscalls"] = s.syscalls;
  out["signals_delivered"] = s.signals_delivered;
  out["blocks_decoded"] = s.blocks_decoded;
  out["eflags30_clears"] = s.eflags30_clears;
  out["diagnostics"] = diag;
  return out;
}

void bind_run(py::module_& m) {
  register_error<emu::LoadError>(m, "LoadError",
                                 "The emulator cannot run this program (one-line reason)",
                                 m.attr("PadlockError").ptr());

  m.def(
      "run_features",
      [] {
        py::dict f;
        for (const char* name : kRunFeatures) f[name] = true;
        return f;
      },
      "Which RunOptions this build's emulator has (options the Python run() passes through)");

  m.def(
      "run_guest",
      [](const std::vector<std::string>& argv, const std::string& program, const CpuModel& cpu,
         const py::object& mhz, const std::vector<std::string>& envp, const py::bytes& stdin_data,
         const py::object& seed, bool errata, bool strace, bool stats, bool icount,
         const std::string& sysroot, const py::object& irq_hz, const std::string& trace,
         const std::string& chrome_trace, const std::string& profile, double timeout,
         std::optional<bool> timing, const std::string& check, const std::string& check_jsonl,
         const std::string& check_sarif, const py::object& gdb, bool cache_x86,
         const std::string& memory) {
        // The CLI's checks and messages (emulator/options/option_checks.hpp): ValueError.
        emu::RunOptions o;
        o.program = program;
        o.argv = argv;
        o.envp = envp;
        o.cpu = &cpu;
        if (const auto v = number_option(mhz, mhz_message))
          o.mhz = emu::check_mhz(*v, emu::number_text(*v));
        if (!seed.is_none()) {
          if (!py::isinstance<py::int_>(seed) || py::isinstance<py::bool_>(seed))
            throw py::type_error(seed_message(py::str(seed)));
          o.seed = emu::parse_seed(py::str(seed));
        }
        o.errata = errata;
        o.strace = strace;
        o.stats = stats;
        o.icount = icount;
        if (timing) o.timing = *timing;
        o.cache_x86 = cache_x86;
        if (!memory.empty()) o.direct_memory = emu::parse_memory(memory);
        o.sysroot = sysroot;
        if (!sysroot.empty()) emu::check_sysroot(sysroot);
        if (const auto v = number_option(irq_hz, emu::irq_hz_message))
          o.irq_hz = emu::check_irq_hz(*v, emu::number_text(*v));
        o.trace_file = trace;
        o.chrome_trace_file = chrome_trace;
        o.profile_file = profile;
        if (!check.empty()) o.check = emu::parse_check(check);
        o.check_jsonl_file = check_jsonl;
        o.check_sarif_file = check_sarif;
        if (const auto v = number_option(gdb, emu::port_message))
          o.gdb_port = emu::check_port(*v, emu::number_text(*v));
        emu::check_clock(o);
        const std::string in = stdin_data;
        const GuestRunOutput r = run_guest(o, in, timeout);
        if (r.interrupted) {
          // Python's SIGINT handler runs now (KeyboardInterrupt by default); the guest's
          // outputs are already closed.
          SigintGuard::interrupt_python();
        }
        py::dict d;
        d["exited"] = !r.result.signaled;
        d["exit_code"] = r.result.exit_code;
        d["signal"] = r.result.signal;
        d["core"] = r.result.core;
        d["timed_out"] = r.timed_out;
        d["stdout"] = py::bytes(r.out);
        d["stderr"] = py::bytes(r.err);
        d["log"] = py::str(r.log);
        d["stats"] = stats_to_dict(r.stats);
        d["cycles"] = r.cycles;
        d["mhz"] = r.mhz;
        d["check_error"] = r.result.check_error;
        return d;
      },
      py::arg("argv"), py::arg("program"), py::arg("cpu"), py::arg("mhz") = py::none(),
      py::arg("envp") = std::vector<std::string>{}, py::arg("stdin") = py::bytes(),
      py::arg("seed") = py::none(), py::arg("errata") = true, py::arg("strace") = false,
      py::arg("stats") = false, py::arg("icount") = true, py::arg("sysroot") = "",
      py::arg("irq_hz") = py::none(), py::arg("trace") = "", py::arg("chrome_trace") = "",
      py::arg("profile") = "", py::arg("timeout") = 0.0, py::arg("timing") = py::none(),
      py::arg("check") = "", py::arg("check_jsonl") = "", py::arg("check_sarif") = "",
      py::arg("gdb") = py::none(), py::arg("cache_x86") = false, py::arg("memory") = "",
      "Run a guest program in this process (see padlock_emu.run); returns a dict");
}

}  // namespace padlock::python
