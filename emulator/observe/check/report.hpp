// The checker's findings as text (stderr), JSON Lines and SARIF 2.1.0 (docs/checker.md).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "emulator/observe/check/finding.hpp"

namespace padlock::emu::check {

struct ReportInfo {
  std::string program;  // the guest program as given
  std::string cpu;      // the model's name
};

// One block per finding and a summary line, each line prefixed "padlock-emu: check: ".
void write_text(FILE* out, const std::vector<Finding>& findings);
// One finding as one JSON object (the JSON Lines record; Python's findings).
std::string finding_json(const Finding& f, const ReportInfo& info);
// One JSON object per line and finding.
void write_jsonl(FILE* out, const std::vector<Finding>& findings, const ReportInfo& info);
// A SARIF 2.1.0 log with one run: a rule per kind, a result per finding.
std::string sarif_text(const std::vector<Finding>& findings, const ReportInfo& info);
void write_sarif(FILE* out, const std::vector<Finding>& findings, const ReportInfo& info);

}  // namespace padlock::emu::check
