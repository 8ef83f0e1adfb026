// Hand-written pybind11 glue for padlock_emu._core, one file per area. The glue only
// exposes C++ names and data; it adds no semantics of its own.
#pragma once

#include <pybind11/pybind11.h>

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

}  // namespace padlock::python
