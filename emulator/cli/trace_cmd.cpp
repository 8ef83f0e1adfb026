// `padlock-emu trace summary FILE` and `padlock-emu trace diff [--ignore F,...] A B`:
// the readers of --trace files (emulator/trace_reader/trace_summary.hpp, trace_diff.hpp).
#include <string>
#include <vector>

#include "emulator/cli/cli.hpp"
#include "emulator/trace_reader/trace_diff.hpp"
#include "emulator/trace_reader/trace_file.hpp"
#include "emulator/trace_reader/trace_summary.hpp"

namespace padlock::cli {

namespace {

constexpr const char* kUsage =
    "usage: padlock-emu trace summary FILE\n"
    "       padlock-emu trace diff [--ignore FIELD[,FIELD...]] A B\n"
    "\n"
    "FILE, A and B are --trace files (JSON Lines, schema in traces/README.md).\n"
    "summary  PadLock instructions per kind and per function: count, bytes, cycles and\n"
    "         their share, key reloads, interruptions, faults, restarts; diagnostics\n"
    "diff     the first instruction whose results or cycles differ, field by field;\n"
    "         exit status 0 when the traces agree, 1 when they differ, 2 on errors.\n"
    "         --ignore leaves fields out (dotted paths: pc, in, out.eax, result.addr ...)\n";

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string part = s.substr(start, comma == std::string::npos ? s.npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int run_trace_command(const std::vector<std::string>& args, FILE* out, FILE* err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? err : out);
    return args.empty() ? 2 : 0;
  }
  const std::string& sub = args[0];
  std::string error;
  if (sub == "summary") {
    if (args.size() != 2) {
      std::fprintf(err, "padlock-emu: trace summary expects one FILE\n");
      return 2;
    }
    emu::trace::TraceFile t;
    if (!emu::trace::read_trace(args[1], t, error)) {
      std::fprintf(err, "padlock-emu: %s\n", error.c_str());
      return 2;
    }
    emu::trace::print_summary(out, t, emu::trace::summarize(t));
    return 0;
  }
  if (sub == "diff") {
    std::vector<std::string> files, ignore;
    for (size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--ignore" && i + 1 < args.size()) {
        for (std::string& f : split_commas(args[++i])) ignore.push_back(std::move(f));
      } else if (a.rfind("--ignore=", 0) == 0) {
        for (std::string& f : split_commas(a.substr(9))) ignore.push_back(std::move(f));
      } else if (!a.empty() && a[0] == '-') {
        std::fprintf(err, "padlock-emu: trace diff: unknown option '%s'\n", a.c_str());
        return 2;
      } else {
        files.push_back(a);
      }
    }
    if (files.size() != 2) {
      std::fprintf(err, "padlock-emu: trace diff expects two files, A and B\n");
      return 2;
    }
    emu::trace::TraceFile a, b;
    if (!emu::trace::read_trace(files[0], a, error) ||
        !emu::trace::read_trace(files[1], b, error)) {
      std::fprintf(err, "padlock-emu: %s\n", error.c_str());
      return 2;
    }
    const emu::trace::TraceDiff d = emu::trace::diff_traces(a, b, ignore);
    emu::trace::print_diff(out, a, b, d);
    return d.same() ? 0 : 1;
  }
  std::fprintf(err, "padlock-emu: unknown trace command '%s' (summary, diff)\n", sub.c_str());
  return 2;
}

}  // namespace padlock::cli
