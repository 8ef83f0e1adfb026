// CPU models (models/cpu_model.hpp) and the diagnostics table (models/diagnostics.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.hpp"
#include "models/cpu_model.hpp"
#include "models/cpu_params.hpp"
#include "models/diagnostics.hpp"

namespace py = pybind11;

namespace padlock::python {

namespace {

std::vector<std::string> split_aliases(const char* aliases) {
  std::vector<std::string> out;
  std::string_view rest(aliases);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    out.emplace_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

std::vector<std::string> unit_names(const Units& u) {
  std::vector<std::string> out;
  if (u.rng) out.push_back("RNG");
  if (u.ace) out.push_back("ACE");
  if (u.ace2) out.push_back("ACE2");
  if (u.phe) out.push_back("PHE");
  if (u.pmm) out.push_back("PMM");
  if (u.phe2) out.push_back("PHE2");
  if (u.ccs) out.push_back("CCS");
  if (u.sm2) out.push_back("SM2");
  if (u.rsa) out.push_back("RSA");
  if (u.rng2) out.push_back("RNG2");
  return out;
}

py::dict params_dict(const CpuModel& c) {
  py::dict d;
  for (const NamedParam& p : cpu_params(c)) d[py::str(p.name)] = py::cast(p);
  return d;
}

py::dict settings_dict(const CpuModel& c) {
  py::dict d;
  for (const NamedParam& s : cpu_settings(c)) d[py::str(s.name)] = s.value;
  return d;
}

}  // namespace

const CpuModel& cpu_arg(const py::object& cpu) {
  if (py::isinstance<CpuModel>(cpu)) return cpu.cast<const CpuModel&>();
  const std::string name = cpu.cast<std::string>();
  if (const CpuModel* c = find_cpu_model(name)) return *c;
  throw py::value_error(unknown_cpu_model_message(name));
}

void bind_cpu(py::module_& m) {
  py::class_<NamedParam>(
      m, "Param",
      "A sourced constant: value, unit and the guide section it comes from, with the help "
      "text of its field")
      .def_property_readonly("name", [](const NamedParam& p) { return p.name; })
      .def_readonly("value", &NamedParam::value)
      .def_property_readonly("unit", [](const NamedParam& p) { return std::string(p.unit); })
      .def_property_readonly("source", [](const NamedParam& p) { return std::string(p.source); })
      .def_property_readonly("help", [](const NamedParam& p) { return std::string(p.help); })
      .def("__float__", [](const NamedParam& p) { return p.value; })
      .def("__repr__", [](const NamedParam& p) {
        return "Param(" + py::repr(py::float_(p.value)).cast<std::string>() + ", " +
               py::repr(py::str(p.unit)).cast<std::string>() + ", " +
               py::repr(py::str(p.source)).cast<std::string>() + ")";
      });

  py::class_<Units>(m, "Units", "PadLock units present on the chip (§1.1, §1.3)")
      .def_readonly("rng", &Units::rng)
      .def_readonly("ace", &Units::ace)
      .def_readonly("ace2", &Units::ace2)
      .def_readonly("phe", &Units::phe)
      .def_readonly("pmm", &Units::pmm)
      .def_readonly("phe2", &Units::phe2)
      .def_readonly("ccs", &Units::ccs)
      .def_readonly("sm2", &Units::sm2)
      .def_readonly("rsa", &Units::rsa)
      .def_readonly("rng2", &Units::rng2)
      .def_property_readonly("names", [](const Units& u) { return unit_names(u); })
      .def("__repr__", [](const Units& u) {
        std::string r = "Units(";
        for (const std::string& n : unit_names(u)) r += (r.back() == '(' ? "" : ", ") + n;
        return r + ")";
      });

  py::enum_<RngVariant>(m, "RngVariant")
      .value("Nehemiah", RngVariant::Nehemiah)
      .value("Esther", RngVariant::Esther);

  py::class_<CpuidLeaf>(m, "CpuidLeaf")
      .def_readonly("leaf", &CpuidLeaf::leaf)
      .def_readonly("subleaf", &CpuidLeaf::subleaf)
      .def_readonly("eax", &CpuidLeaf::eax)
      .def_readonly("ebx", &CpuidLeaf::ebx)
      .def_readonly("ecx", &CpuidLeaf::ecx)
      .def_readonly("edx", &CpuidLeaf::edx)
      .def_property_readonly("source", [](const CpuidLeaf& l) { return std::string(l.source); });

  py::class_<CpuModel>(m, "CpuModel", "One CPU model (models/cpus/*.hpp)")
      .def_property_readonly("name", [](const CpuModel& c) { return std::string(c.name); })
      .def_property_readonly("aliases", [](const CpuModel& c) { return split_aliases(c.aliases); })
      .def_property_readonly("core", [](const CpuModel& c) { return std::string(c.core); })
      .def_property_readonly("description",
                             [](const CpuModel& c) { return std::string(c.description); })
      .def_property_readonly("brand", [](const CpuModel& c) { return std::string(c.brand); })
      .def_readonly("family", &CpuModel::family)
      .def_readonly("model", &CpuModel::model)
      .def_readonly("stepping", &CpuModel::stepping)
      .def_readonly("long_mode", &CpuModel::long_mode)
      .def_property_readonly("default_mhz", &default_mhz_param)
      .def_property_readonly(
          "units", [](const CpuModel& c) { return &c.units; },
          py::return_value_policy::reference_internal)
      .def_readonly("ctr_errata", &CpuModel::ctr_errata)
      .def_readonly("msr_rng_reset", &CpuModel::msr_rng_reset)
      .def_readonly("has_fcr", &CpuModel::has_fcr)
      .def_readonly("msr_fcr_reset", &CpuModel::msr_fcr_reset)
      .def_property_readonly(
          "cpuid",
          [](const CpuModel& c) { return std::vector<CpuidLeaf>(c.cpuid.begin(), c.cpuid.end()); })
      .def_property_readonly("params", &params_dict,
                             "Every sourced constant by dotted name, e.g. 'ace.ecb_sse_base[0][1]'")
      .def_property_readonly("settings", &settings_dict,
                             "Model settings that are not sourced Params (flags, counts, enums)")
      .def(
          "with_units",
          [](const CpuModel& c, std::optional<bool> phe2, std::optional<bool> ccs,
             std::optional<bool> sm2, std::optional<bool> rsa, std::optional<bool> rng2) {
            CpuModel m = c;
            m.units.phe2 = phe2.value_or(c.units.phe2);
            m.units.ccs = ccs.value_or(c.units.ccs);
            m.units.sm2 = sm2.value_or(c.units.sm2);
            m.units.rsa = rsa.value_or(c.units.rsa);
            m.units.rng2 = rng2.value_or(c.units.rng2);
            return m;
          },
          py::arg("phe2") = py::none(), py::arg("ccs") = py::none(), py::arg("sm2") = py::none(),
          py::arg("rsa") = py::none(), py::arg("rng2") = py::none(),
          "A copy of this model with the late Nano's and Zhaoxin's units switched on or off "
          "(PHE2, CCS, SM2, RSA, RNG2; C000_0001 EDX follows): to try those units on a model "
          "that lacks them")
      .def("__repr__", [](const CpuModel& c) { return std::string("<CpuModel ") + c.name + ">"; });

  m.def(
      "cpu_models",
      [] {
        py::list out;
        for (const CpuModel* c : all_cpu_models())
          out.append(py::cast(c, py::return_value_policy::reference));
        return out;
      },
      "All CPU models, in the order `padlock-emu cpus` lists them");
  m.def(
      "unknown_cpu_model_message",
      [](const std::string& name) { return unknown_cpu_model_message(name); },
      "The CLI's message for a CPU model name no model has");
  m.def(
      "find_cpu_model",
      [](const std::string& name) -> const CpuModel* { return find_cpu_model(name); },
      py::arg("name"), py::return_value_policy::reference, "A model by name or alias, or None");
  m.def("_param_coverage_gaps", &cpu_param_coverage_gaps,
        "Fields of the Params structs outside their field lists (should be empty)");

  py::enum_<Diag> diag(
      m, "Diag", "Undefined or guide-silent cases the models report (models/diagnostics.hpp)");
  for (size_t i = 0; i < static_cast<size_t>(Diag::Count); ++i) {
    const DiagInfo& info = diag_info(static_cast<Diag>(i));
    // Python names from the stable trace identifiers: "repne-prefix" -> "repne_prefix".
    std::string name = info.name;
    for (char& ch : name)
      if (ch == '-') ch = '_';
    diag.value(name.c_str(), info.id);
  }
  py::class_<DiagInfo>(m, "DiagInfo")
      .def_readonly("id", &DiagInfo::id)
      .def_property_readonly("name", [](const DiagInfo& d) { return std::string(d.name); })
      .def_property_readonly("section", [](const DiagInfo& d) { return std::string(d.section); })
      .def_property_readonly("choice", [](const DiagInfo& d) { return std::string(d.choice); })
      .def_property_readonly(
          "shown", [](const DiagInfo& d) { return d.kind == DiagKind::UndefinedUse; },
          "False for undefined output fields, which are counted, not printed")
      .def("__repr__", [](const DiagInfo& d) { return std::string("<DiagInfo ") + d.name + ">"; });
  m.def("diag_info", &diag_info, py::return_value_policy::reference);
  m.def(
      "diagnostics",
      [] {
        py::list out;
        for (size_t i = 0; i < static_cast<size_t>(Diag::Count); ++i) {
          out.append(py::cast(diag_info(static_cast<Diag>(i)), py::return_value_policy::reference));
        }
        return out;
      },
      "The whole diagnostics table");
}

}  // namespace padlock::python
