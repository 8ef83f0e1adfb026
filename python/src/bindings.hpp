// Hand-written pybind11 glue for padlock_emu._core, one file per area. The glue only
// exposes C++ names and data; it adds no semantics of its own.
#pragma once

#include <pybind11/pybind11.h>

namespace padlock::python {

void bind_isa(pybind11::module_& m);    // instruction table, decoder, control word, MSRs
void bind_cpu(pybind11::module_& m);    // CPU models, Params, diagnostics table
void bind_model(pybind11::module_& m);  // DirectModel (padlock_emu.Model), Outcome

}  // namespace padlock::python
