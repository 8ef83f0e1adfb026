#include "emulator/observe/check/report.hpp"

#include <cinttypes>
#include <nlohmann/json.hpp>

namespace padlock::emu::check {

namespace {

std::string where(const Frame& f) {
  char pc[24];
  std::snprintf(pc, sizeof pc, "0x%" PRIx64, f.pc);
  std::string s = pc;
  if (!f.function.empty()) s += " in " + f.function;
  if (!f.module.empty()) {
    std::snprintf(pc, sizeof pc, "+0x%" PRIx64, f.offset);
    s += pc + (" [" + f.module + "]");
  }
  if (!f.file.empty()) s += " (" + f.file + ":" + std::to_string(f.line) + ")";
  return s;
}

// The guide's name of the instruction, or WRMSR for an MSR write (Checker::on_msr_write).
const char* insn_name(const Finding& f) {
  return f.insn == isa::InsnId::Count ? "WRMSR" : isa::info(f.insn).guide_name;
}

std::string message(const Finding& f) {
  const KindInfo& k = kind_info(f.kind);
  std::string m = std::string(insn_name(f)) + ": " + k.summary;
  if (!f.detail.empty() && f.detail != k.name) m += " [" + f.detail + "]";
  return m;
}

using Json = nlohmann::ordered_json;

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

// The JSON text of a log or record: compact; bytes that are not UTF-8 (a program name from
// a Latin-1 file system) become U+FFFD, so the file stays valid JSON (RFC 8259 §8.1).
std::string text(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// One backtrace frame (JSON Lines); system mode's kernel module and the offset in the
// function (Frame::module).
Json frame_json(const Frame& f) {
  Json j;
  j["pc"] = hex(f.pc);
  if (!f.function.empty()) j["function"] = f.function;
  if (!f.module.empty()) {
    j["module"] = f.module;
    j["offset"] = f.offset;
  }
  if (!f.file.empty()) {
    j["file"] = f.file;
    j["line"] = f.line;
  }
  return j;
}

// SARIF §3.4.3: artifactLocation.uri is a URI reference (RFC 3986): an absolute path becomes
// a file URI; bytes other than unreserved characters and '/' are percent-encoded (a space
// or '#' in a build directory would otherwise make it invalid or cut it).
std::string artifact_uri(const std::string& file) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = file.front() == '/' ? "file://" : "";
  for (const unsigned char c : file) {
    if ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '-' ||
        c == '.' || c == '_' || c == '~' || c == '/') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri;
}

// A SARIF location (§3.28): the source line when known, always the address and the
// function.
Json sarif_location(const Frame& f) {
  Json physical;
  if (!f.file.empty()) {
    physical["artifactLocation"] = {{"uri", artifact_uri(f.file)}};
    physical["region"] = {{"startLine", f.line}};
  }
  physical["address"] = {{"absoluteAddress", f.pc}};
  Json location;
  location["physicalLocation"] = std::move(physical);
  if (!f.function.empty()) {
    Json logical;
    logical["name"] = f.function;
    // A module-qualified name, as debuggers write it (module!function).
    if (!f.module.empty()) logical["fullyQualifiedName"] = f.module + "!" + f.function;
    logical["kind"] = "function";
    location["logicalLocations"] = Json::array({std::move(logical)});
  }
  return location;
}

}  // namespace

void write_text(FILE* out, const std::vector<Finding>& findings) {
  unsigned by_severity[3] = {};
  for (const Finding& f : findings) {
    const KindInfo& k = kind_info(f.kind);
    ++by_severity[static_cast<unsigned>(k.severity)];
    std::fprintf(out, "padlock-emu: check: %s %s (%s) at %s, %" PRIu64 " time%s\n",
                 severity_name(k.severity), k.name, k.section, where(f.frames[0]).c_str(), f.count,
                 f.count == 1 ? "" : "s");
    std::fprintf(out, "padlock-emu: check:   %s\n", message(f).c_str());
    std::fprintf(out, "padlock-emu: check:   chip: %s\n", k.chip);
    for (unsigned i = 1; i < f.depth; ++i) {
      std::fprintf(out, "padlock-emu: check:   called from %s\n", where(f.frames[i]).c_str());
    }
  }
  std::fprintf(out, "padlock-emu: check: %zu finding%s (%u error%s, %u warning%s, %u note%s)\n",
               findings.size(), findings.size() == 1 ? "" : "s", by_severity[2],
               by_severity[2] == 1 ? "" : "s", by_severity[1], by_severity[1] == 1 ? "" : "s",
               by_severity[0], by_severity[0] == 1 ? "" : "s");
}

std::string finding_json(const Finding& f, const ReportInfo& info) {
  const KindInfo& k = kind_info(f.kind);
  const Frame& top = f.frames[0];
  Json j;
  j["kind"] = k.name;
  j["severity"] = severity_name(k.severity);
  j["section"] = k.section;
  j["insn"] = insn_name(f);
  // The top frame's members (pc, function, module, offset, file, line), in its order.
  Json frame = frame_json(top);
  for (auto& [key, value] : frame.items()) j[key] = std::move(value);
  j["count"] = f.count;
  j["first"] = f.first;
  j["message"] = message(f);
  j["chip"] = k.chip;
  Json backtrace = Json::array();
  for (unsigned i = 0; i < f.depth; ++i) backtrace.push_back(frame_json(f.frames[i]));
  j["backtrace"] = std::move(backtrace);
  j["program"] = info.program;
  j["cpu"] = info.cpu;
  return text(j);
}

void write_jsonl(FILE* out, const std::vector<Finding>& findings, const ReportInfo& info) {
  for (const Finding& f : findings) {
    const std::string line = finding_json(f, info) + "\n";
    std::fwrite(line.data(), 1, line.size(), out);
  }
}

std::string sarif_text(const std::vector<Finding>& findings, const ReportInfo& info) {
  Json rules = Json::array();
  for (unsigned i = 0; i < kKindCount; ++i) {
    const KindInfo& k = kind_info(i);
    Json rule;
    rule["id"] = k.name;
    rule["shortDescription"] = {{"text", k.summary}};
    rule["fullDescription"] = {{"text", k.chip}};
    rule["defaultConfiguration"] = {{"level", severity_name(k.severity)}};
    rule["properties"] = {{"guideSection", k.section}};
    rules.push_back(std::move(rule));
  }
  Json results = Json::array();
  for (const Finding& f : findings) {
    const KindInfo& k = kind_info(f.kind);
    Json result;
    result["ruleId"] = k.name;
    result["ruleIndex"] = f.kind;
    result["level"] = severity_name(k.severity);
    result["message"] = {{"text", message(f) + ". Chip: " + k.chip}};
    result["locations"] = Json::array({sarif_location(f.frames[0])});
    Json frames = Json::array();
    for (unsigned i = 0; i < f.depth; ++i) {
      frames.push_back({{"location", sarif_location(f.frames[i])}});
    }
    Json stack;
    stack["frames"] = std::move(frames);
    result["stacks"] = Json::array({std::move(stack)});
    Json properties;
    properties["count"] = f.count;
    properties["guideSection"] = k.section;
    properties["program"] = info.program;
    properties["cpu"] = info.cpu;
    result["properties"] = std::move(properties);
    results.push_back(std::move(result));
  }
  Json driver;
  driver["name"] = "padlock-emu";
  driver["rules"] = std::move(rules);
  Json run;
  run["tool"] = {{"driver", std::move(driver)}};
  run["results"] = std::move(results);
  Json log;
  log["$schema"] = "https://json.schemastore.org/sarif-2.1.0.json";
  log["version"] = "2.1.0";
  log["runs"] = Json::array({std::move(run)});
  return text(log) + "\n";
}

void write_sarif(FILE* out, const std::vector<Finding>& findings, const ReportInfo& info) {
  const std::string s = sarif_text(findings, info);
  std::fwrite(s.data(), 1, s.size(), out);
}

}  // namespace padlock::emu::check
