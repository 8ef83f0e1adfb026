// Hand-written pybind11 glue for padlock_emu._core, one file per area. The glue only
// exposes C++ names and data; it adds no semantics of its own.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <exception>
#include <string>

#include "models/cpu_model.hpp"
#include "models/padlock.hpp"

#ifdef PADLOCK_PY_EMULATOR
#include "emulator/observe/stats.hpp"
#endif

namespace padlock::python {

void bind_isa(pybind11::module_& m);    // instruction table, decoder, control word, MSRs
void bind_cpu(pybind11::module_& m);    // CPU models, Params, diagnostics table
void bind_model(pybind11::module_& m);  // DirectModel (padlock_emu.Model), Outcome
#ifdef PADLOCK_PY_EMULATOR
void bind_run(pybind11::module_& m);      // run_guest: whole programs under the emulator
void bind_machine(pybind11::module_& m);  // Machine, ObjectLoader: the function harness
#endif

#ifdef PADLOCK_PY_EMULATOR
pybind11::dict stats_to_dict(const emu::Stats& s);  // bind_run.cpp
#endif

// The `cpu` argument of Model() and Machine(): a CpuModel, or a name or alias of one;
// otherwise ValueError naming the known models (bind_cpu.cpp).
const CpuModel& cpu_arg(const pybind11::object& cpu);

// The PadlockConfig of the seed, host_entropy and errata arguments.
inline PadlockConfig padlock_config(uint64_t seed, bool host_entropy, bool errata) {
  PadlockConfig c;
  c.seed = seed;
  c.host_entropy = host_entropy;
  c.errata = errata;
  return c;
}

// Creates the exception class padlock_emu._core.<name> (derived from `base`, a class or a
// tuple of classes) as m.<name>, and turns the C++ exception E into it with E's what().
// One E per class: the class object lives in this instantiation's static.
template <typename E>
PyObject* register_error(pybind11::module_& m, const char* name, const char* doc, PyObject* base) {
  static PyObject* const type = PyErr_NewExceptionWithDoc(
      (std::string("padlock_emu._core.") + name).c_str(), doc, base, nullptr);
  m.attr(name) = pybind11::handle(type);
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const E& e) {
      PyErr_SetString(type, e.what());
    }
  });
  return type;
}

}  // namespace padlock::python
