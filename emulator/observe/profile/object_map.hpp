// The guest's loaded objects (the executable, the interpreter, shared objects mapped by
// it) with their function symbols, and the function of a guest address. Every function
// gets a dense id for the profiler's tables; addresses inside an object but outside its
// symbols share one "??? (object)" function per object, and addresses outside every object
// (anonymous memory, the stack) one "??? (anonymous)" function.
//
// Mapping an object costs its ELF and program headers only: its symbols, and its separate
// debug information, are read on the first lookup of an address in it, and kept. A lookup
// reads the file the object was mapped from only while the path still names that file
// (same inode, size and modification time); otherwise the object stays without symbols,
// every address in it "??? (object)" (docs/profiling.md, "When symbols are read").
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "emulator/observe/profile/debug_info.hpp"
#include "emulator/observe/profile/elf_segments.hpp"
#include "emulator/observe/profile/function_symbols.hpp"

namespace padlock::emu::profile {

struct FunctionInfo {
  std::string name;
  uint32_t object = 0;  // index into ObjectMap::objects(); kNoObject for anonymous code
  uint64_t entry = 0;   // guest address of the symbol; 0 for the "???" groups
};

struct GuestObject {
  std::string path;  // as the guest names it (for ob= lines)
  std::string name;  // its last path component (stable across build directories)
  uint64_t bias = 0;
  uint64_t lo = 0, hi = 0;  // guest address span of its PT_LOAD segments
  bool live = true;         // false once unmapped
  uint32_t unknown_fn = 0;  // id of its "???" group
  // The file read on the first lookup, and which file it was when mapped; "": the symbols
  // were given to add().
  std::string host_path;
  FileIdentity identity;
  // Filled on the first lookup (ObjectMap::symbols / debug_info).
  bool symbols_read = false, debug_read = false;
  uint32_t first_fn = 0;  // ids first_fn .. first_fn + symbols - 1
  std::vector<FunctionSymbol> functions;
  // Its libdwfl handle (symbols and, when found, debug information), once read; shared
  // because objects are copied when the vector grows.
  std::shared_ptr<const DebugInfo> debug;
};

// What a guest address is, for tools that report code locations (the profiler, the
// checker): the object, the function and, with debug information, the source line.
struct SourceLocation {
  std::string object;    // the object's path ("" for anonymous code)
  std::string function;  // "??? (object)" when no symbol covers it
  uint64_t offset = 0;   // from the function's entry (from the object's bias for "???")
  std::string file;      // "" without line information
  int line = 0;
};

class ObjectMap {
 public:
  static constexpr uint32_t kNoObject = 0xFFFFFFFFu;
  static constexpr uint32_t kAnonymousFn = 0;

  ObjectMap();

  // -L DIR: where a stripped object's debug file is looked for first (DebugInfo). Objects
  // whose debug information was read before this call keep what they found.
  void set_sysroot(const std::string& sysroot) { sysroot_ = sysroot; }
  const std::string& sysroot() const { return sysroot_; }

  // An ELF image mapped at `bias` (guest address = link-time address + bias). `host_path`
  // is read for symbols (on the first lookup in it); `guest_path` names it. The same file
  // at the same bias is added once. Returns the object's index.
  uint32_t add(const std::string& host_path, const std::string& guest_path, uint64_t bias);
  // The same with segments and symbols already read (tests, and callers that hold them).
  uint32_t add(const std::vector<LoadSegment>& segments,
               const std::vector<FunctionSymbol>& functions, const std::string& guest_path,
               uint64_t bias, std::shared_ptr<const DebugInfo> debug = nullptr);

  // A file mapping made by the guest (mmap with a descriptor, as ld.so maps shared
  // objects): when `host_path` is an ELF file and the mapping holds one of its PT_LOAD
  // segments, the object is added with the bias that mapping implies.
  void file_mapped(const std::string& host_path, const std::string& guest_path, uint64_t va,
                   uint64_t offset);

  // [va, va+len) was unmapped: objects inside it are gone (dlclose).
  void unmapped(uint64_t va, uint64_t len);

  // The object whose span holds `addr` (the newest live one), kNoObject for none; reads
  // nothing.
  uint32_t object_at(uint64_t addr) const;
  // The function containing `addr` (never fails: "???" groups catch the rest).
  uint32_t function_at(uint64_t addr) const;
  // The function containing `addr` in object `o` (kNoObject: anonymous), live or not: a
  // caller that noted object_at() earlier looks up in the object mapped then.
  uint32_t function_in(uint32_t o, uint64_t addr) const;
  // Object o's separate debug information (read now if not yet), or null.
  const DebugInfo* debug_info(uint32_t o) const;
  // Whether object o was mapped from a file that its path no longer names.
  bool file_changed(uint32_t o) const;
  // Whether any object has separate debug information (reads it for every object).
  bool any_debug_info() const;
  // Where function `fn` comes in the order of objects added, then of addresses within
  // one (the "???" group first): the order of the ids had every object been read when it
  // was added. Reports sort by it so that they do not depend on the order of lookups.
  uint64_t order(uint32_t fn) const;
  // Object, function and source line of `addr` (never fails, see SourceLocation).
  SourceLocation locate(uint64_t addr) const;
  // The source file of a function's entry ("" when unknown): callgrind's fl=.
  std::string source_file(uint32_t fn) const;

  // References stay valid while later lookups add functions.
  const FunctionInfo& function(uint32_t id) const { return functions_[id]; }
  size_t function_count() const { return functions_.size(); }
  const std::vector<GuestObject>& objects() const { return objects_; }
  // Changes whenever an object is added or removed (cached lookups compare it); reading an
  // object's symbols only adds ids, so it does not change.
  uint64_t generation() const { return generation_; }

 private:
  // Lookups fill objects in place and append their functions: mutable, as a cache.
  mutable std::vector<GuestObject> objects_;
  mutable std::deque<FunctionInfo> functions_;
  uint64_t generation_ = 0;
  std::string sysroot_;

  uint32_t add_mapped(const std::string& host_path, const FileIdentity& identity,
                      const std::vector<LoadSegment>& segments, const std::string& guest_path,
                      uint64_t bias);
  // Object o's libdwfl handle (read now if not yet), or null when its file changed.
  const DebugInfo* module(uint32_t o) const;
  // Object o with its functions read (from its debug file when the file itself is
  // stripped) and given ids.
  const GuestObject& symbols(uint32_t o) const;
  // Whether object o's file is still the one it was mapped from.
  bool same_file(const GuestObject& o) const;
};

std::string base_name(const std::string& path);

}  // namespace padlock::emu::profile
