// padlock_emu._core: the pybind11 module. See docs/python.md.
#include <pybind11/pybind11.h>

#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() =
      "C++ core of padlock_emu: PadLock instruction table, CPU models and the direct model API";
  padlock::python::bind_isa(m);
  padlock::python::bind_cpu(m);
  padlock::python::bind_model(m);
#ifdef PADLOCK_PY_EMULATOR
  padlock::python::bind_run(m);
  padlock::python::bind_machine(m);
  m.attr("HAS_EMULATOR") = true;
#else
  m.attr("HAS_EMULATOR") = false;
#endif
}
