// padlock_emu._core.run_guest: a whole guest program under the emulator, in-process
// (guest_run.hpp), and the run statistics as plain Python data.
//
// Options that other parts of the emulator add to RunOptions (an interrupt model, trace
// and profile writers) are detected at compile time: when RunOptions has the field, the
// value is passed through; when it does not, run_features() says so and the Python layer
// raises NotImplementedError instead of ignoring the option.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "bindings.hpp"
#include "emulator/loader/elf_loader.hpp"
#include "emulator/run_options.hpp"
#include "guest_run.hpp"
#include "isa/instruction_table.hpp"
#include "models/cpu_model.hpp"

namespace py = pybind11;

namespace padlock::python {

namespace {

template <typename T>
concept HasIrqHz = requires(T o) { o.irq_hz; };
template <typename T>
concept HasTraceFile = requires(T o) { o.trace_file; };
template <typename T>
concept HasChromeTraceFile = requires(T o) { o.chrome_trace_file; };
template <typename T>
concept HasProfileFile = requires(T o) { o.profile_file; };
template <typename T>
concept HasSysroot = requires(T o) { o.sysroot; };
template <typename T>
concept HasTiming = requires(T o) { o.timing; };

template <typename T>
void set_irq_hz(T& o, double hz) {
  if constexpr (HasIrqHz<T>) {
    o.irq_hz = static_cast<std::remove_reference_t<decltype(o.irq_hz)>>(hz);
  }
}
template <typename T>
void set_trace(T& o, const std::string& path) {
  if constexpr (HasTraceFile<T>) o.trace_file = path;
}
template <typename T>
void set_chrome_trace(T& o, const std::string& path) {
  if constexpr (HasChromeTraceFile<T>) o.chrome_trace_file = path;
}
template <typename T>
void set_profile(T& o, const std::string& path) {
  if constexpr (HasProfileFile<T>) o.profile_file = path;
}
template <typename T>
void set_sysroot(T& o, const std::string& path) {
  if constexpr (HasSysroot<T>) o.sysroot = path;
}
template <typename T>
void set_timing(T& o, bool on) {
  if constexpr (HasTiming<T>) o.timing = on;
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
  static PyObject* load_error = PyErr_NewExceptionWithDoc(
      "padlock_emu._core.LoadError", "The emulator cannot run this program (one-line reason)",
      m.attr("PadlockError").ptr(), nullptr);
  m.attr("LoadError") = py::handle(load_error);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const emu::LoadError& e) {
      PyErr_SetString(load_error, e.what());
    }
  });

  m.def(
      "run_features",
      [] {
        py::dict f;
        f["irq_hz"] = HasIrqHz<emu::RunOptions>;
        f["trace"] = HasTraceFile<emu::RunOptions>;
        f["chrome_trace"] = HasChromeTraceFile<emu::RunOptions>;
        f["profile"] = HasProfileFile<emu::RunOptions>;
        f["sysroot"] = HasSysroot<emu::RunOptions>;
        f["timing"] = HasTiming<emu::RunOptions>;
        return f;
      },
      "Which RunOptions this build's emulator has (options the Python run() passes through)");

  m.def(
      "run_guest",
      [](const std::vector<std::string>& argv, const std::string& program, const CpuModel& cpu,
         double mhz, const std::vector<std::string>& envp, const py::bytes& stdin_data,
         uint64_t seed, bool errata, bool strace, bool stats, bool icount,
         const std::string& sysroot, std::optional<double> irq_hz, const std::string& trace,
         const std::string& chrome_trace, const std::string& profile, double timeout,
         std::optional<bool> timing) {
        emu::RunOptions o;
        o.program = program;
        o.argv = argv;
        o.envp = envp;
        o.cpu = &cpu;
        o.mhz = mhz;
        o.seed = seed;
        o.errata = errata;
        o.strace = strace;
        o.stats = stats;
        o.icount = icount;
        auto unsupported = [](const char* what) {
          PyErr_SetString(PyExc_NotImplementedError, what);
          throw py::error_already_set();
        };
        if (timing) {
          if (!HasTiming<emu::RunOptions>)
            unsupported("timing: this emulator build has no timing switch");
          set_timing(o, *timing);
        }
        if (!sysroot.empty()) {
          if (!HasSysroot<emu::RunOptions>)
            unsupported("sysroot: this emulator build has no sysroot support");
          set_sysroot(o, sysroot);
        }
        if (irq_hz) {
          if (!HasIrqHz<emu::RunOptions>)
            unsupported("irq_hz: this emulator build has no interrupt model");
          set_irq_hz(o, *irq_hz);
        }
        if (!trace.empty()) {
          if (!HasTraceFile<emu::RunOptions>)
            unsupported("trace: this emulator build writes no traces");
          set_trace(o, trace);
        }
        if (!chrome_trace.empty()) {
          if (!HasChromeTraceFile<emu::RunOptions>)
            unsupported("chrome_trace: not in this emulator build");
          set_chrome_trace(o, chrome_trace);
        }
        if (!profile.empty()) {
          if (!HasProfileFile<emu::RunOptions>)
            unsupported("profile: this emulator build has no profiler");
          set_profile(o, profile);
        }
        const std::string in = stdin_data;
        const GuestRunOutput r = run_guest(o, in, timeout);
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
        return d;
      },
      py::arg("argv"), py::arg("program"), py::arg("cpu"), py::arg("mhz") = 0.0,
      py::arg("envp") = std::vector<std::string>{}, py::arg("stdin") = py::bytes(),
      py::arg("seed") = 0, py::arg("errata") = true, py::arg("strace") = false,
      py::arg("stats") = false, py::arg("icount") = true, py::arg("sysroot") = "",
      py::arg("irq_hz") = py::none(), py::arg("trace") = "", py::arg("chrome_trace") = "",
      py::arg("profile") = "", py::arg("timeout") = 0.0, py::arg("timing") = py::none(),
      "Run a guest program in this process (see padlock_emu.run); returns a dict");
}

}  // namespace padlock::python
