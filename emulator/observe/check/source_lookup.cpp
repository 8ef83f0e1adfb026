#include "emulator/observe/check/source_lookup.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "emulator/observe/profile/debug_info.hpp"

extern char** environ;

namespace padlock::emu::check {

// FILE:LINE of link-time addresses in the object at `path`, from one run of binutils'
// addr2line; frames stay without a file when the tool is missing or the object has no line
// information ("??:0"). -a prints each address before its lines; -i the inlining chain,
// innermost first: the last line is in the function the symbol table names (an inline asm
// helper's line would name a header).
void addr2line(const std::string& path, const std::string& section,
               const std::vector<std::pair<Frame*, uint64_t>>& at) {
  if (at.empty()) return;
  // Spawned directly, not through popen's shell: the lookup is the checker's one fixed cost
  // at exit (docs/checker.md, "Cost"), and a shell doubles it.
  std::vector<std::string> args = {"addr2line", "-a", "-i", "-e", path};
  if (!section.empty()) args.insert(args.end(), {"-j", section});
  for (const auto& [frame, addr] : at) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, addr);
    args.emplace_back(buf);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, "addr2line", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  FILE* p = spawned == 0 ? fdopen(fds[0], "r") : nullptr;
  if (p == nullptr) {
    close(fds[0]);
    if (spawned == 0) waitpid(pid, nullptr, 0);
    return;
  }
  std::vector<std::string> last(at.size());
  size_t group = 0;
  bool started = false;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p) != nullptr) {
    std::string line(buf);
    if (line.compare(0, 2, "0x") == 0) {
      if (started) ++group;
      started = true;
    } else if (started && group < last.size()) {
      last[group] = line;
    }
  }
  std::fclose(p);
  waitpid(pid, nullptr, 0);
  for (size_t i = 0; i < at.size(); ++i) {
    std::string out = last[i];
    const size_t paren = out.find(" (");  // "(discriminator N)"
    if (paren != std::string::npos) out.resize(paren);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    const size_t colon = out.rfind(':');
    if (colon == std::string::npos || out.compare(0, 2, "??") == 0) continue;
    const unsigned long n = std::strtoul(out.c_str() + colon + 1, nullptr, 10);
    if (n == 0) continue;
    at[i].first->file = out.substr(0, colon);
    at[i].first->line = static_cast<unsigned>(n);
  }
}

bool ObjectSourceLookup::is_code(uint64_t pc) {
  return objects_.object_at(pc) != profile::ObjectMap::kNoObject;
}

uint64_t ObjectSourceLookup::function_entry(uint64_t pc) {
  return objects_.function(objects_.function_at(pc)).entry;
}

void ObjectSourceLookup::locate(Frame* const* frames, size_t n) {
  std::vector<std::vector<std::pair<Frame*, uint64_t>>> by_object(objects_.objects().size());
  for (size_t i = 0; i < n; ++i) {
    Frame& f = *frames[i];
    // In the object mapped when the frame was recorded: a finding in a library the guest
    // closed before exit keeps its names (docs/checker.md, "How it works").
    const uint32_t o = f.object != UINT32_MAX ? f.object : objects_.object_at(f.pc);
    const profile::FunctionInfo& fn = objects_.function(objects_.function_in(o, f.pc));
    if (fn.object == profile::ObjectMap::kNoObject) continue;
    if (fn.entry != 0) f.function = fn.name;
    by_object[fn.object].emplace_back(&f, f.pc - objects_.objects()[fn.object].bias);
  }
  for (size_t o = 0; o < by_object.size(); ++o) {
    if (by_object[o].empty()) continue;
    // In process through libdw: the map's debug information (a separate debug file), else
    // the object's own DWARF, opened now (the map keeps none for it).
    const profile::GuestObject& object = objects_.objects()[o];
    std::unique_ptr<profile::DebugInfo> own;
    const profile::DebugInfo* debug = objects_.debug_info(static_cast<uint32_t>(o));
    if (debug == nullptr && !objects_.file_changed(static_cast<uint32_t>(o))) {
      const std::string& root = objects_.sysroot();
      // The guest names a file under -L DIR by its guest path (the loader falls back to the
      // host's own path when the sysroot has no such file).
      const bool in_root = !root.empty() && object.path.front() == '/' &&
                           access((root + object.path).c_str(), R_OK) == 0;
      own = std::make_unique<profile::DebugInfo>(in_root ? root + object.path : object.path, root);
      debug = own.get();
    }
    if (debug == nullptr) continue;
    for (const auto& [frame, addr] : by_object[o]) {
      profile::SourceLine line;
      if (debug->caller_line_at(addr, line) && line.line > 0) {
        frame->file = line.file;
        frame->line = static_cast<unsigned>(line.line);
      }
    }
  }
}

}  // namespace padlock::emu::check
