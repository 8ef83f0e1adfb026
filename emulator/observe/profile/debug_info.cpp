#include "emulator/observe/profile/debug_info.hpp"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace padlock::emu::profile {

namespace {

bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Where libdwfl looks: ":.debug:<sysroot>/usr/lib/debug:/usr/lib/debug" ("": next to the
// file; ".debug": its .debug/; absolute: build-id, and the debuglink under the host path).
std::string debuginfo_path(const std::string& sysroot) {
  std::string p = ":.debug";
  if (!sysroot.empty()) p += ":" + sysroot + "/usr/lib/debug";
  return p + ":/usr/lib/debug";
}

}  // namespace

struct DebugInfo::Search {
  std::string sysroot;    // "" or the -L directory, without a trailing slash
  std::string guest_dir;  // the file's directory as the guest names it
  std::string path;       // debuginfo_path for the standard search
  char* path_c = nullptr;
  Dwfl_Callbacks callbacks{};
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;

  ~Search() {
    if (dwfl != nullptr) dwfl_end(dwfl);
    std::free(path_c);
  }

  // Whether a file the standard search would try exists: the build-id file under each
  // debug directory, or the debuglink (or, for the alternate file, its absolute name) next
  // to the file, in its .debug/ or mirrored under each debug directory. When none does,
  // the standard search is not run: past the local files it asks debuginfod, which costs a
  // dlopen of its client (libcurl and some twenty libraries, more than the rest of a short
  // --check run) and would download files when DEBUGINFOD_URLS is set.
  bool any_local_candidate(Dwfl_Module* mod, const char* file_name,
                           const char* debuglink_file) const {
    std::vector<std::string> dirs = {"/usr/lib/debug"};
    if (!sysroot.empty()) dirs.insert(dirs.begin(), sysroot + "/usr/lib/debug");
    const unsigned char* id = nullptr;
    GElf_Addr id_vaddr = 0;
    const int id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
    if (id_len > 1) {
      static const char kHex[] = "0123456789abcdef";
      std::string hex;
      for (int i = 0; i < id_len; ++i) {
        hex += kHex[id[i] >> 4];
        hex += kHex[id[i] & 15];
      }
      for (const std::string& d : dirs) {
        if (is_file(d + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug")) {
          return true;
        }
      }
    }
    if (debuglink_file == nullptr) return false;
    const std::string link = debuglink_file;
    if (link.front() == '/') return is_file(link) || (!sysroot.empty() && is_file(sysroot + link));
    std::string dir = file_name != nullptr ? file_name : "";
    dir = dir.substr(0, dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/'));
    if (is_file(dir + "/" + link) || is_file(dir + "/.debug/" + link)) return true;
    for (const std::string& d : dirs) {
      if (is_file(d + dir + "/" + link) || is_file(d + guest_dir + "/" + link)) return true;
    }
    return false;
  }

  // The standard search (when a local file may match), then the debuglink mirrored under
  // <sysroot>/usr/lib/debug with the guest's directory (the standard search mirrors the
  // host path, sysroot included).
  static int find(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                  const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                  char** debuginfo_file_name) {
    const Search* s = static_cast<const Search*>(*userdata);
    if (s != nullptr && !s->any_local_candidate(mod, file_name, debuglink_file)) return -1;
    const int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
                                                debuglink_file, debuglink_crc, debuginfo_file_name);
    if (fd >= 0 || s == nullptr || debuglink_file == nullptr || s->sysroot.empty()) return fd;
    const std::string candidate =
        s->sysroot + "/usr/lib/debug" + s->guest_dir + "/" + debuglink_file;
    if (!is_file(candidate)) return fd;
    const int cfd = open(candidate.c_str(), O_RDONLY | O_CLOEXEC);
    if (cfd >= 0) *debuginfo_file_name = strdup(candidate.c_str());
    return cfd;
  }
};

DebugInfo::DebugInfo(const std::string& host_path, const std::string& sysroot)
    : search_(new Search) {
  Search& s = *search_;
  s.sysroot = sysroot;
  while (s.sysroot.size() > 1 && s.sysroot.back() == '/') s.sysroot.pop_back();
  std::string guest = host_path;
  if (!s.sysroot.empty() && guest.rfind(s.sysroot + "/", 0) == 0) {
    guest = guest.substr(s.sysroot.size());
  }
  s.guest_dir = guest.substr(0, guest.find_last_of('/'));
  s.path = debuginfo_path(s.sysroot);
  s.path_c = strdup(s.path.c_str());
  s.callbacks.find_elf = dwfl_build_id_find_elf;
  s.callbacks.find_debuginfo = &Search::find;
  s.callbacks.debuginfo_path = &s.path_c;
  s.dwfl = dwfl_begin(&s.callbacks);
  if (s.dwfl == nullptr) return;
  dwfl_report_begin(s.dwfl);
  s.module = dwfl_report_offline(s.dwfl, guest.c_str(), host_path.c_str(), -1);
  dwfl_report_end(s.dwfl, nullptr, nullptr);
  if (s.module == nullptr) return;
  void** userdata = nullptr;
  dwfl_module_info(s.module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (userdata != nullptr) *userdata = &s;
  Dwarf_Addr bias = 0;
  dwfl_module_getelf(s.module, &bias);  // the main file, then its debug file:
  if (dwfl_module_getdwarf(s.module, &bias) == nullptr) dwfl_module_getsymtab(s.module);
  const char* debug_file = nullptr;
  dwfl_module_info(s.module, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &debug_file);
  if (debug_file == nullptr) return;
  debug_file_ = debug_file;
}

DebugInfo::~DebugInfo() = default;

const std::vector<FunctionSymbol>& DebugInfo::functions() const {
  if (functions_read_) return functions_;
  functions_read_ = true;
  Dwfl_Module* mod = search_->module;
  Dwarf_Addr bias = 0;
  if (mod == nullptr || dwfl_module_getelf(mod, &bias) == nullptr) return functions_;
  std::vector<SymbolCandidate> cands;
  const int n = dwfl_module_getsymtab(mod);
  for (int i = 1; i < n; ++i) {  // 0: the null symbol
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word shndx = SHN_UNDEF;
    Elf* elf = nullptr;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, nullptr);
    const int type = GELF_ST_TYPE(sym.st_info);
    if (name == nullptr || name[0] == '\0' || (type != STT_FUNC && type != STT_GNU_IFUNC) ||
        shndx == SHN_UNDEF || sym.st_value == 0) {
      continue;
    }
    // `addr` is in the module's addresses, whichever file (the debug file) held the symbol.
    const uint64_t link = addr - bias;
    uint64_t section_end = UINT64_MAX;
    GElf_Shdr shdr_mem;
    Elf_Scn* scn = elf != nullptr ? elf_getscn(elf, shndx) : nullptr;
    if (const GElf_Shdr* shdr = scn != nullptr ? gelf_getshdr(scn, &shdr_mem) : nullptr) {
      section_end = shdr->sh_addr + shdr->sh_size + (link - sym.st_value);
    }
    cands.push_back(
        {{link, sym.st_size, name}, static_cast<uint8_t>(GELF_ST_BIND(sym.st_info)), section_end});
  }
  functions_ = function_table(std::move(cands));
  return functions_;
}

bool DebugInfo::line_at(uint64_t link_addr, SourceLine& out) const {
  if (search_->module == nullptr) return false;
  // libdwfl addresses an offline module at its link-time addresses (bias 0).
  Dwfl_Line* line = dwfl_module_getsrc(search_->module, link_addr);
  if (line == nullptr) return false;
  int lineno = 0;
  const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
  if (file == nullptr) return false;
  out.file = file;
  out.line = lineno;
  return true;
}

bool DebugInfo::caller_line_at(uint64_t link_addr, SourceLine& out) const {
  if (!line_at(link_addr, out)) return false;
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(search_->module, link_addr, &bias);
  Dwarf_Files* files = nullptr;
  size_t nfiles = 0;
  if (cu == nullptr || dwarf_getsrcfiles(cu, &files, &nfiles) != 0) return true;
  // Innermost scope first. Each inlined_subroutine's call site lies in the next scope out;
  // dwarf_getscopes_die continues from an inlined instance into the code it was inlined
  // into (as eu-addr2line -i walks it), until the real function.
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes(cu, link_addr - bias, &scopes);
  for (int i = 0; i < n; ++i) {
    if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
    Dwarf_Attribute attr;
    Dwarf_Word line = 0, file = 0;
    if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &line) == 0 &&
        dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &file) == 0 && line != 0 &&
        file < nfiles) {
      if (const char* name = dwarf_filesrc(files, file, nullptr, nullptr)) {
        out.file = name;
        out.line = static_cast<int>(line);
      }
    }
    Dwarf_Die inlined = scopes[i];
    std::free(scopes);
    scopes = nullptr;
    n = dwarf_getscopes_die(&inlined, &scopes);  // [0] is the instance itself
    i = 0;
  }
  std::free(scopes);
  return true;
}

}  // namespace padlock::emu::profile
