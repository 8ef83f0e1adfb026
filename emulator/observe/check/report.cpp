#include "emulator/observe/check/report.hpp"

#include <cinttypes>

#include "emulator/observe/trace/json_text.hpp"

namespace padlock::emu::check {

namespace {

using trace::json_hex;
using trace::json_key;
using trace::json_string;
using trace::json_u64;

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

// System mode's kernel module and the offset in the function (Frame::module).
void module_json(std::string& out, const Frame& f) {
  if (f.module.empty()) return;
  json_key(out, "module");
  json_string(out, f.module);
  json_key(out, "offset");
  json_u64(out, f.offset);
}

void frame_json(std::string& out, const Frame& f) {
  out += '{';
  json_key(out, "pc");
  json_hex(out, f.pc, 1);
  if (!f.function.empty()) {
    json_key(out, "function");
    json_string(out, f.function);
  }
  module_json(out, f);
  if (!f.file.empty()) {
    json_key(out, "file");
    json_string(out, f.file);
    json_key(out, "line");
    json_u64(out, f.line);
  }
  out += '}';
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

// A SARIF location: the source line when known, always the address and the function.
void sarif_location(std::string& out, const Frame& f) {
  out += '{';
  json_key(out, "physicalLocation");
  out += '{';
  if (!f.file.empty()) {
    json_key(out, "artifactLocation");
    out += '{';
    json_key(out, "uri");
    json_string(out, artifact_uri(f.file));
    out += '}';
    json_key(out, "region");
    out += '{';
    json_key(out, "startLine");
    json_u64(out, f.line);
    out += '}';
  }
  json_key(out, "address");
  out += '{';
  json_key(out, "absoluteAddress");
  json_u64(out, f.pc);
  out += "}}";
  if (!f.function.empty()) {
    json_key(out, "logicalLocations");
    out += "[{";
    json_key(out, "name");
    json_string(out, f.function);
    if (!f.module.empty()) {
      // A module-qualified name, as debuggers write it (module!function).
      json_key(out, "fullyQualifiedName");
      json_string(out, f.module + "!" + f.function);
    }
    json_key(out, "kind");
    json_string(out, "function");
    out += "}]";
  }
  out += '}';
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
  std::string line;
  line += '{';
  json_key(line, "kind");
  json_string(line, k.name);
  json_key(line, "severity");
  json_string(line, severity_name(k.severity));
  json_key(line, "section");
  json_string(line, k.section);
  json_key(line, "insn");
  json_string(line, insn_name(f));
  json_key(line, "pc");
  json_hex(line, f.pc, 1);
  const Frame& top = f.frames[0];
  if (!top.function.empty()) {
    json_key(line, "function");
    json_string(line, top.function);
  }
  module_json(line, top);
  if (!top.file.empty()) {
    json_key(line, "file");
    json_string(line, top.file);
    json_key(line, "line");
    json_u64(line, top.line);
  }
  json_key(line, "count");
  json_u64(line, f.count);
  json_key(line, "first");
  json_u64(line, f.first);
  json_key(line, "message");
  json_string(line, message(f));
  json_key(line, "chip");
  json_string(line, k.chip);
  json_key(line, "backtrace");
  line += '[';
  for (unsigned i = 0; i < f.depth; ++i) {
    if (i != 0) line += ',';
    frame_json(line, f.frames[i]);
  }
  line += ']';
  json_key(line, "program");
  json_string(line, info.program);
  json_key(line, "cpu");
  json_string(line, info.cpu);
  line += '}';
  return line;
}

void write_jsonl(FILE* out, const std::vector<Finding>& findings, const ReportInfo& info) {
  for (const Finding& f : findings) {
    const std::string line = finding_json(f, info) + "\n";
    std::fwrite(line.data(), 1, line.size(), out);
  }
}

std::string sarif_text(const std::vector<Finding>& findings, const ReportInfo& info) {
  std::string s = "{";
  json_key(s, "$schema");
  json_string(s, "https://json.schemastore.org/sarif-2.1.0.json");
  json_key(s, "version");
  json_string(s, "2.1.0");
  json_key(s, "runs");
  s += "[{";
  json_key(s, "tool");
  s += "{";
  json_key(s, "driver");
  s += "{";
  json_key(s, "name");
  json_string(s, "padlock-emu");
  json_key(s, "rules");
  s += '[';
  for (unsigned i = 0; i < kKindCount; ++i) {
    const KindInfo& k = kind_info(i);
    if (i != 0) s += ',';
    s += '{';
    json_key(s, "id");
    json_string(s, k.name);
    json_key(s, "shortDescription");
    s += '{';
    json_key(s, "text");
    json_string(s, k.summary);
    s += '}';
    json_key(s, "fullDescription");
    s += '{';
    json_key(s, "text");
    json_string(s, k.chip);
    s += '}';
    json_key(s, "defaultConfiguration");
    s += '{';
    json_key(s, "level");
    json_string(s, severity_name(k.severity));
    s += '}';
    json_key(s, "properties");
    s += '{';
    json_key(s, "guideSection");
    json_string(s, k.section);
    s += "}}";
  }
  s += "]}}";
  json_key(s, "results");
  s += '[';
  for (size_t n = 0; n < findings.size(); ++n) {
    const Finding& f = findings[n];
    const KindInfo& k = kind_info(f.kind);
    if (n != 0) s += ',';
    s += '{';
    json_key(s, "ruleId");
    json_string(s, k.name);
    json_key(s, "ruleIndex");
    json_u64(s, f.kind);
    json_key(s, "level");
    json_string(s, severity_name(k.severity));
    json_key(s, "message");
    s += '{';
    json_key(s, "text");
    json_string(s, message(f) + ". Chip: " + k.chip);
    s += '}';
    json_key(s, "locations");
    s += '[';
    sarif_location(s, f.frames[0]);
    s += ']';
    json_key(s, "stacks");
    s += "[{";
    json_key(s, "frames");
    s += '[';
    for (unsigned i = 0; i < f.depth; ++i) {
      if (i != 0) s += ',';
      s += '{';
      json_key(s, "location");
      sarif_location(s, f.frames[i]);
      s += '}';
    }
    s += "]}]";
    json_key(s, "properties");
    s += '{';
    json_key(s, "count");
    json_u64(s, f.count);
    json_key(s, "guideSection");
    json_string(s, k.section);
    json_key(s, "program");
    json_string(s, info.program);
    json_key(s, "cpu");
    json_string(s, info.cpu);
    s += "}}";
  }
  s += "]}]}\n";
  return s;
}

void write_sarif(FILE* out, const std::vector<Finding>& findings, const ReportInfo& info) {
  const std::string s = sarif_text(findings, info);
  std::fwrite(s.data(), 1, s.size(), out);
}

}  // namespace padlock::emu::check
