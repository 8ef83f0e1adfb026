#include "emulator/harness/object_loader.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>

#include "emulator/loader/elf_loader.hpp"
#include "emulator/memory/address_text.hpp"

namespace padlock::emu {

namespace {

constexpr uint64_t kPage = AddressSpace::kPageSize;

const char* reloc_name(bool is64, uint32_t type) {
  if (is64) {
    switch (type) {
      case R_X86_64_64:
        return "R_X86_64_64";
      case R_X86_64_PC32:
        return "R_X86_64_PC32";
      case R_X86_64_PLT32:
        return "R_X86_64_PLT32";
      case R_X86_64_32:
        return "R_X86_64_32";
      case R_X86_64_32S:
        return "R_X86_64_32S";
      case R_X86_64_RELATIVE:
        return "R_X86_64_RELATIVE";
      case R_X86_64_GLOB_DAT:
        return "R_X86_64_GLOB_DAT";
      case R_X86_64_JUMP_SLOT:
        return "R_X86_64_JUMP_SLOT";
      case R_X86_64_IRELATIVE:
        return "R_X86_64_IRELATIVE";
      case R_X86_64_COPY:
        return "R_X86_64_COPY";
      default:
        return nullptr;
    }
  }
  switch (type) {
    case R_386_32:
      return "R_386_32";
    case R_386_PC32:
      return "R_386_PC32";
    case R_386_PLT32:
      return "R_386_PLT32";
    case R_386_RELATIVE:
      return "R_386_RELATIVE";
    case R_386_GLOB_DAT:
      return "R_386_GLOB_DAT";
    case R_386_JMP_SLOT:
      return "R_386_JMP_SLOT";
    case R_386_IRELATIVE:
      return "R_386_IRELATIVE";
    case R_386_COPY:
      return "R_386_COPY";
    default:
      return nullptr;
  }
}

std::string reloc_label(bool is64, uint32_t type) {
  const char* n = reloc_name(is64, type);
  return n != nullptr ? n : "relocation type " + std::to_string(type);
}

// --- relocatable objects: layout, GOT and relocation rules ---------------------------------

// Three groups of pages: code (R+X), read-only data (R) and writable data (R+W), one after
// the other from the object's start, each starting on a page.
struct Groups {
  enum Group { kX, kR, kW, kCount };
  static constexpr uint8_t kProt[kCount] = {kPageRead | kPageExec, kPageRead,
                                            kPageRead | kPageWrite};
  uint64_t size[kCount] = {};
  uint64_t start[kCount] = {};   // offsets from the object's start, once laid out
  std::vector<int> group_of;     // per section: its group, -1 when not loaded
  std::vector<uint64_t> offset;  // per section: its offset in its group

  // Set when a size or alignment does not fit in 64 bits (a broken file: the object_loader
  // fuzz target's second finding wrapped the layout and copied past the mapping).
  bool overflow = false;

  // Appends `size` bytes aligned to `align` to group g; returns their offset in it.
  uint64_t place(int g, uint64_t len, uint64_t align) {
    align = std::max<uint64_t>(align, 1);
    uint64_t end = 0;
    if (__builtin_add_overflow(size[g], align - 1, &end)) overflow = true;
    const uint64_t off = end / align * align;
    if (__builtin_add_overflow(off, len, &size[g])) overflow = true;
    return off;
  }
  uint64_t pages(uint64_t len) {
    uint64_t end = 0;
    if (__builtin_add_overflow(len, kPage - 1, &end)) overflow = true;
    return end / kPage * kPage;
  }
  // Places the groups one after the other; returns the object's whole length.
  uint64_t lay_out() {
    uint64_t total = 0;
    for (int g = 0; g < kCount; ++g) {
      start[g] = total;
      if (__builtin_add_overflow(total, pages(size[g]), &total)) overflow = true;
    }
    return total;
  }
  uint64_t section_offset(size_t i) const { return start[group_of[i]] + offset[i]; }
};

// Every allocated, non-empty section in its group.
Groups place_sections(const std::vector<ElfSection>& sections) {
  Groups gr;
  gr.group_of.assign(sections.size(), -1);
  gr.offset.assign(sections.size(), 0);
  for (size_t i = 0; i < sections.size(); ++i) {
    const ElfSection& s = sections[i];
    if (!(s.flags & SHF_ALLOC) || s.size == 0) continue;
    const int g = (s.flags & SHF_EXECINSTR) ? Groups::kX
                  : (s.flags & SHF_WRITE)   ? Groups::kW
                                            : Groups::kR;
    gr.group_of[i] = g;
    gr.offset[i] = gr.place(g, s.size, s.addralign);
  }
  return gr;
}

// What a relocation type stores (the psABI's formulas; G: the symbol's GOT slot, GOT: the
// GOT's address), in how many bytes, and the range the value must fit.
enum class Calc : uint8_t { None, SA, SAP, GAP, GGotA, SAGot, GotAP };
enum class Fits : uint8_t { Any, U32, S32 };
struct RelocRule {
  uint32_t type;
  Calc calc;
  uint8_t size;
  Fits fits;
};
constexpr RelocRule kRules64[] = {
    {R_X86_64_NONE, Calc::None, 4, Fits::Any},
    {R_X86_64_64, Calc::SA, 8, Fits::Any},
    {R_X86_64_PC32, Calc::SAP, 4, Fits::S32},
    {R_X86_64_PLT32, Calc::SAP, 4, Fits::S32},
    {R_X86_64_32, Calc::SA, 4, Fits::U32},
    {R_X86_64_32S, Calc::SA, 4, Fits::S32},
    {R_X86_64_PC64, Calc::SAP, 8, Fits::Any},
    {R_X86_64_GOTPCREL, Calc::GAP, 4, Fits::S32},
    {R_X86_64_GOTPCRELX, Calc::GAP, 4, Fits::S32},
    {R_X86_64_REX_GOTPCRELX, Calc::GAP, 4, Fits::S32},
    {R_X86_64_GOT32, Calc::GGotA, 4, Fits::Any},
    {R_X86_64_GOTOFF64, Calc::SAGot, 8, Fits::Any},
    {R_X86_64_GOTPC32, Calc::GotAP, 4, Fits::Any},
    {R_X86_64_GOTPC64, Calc::GotAP, 8, Fits::Any},
};
constexpr RelocRule kRules32[] = {
    {R_386_NONE, Calc::None, 4, Fits::Any},    {R_386_32, Calc::SA, 4, Fits::Any},
    {R_386_PC32, Calc::SAP, 4, Fits::Any},     {R_386_PLT32, Calc::SAP, 4, Fits::Any},
    {R_386_GOT32, Calc::GGotA, 4, Fits::Any},  // PIC form: relative to the GOT in a register
    {R_386_GOT32X, Calc::GGotA, 4, Fits::Any}, {R_386_GOTOFF, Calc::SAGot, 4, Fits::Any},
    {R_386_GOTPC, Calc::GotAP, 4, Fits::Any},
};

// Null for a type the loader does not apply.
const RelocRule* reloc_rule(bool is64, uint32_t type) {
  const auto find = [type](const auto& rules) -> const RelocRule* {
    for (const RelocRule& r : rules) {
      if (r.type == type) return &r;
    }
    return nullptr;
  };
  return is64 ? find(kRules64) : find(kRules32);
}
bool needs_got_slot(const RelocRule* r) {
  return r != nullptr && (r->calc == Calc::GAP || r->calc == Calc::GGotA);
}
bool uses_got(const RelocRule* r) {
  return needs_got_slot(r) || (r != nullptr && (r->calc == Calc::SAGot || r->calc == Calc::GotAP));
}

// The relocation sections to apply (those of loaded sections: not debug information) and
// what they need: the symbols they name, a GOT slot per GOT-loaded symbol, and a GOT at
// all (also when the code names _GLOBAL_OFFSET_TABLE_).
struct GotPlan {
  std::vector<const ElfSection*> rel_sections;
  std::vector<bool> referenced;                 // by symbol index
  std::unordered_map<uint32_t, uint64_t> slot;  // symbol index -> offset in the GOT
  bool want_got = false;
};
GotPlan plan_got(const ElfView& v, const std::vector<ElfSection>& sections, const Groups& gr,
                 const std::vector<ElfSymbol>& syms) {
  const uint64_t word = v.is64 ? 8 : 4;
  GotPlan plan;
  plan.referenced.assign(syms.size(), false);
  for (const ElfSection& rs : sections) {
    if (rs.type != SHT_REL && rs.type != SHT_RELA) continue;
    if (rs.info >= sections.size() || gr.group_of[rs.info] < 0) continue;  // e.g. debug info
    plan.rel_sections.push_back(&rs);
    for (const ElfRelocation& r : v.relocations(rs)) {
      const RelocRule* rule = reloc_rule(v.is64, r.type);
      if (r.sym < plan.referenced.size()) plan.referenced[r.sym] = true;
      if (uses_got(rule)) plan.want_got = true;
      if (needs_got_slot(rule) && !plan.slot.count(r.sym)) {
        plan.slot[r.sym] = plan.slot.size() * word;
      }
    }
  }
  for (const ElfSymbol& s : syms) {
    if (s.shndx == SHN_UNDEF && s.name == "_GLOBAL_OFFSET_TABLE_") plan.want_got = true;
  }
  return plan;
}

// Where the relocations of one object point: its sections' addresses, its symbols'
// values, its GOT and GOT slots.
struct RelocTargets {
  uint64_t start = 0;  // the object's first page
  const Groups& groups;
  const std::vector<uint64_t>& value;  // by symbol index
  const GotPlan& got_plan;
  uint64_t got = 0;
};

// Applies the relocations of section `rs` (the psABI formulas of kRules64/kRules32); counts them in
// `applied`. Throws LoadError for a type, symbol or place it cannot apply.
void apply_relocations(const ElfView& v, const std::vector<ElfSection>& sections,
                       const ElfSection& rs, const RelocTargets& at, AddressSpace& mem,
                       size_t& applied) {
  const ElfSection& target = sections[rs.info];
  const uint64_t target_base = at.start + at.groups.section_offset(rs.info);
  const std::string target_name = v.section_name(target);
  for (const ElfRelocation& r : v.relocations(rs)) {
    const uint64_t P = target_base + r.offset;
    const RelocRule* rule = reloc_rule(v.is64, r.type);
    const unsigned size = rule != nullptr ? rule->size : 4;
    // Not r.offset + size > target.size: a huge offset wraps that sum (the object_loader
    // fuzz target's third finding wrote before the mapping).
    if (r.offset > target.size || size > target.size - r.offset) {
      v.fail("relocation at " + target_name + "+" + hex(r.offset) + " past the section's end");
    }
    uint8_t* p = mem.host(P);
    int64_t A = r.addend;
    if (!r.rela) {
      int32_t implicit = 0;
      std::memcpy(&implicit, p, 4);
      A = implicit;
    }
    if (r.sym >= at.value.size() && r.sym != 0) v.fail("relocation names a bad symbol index");
    const uint64_t S = r.sym != 0 ? at.value[r.sym] : 0;
    const auto slot = at.got_plan.slot.find(r.sym);
    const uint64_t G = slot != at.got_plan.slot.end() ? at.got + slot->second : 0;
    if (rule != nullptr && rule->calc == Calc::None) continue;
    if (rule == nullptr) {
      v.fail("unsupported relocation type " + std::to_string(r.type) + " in " + target_name);
    }
    uint64_t result = 0;
    switch (rule->calc) {
      case Calc::None:
        break;
      case Calc::SA:
        result = S + A;
        break;
      case Calc::SAP:
        result = S + A - P;
        break;
      case Calc::GAP:
        result = G + A - P;
        break;
      case Calc::GGotA:
        result = G - at.got + A;
        break;
      case Calc::SAGot:
        result = S + A - at.got;
        break;
      case Calc::GotAP:
        result = at.got + A - P;
        break;
    }
    const bool ok = rule->fits == Fits::Any ? true
                    : rule->fits == Fits::U32
                        ? result <= 0xFFFFFFFFull
                        : static_cast<int64_t>(result) == static_cast<int32_t>(result);
    if (!ok) {
      v.fail(reloc_label(v.is64, r.type) + " at " + target_name + "+" + hex(r.offset) +
             " overflows (target " + hex(S) + ")");
    }
    std::memcpy(p, &result, size);
    ++applied;
  }
}

}  // namespace

namespace {

constexpr uint32_t kLoaderTag = 0x4C445231;  // "LDR1"

void save_symbol(StateWriter& w, const MachineSymbol& s) {
  w.str(s.name);
  w.pod(s.address);
  w.pod(s.size);
  w.pod(s.type);
  w.pod(s.bind);
}

MachineSymbol load_symbol(StateReader& r) {
  MachineSymbol s;
  s.name = r.str();
  r.pod(s.address);
  r.pod(s.size);
  r.pod(s.type);
  r.pod(s.bind);
  return s;
}

void save_strings(StateWriter& w, const std::vector<std::string>& v) {
  w.pod<uint64_t>(v.size());
  for (const std::string& s : v) w.str(s);
}

// A count of entries that each take at least 8 bytes: more than the stream holds is corrupt.
uint64_t load_count(StateReader& r) {
  const auto n = r.pod<uint64_t>();
  if (n > r.left() / 8) throw StateError("snapshot: corrupt loader state");
  return n;
}

std::vector<std::string> load_strings(StateReader& r) {
  std::vector<std::string> v(load_count(r));
  for (std::string& s : v) s = r.str();
  return v;
}

}  // namespace

std::vector<uint8_t> ObjectLoader::snapshot() const {
  std::vector<uint8_t> out;
  StateWriter w(out);
  w.pod(kLoaderTag);
  w.pod<uint64_t>(objects_.size());
  for (const auto& o : objects_) {
    w.str(o->path);
    w.pod(o->type);
    w.pod(o->bias);
    w.pod(o->start);
    w.pod(o->end);
    w.pod(o->entry);
    w.pod<uint64_t>(o->symbols.size());
    for (const MachineSymbol& s : o->symbols) save_symbol(w, s);
    w.pod<uint64_t>(o->sections.size());
    for (const auto& [name, address] : o->sections) {
      w.str(name);
      w.pod(address);
    }
    save_strings(w, o->imports);
    w.pod<uint64_t>(o->relocations);
    save_strings(w, o->skipped);
  }
  w.pod<uint64_t>(defined_.size());
  for (const auto& [name, address] : defined_) {
    w.str(name);
    w.pod(address);
  }
  w.pod<uint64_t>(user_symbols_.size());
  for (const auto& [name, s] : user_symbols_) save_symbol(w, s);
  return out;
}

// Parsed whole before anything changes, so a stream that does not parse leaves the loader
// as it was.
void ObjectLoader::restore(const uint8_t* data, size_t size) {
  StateReader r(data, size);
  r.expect(kLoaderTag);
  std::vector<std::unique_ptr<LoadedObject>> objects(load_count(r));
  for (auto& o : objects) {
    o = std::make_unique<LoadedObject>();
    o->path = r.str();
    r.pod(o->type);
    r.pod(o->bias);
    r.pod(o->start);
    r.pod(o->end);
    r.pod(o->entry);
    o->symbols.resize(load_count(r));
    for (MachineSymbol& s : o->symbols) s = load_symbol(r);
    for (uint64_t n = load_count(r); n > 0; --n) {
      std::string name = r.str();
      o->sections[name] = r.pod<uint64_t>();
    }
    o->imports = load_strings(r);
    o->relocations = r.pod<uint64_t>();
    o->skipped = load_strings(r);
  }
  std::unordered_map<std::string, uint64_t> defined;
  for (uint64_t n = load_count(r); n > 0; --n) {
    std::string name = r.str();
    defined[name] = r.pod<uint64_t>();
  }
  std::unordered_map<std::string, MachineSymbol> user;
  for (uint64_t n = load_count(r); n > 0; --n) {
    MachineSymbol s = load_symbol(r);
    user[s.name] = s;
  }
  if (r.left() != 0) throw StateError("snapshot: trailing bytes in the loader state");
  objects_ = std::move(objects);
  defined_ = std::move(defined);
  user_symbols_ = std::move(user);
}

const MachineSymbol* ObjectLoader::find(const std::string& name) const {
  if (auto it = user_symbols_.find(name); it != user_symbols_.end()) return &it->second;
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& o : objects_) {
      for (const MachineSymbol& s : o->symbols) {
        const bool global = s.bind == STB_GLOBAL || s.bind == STB_WEAK;
        if (s.name == name && global == (pass == 0)) return &s;
      }
    }
  }
  return nullptr;
}

uint64_t ObjectLoader::resolve_import(LoadedObject& obj, const std::string& name, bool weak) {
  if (auto it = defined_.find(name); it != defined_.end()) return it->second;
  for (const auto& o : objects_) {
    if (o.get() == &obj) continue;
    for (const MachineSymbol& s : o->symbols) {
      if (s.name == name && (s.bind == STB_GLOBAL || s.bind == STB_WEAK)) return s.address;
    }
  }
  // An undefined weak symbol stays 0 unless a stub was registered for it already.
  if (weak && !m_.has_stub(name)) return 0;
  if (std::find(obj.imports.begin(), obj.imports.end(), name) == obj.imports.end()) {
    obj.imports.push_back(name);
  }
  return m_.stub_address(name);
}

// ELF errors (LoadError) reach the harness's users as MachineError, with the same text.
const LoadedObject& ObjectLoader::load(const std::string& path, uint64_t base) {
  if (base & (kPage - 1)) throw MachineError("load: base must be page aligned");
  try {
    const std::vector<uint8_t> data = read_file_bytes(path);
    const ElfView v(path, data);
    if (v.machine != (v.is64 ? EM_X86_64 : EM_386)) {
      v.fail(std::string("wrong machine: ") + elf_machine_name(v.machine) + " in a " +
             (v.is64 ? "64" : "32") + "-bit ELF file");
    }
    const std::vector<ElfSection> sections = v.sections();
    if (v.is64 != (m_.bits() == 64)) {
      throw MachineError(path + ": a " + (v.is64 ? "64" : "32") +
                         "-bit ELF file, but this Machine is " + std::to_string(m_.bits()) +
                         "-bit");
    }
    auto obj = std::make_unique<LoadedObject>();
    obj->path = path;
    obj->type = v.type;
    LoadedObject& ref = *obj;
    objects_.push_back(std::move(obj));
    try {
      if (ref.type == ET_REL) {
        load_relocatable(ref, v, sections, base);
      } else if (ref.type == ET_EXEC || ref.type == ET_DYN) {
        load_image(ref, ElfFile::parse(path, data), v, sections, base);
      } else {
        throw MachineError(path + ": ELF type " + std::to_string(ref.type) +
                           " is neither an executable, a shared object nor an object file");
      }
    } catch (...) {
      objects_.pop_back();
      throw;
    }
    return ref;
  } catch (const LoadError& e) {
    throw MachineError(e.what());
  }
}

// --- executables and shared objects ------------------------------------------------------------

namespace {
// A driver object is a few MB. A larger span is refused rather than mapped: the page table
// spends a byte per page, and a 950 GiB segment took the object_loader fuzz target past its
// timeout (docs/reliability.md).
constexpr uint64_t kMaxObjectSpan = uint64_t(1) << 30;

void check_span(const ElfView& v, uint64_t span) {
  if (span > kMaxObjectSpan) {
    v.fail("it spans " + hex(span) + " bytes, more than the 1 GiB one object may map");
  }
}
}  // namespace

void ObjectLoader::load_image(LoadedObject& obj, const ElfFile& elf, const ElfView& v,
                              const std::vector<ElfSection>& sections, uint64_t base) {
  AddressSpace& mem = m_.memory().space();
  check_span(v, elf.max_vaddr - elf.min_vaddr);
  uint64_t bias = 0;
  if (elf.type == ET_DYN) {
    const uint64_t align = std::max<uint64_t>(kPage, elf.max_align);
    const uint64_t span = elf.max_vaddr - elf.min_vaddr;
    const uint64_t at = base != 0 ? base : m_.memory().reserve(span, align);
    bias = at - elf.min_vaddr;
  } else if (base != 0 && base != elf.min_vaddr) {
    throw MachineError(obj.path + ": an executable (ET_EXEC) loads at its own address " +
                       hex(elf.min_vaddr));
  }
  if (!mem.range_free(elf.min_vaddr + bias, elf.max_vaddr - elf.min_vaddr)) {
    throw MachineError(obj.path + ": its address range " + hex(elf.min_vaddr + bias) + ".." +
                       hex(elf.max_vaddr + bias) + " is already in use");
  }
  load_elf(elf, mem, bias, !elf.is64 && !elf.has_gnu_stack);
  obj.bias = bias;
  obj.start = elf.min_vaddr + bias;
  obj.end = elf.max_vaddr + bias;
  obj.entry = elf.entry + bias;

  // Symbols: .symtab (static functions too) and .dynsym.
  for (const ElfSection& s : sections) {
    if (s.type != SHT_SYMTAB && s.type != SHT_DYNSYM) continue;
    for (size_t i = 1; i < v.symbol_count(s); ++i) {
      const ElfSymbol sym = v.symbol(s, i);
      if (sym.shndx == SHN_UNDEF || sym.name.empty() || sym.type() == STT_SECTION ||
          sym.type() == STT_FILE || sym.type() == STT_TLS) {
        continue;
      }
      const uint64_t addr = sym.shndx == SHN_ABS ? sym.value : sym.value + bias;
      const bool dup = std::any_of(
          obj.symbols.begin(), obj.symbols.end(),
          [&](const MachineSymbol& x) { return x.name == sym.name && x.address == addr; });
      if (!dup) obj.symbols.push_back({sym.name, addr, sym.size, sym.type(), sym.bind()});
    }
  }

  // Dynamic relocations: every allocated SHT_REL/SHT_RELA section (.rel.dyn, .rel.plt ...).
  const bool is64 = v.is64;
  const uint64_t word = is64 ? 8 : 4;
  for (const ElfSection& rs : sections) {
    if ((rs.type != SHT_REL && rs.type != SHT_RELA) || !(rs.flags & SHF_ALLOC)) continue;
    const ElfSection* symtab = rs.link < sections.size() ? &sections[rs.link] : nullptr;
    for (const ElfRelocation& r : v.relocations(rs)) {
      const uint64_t P = r.offset + bias;
      if (!mem.in_window(P, word) || !mem.range_mapped(P, word)) {
        throw MachineError(obj.path + ": relocation at " + hex(P) + " outside the object");
      }
      uint8_t* p = mem.host(P);
      auto rd = [&]() -> uint64_t {
        uint64_t x = 0;
        std::memcpy(&x, p, word);
        return x;
      };
      auto wr = [&](uint64_t x) { std::memcpy(p, &x, word); };
      const int64_t A = r.rela ? r.addend : static_cast<int64_t>(rd());
      uint64_t S = 0;
      std::string name;
      if (r.sym != 0 && symtab != nullptr) {
        const ElfSymbol sym = v.symbol(*symtab, r.sym);
        name = sym.name;
        if (sym.shndx != SHN_UNDEF) {
          S = sym.shndx == SHN_ABS ? sym.value : sym.value + bias;
        } else {
          S = resolve_import(obj, sym.name, sym.bind() == STB_WEAK);
        }
      }
      const uint32_t t = r.type;
      if (is64 ? t == R_X86_64_NONE : t == R_386_NONE) continue;
      if (is64 ? t == R_X86_64_RELATIVE : t == R_386_RELATIVE) {
        wr(bias + A);
      } else if (is64 ? t == R_X86_64_64 : t == R_386_32) {
        wr(S + A);
      } else if (is64 ? (t == R_X86_64_GLOB_DAT || t == R_X86_64_JUMP_SLOT)
                      : (t == R_386_GLOB_DAT || t == R_386_JMP_SLOT)) {
        wr(S);
      } else if (!is64 && t == R_386_PC32) {
        wr(S + A - P);
      } else if (is64 ? t == R_X86_64_IRELATIVE : t == R_386_IRELATIVE) {
        // An IFUNC resolver would have to run in the guest before anything else; the
        // harness does not run start-up code, so the slot keeps its link-time value.
        obj.skipped.push_back(reloc_label(is64, t) + " at " + hex(P));
        continue;
      } else if (is64 ? t == R_X86_64_COPY : t == R_386_COPY) {
        const MachineSymbol* src = nullptr;
        for (const auto& o : objects_) {
          if (o.get() == &obj) continue;
          for (const MachineSymbol& s : o->symbols) {
            if (s.name == name && s.bind != STB_LOCAL) src = &s;
          }
        }
        if (src == nullptr) {
          throw MachineError(obj.path + ": " + reloc_label(is64, t) + " of '" + name +
                             "', which no loaded object defines");
        }
        const uint64_t n = std::min(src->size, uint64_t{1} << 20);
        m_.memory().write(P, m_.memory().space().host(src->address), n);
      } else {
        throw MachineError(obj.path + ": unsupported " + reloc_label(is64, t) + " at " + hex(P) +
                           (name.empty() ? "" : " ('" + name + "')"));
      }
      ++obj.relocations;
    }
  }
}

// --- relocatable objects -------------------------------------------------------------------------

// Sections laid out in three groups of pages (Groups), COMMON symbols and the GOT in the
// writable group; undefined symbols bound after the object's own (resolve_import); then
// the relocations and the groups' final permissions.
void ObjectLoader::load_relocatable(LoadedObject& obj, const ElfView& v,
                                    const std::vector<ElfSection>& sections, uint64_t base) {
  if (sections.empty()) v.fail("an object file without section headers");
  const uint64_t word = v.is64 ? 8 : 4;
  Groups gr = place_sections(sections);

  const ElfSection* symtab = nullptr;
  for (const ElfSection& s : sections) {
    if (s.type == SHT_SYMTAB) symtab = &s;
  }
  std::vector<ElfSymbol> syms;
  if (symtab != nullptr) {
    for (size_t i = 0; i < v.symbol_count(*symtab); ++i) syms.push_back(v.symbol(*symtab, i));
  }
  // A section index past the table is a broken file (the object_loader fuzz target's first
  // finding: it was read out of bounds), refused before anything is mapped.
  for (size_t i = 1; i < syms.size(); ++i) {
    const uint16_t sh = syms[i].shndx;
    if (sh != SHN_UNDEF && sh < SHN_LORESERVE && sh >= sections.size()) {
      v.fail("symbol " + std::to_string(i) + " is in section " + std::to_string(sh) +
             ", past the " + std::to_string(sections.size()) + " section headers");
    }
  }
  std::vector<uint64_t> common_off(syms.size(), 0);
  for (size_t i = 0; i < syms.size(); ++i) {
    if (syms[i].shndx == SHN_COMMON) {
      common_off[i] = gr.place(Groups::kW, syms[i].size, syms[i].value);
    }
  }
  const GotPlan plan = plan_got(v, sections, gr, syms);
  uint64_t got_off = 0;
  if (plan.want_got) {
    got_off = gr.place(Groups::kW, std::max<uint64_t>(plan.slot.size(), 1) * word, word);
  }

  const uint64_t total = gr.lay_out();
  if (gr.overflow) v.fail("section sizes and alignments overflow the address space");
  check_span(v, total);
  if (total == 0) v.fail("no allocatable sections");
  const uint64_t start = base != 0 ? base : m_.memory().reserve(total);
  AddressSpace& mem = m_.memory().space();
  if (!mem.range_free(start, total)) v.fail("the range at " + hex(start) + " is already in use");
  m_.memory().map(start, total, kPageRead | kPageWrite);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (gr.group_of[i] < 0) continue;
    const ElfSection& s = sections[i];
    const uint64_t at = start + gr.section_offset(i);
    if (s.type != SHT_NOBITS)
      std::memcpy(mem.host(at), v.bytes(s.offset, s.size, "section"), s.size);
    const std::string name = v.section_name(s);
    if (!name.empty() && !obj.sections.count(name)) obj.sections[name] = at;
  }
  const uint64_t got = start + gr.start[Groups::kW] + got_off;
  obj.bias = start;
  obj.start = start;
  obj.end = start + total;

  // Symbol values: the object's own first, then the undefined ones (another object loaded
  // earlier, a user definition, or a stub).
  std::vector<uint64_t> value(syms.size(), 0);
  for (size_t i = 1; i < syms.size(); ++i) {
    const ElfSymbol& s = syms[i];
    if (s.shndx == SHN_ABS) {
      value[i] = s.value;
    } else if (s.shndx == SHN_COMMON) {
      value[i] = start + gr.start[Groups::kW] + common_off[i];
    } else if (s.shndx != SHN_UNDEF && s.shndx < sections.size()) {
      value[i] = gr.group_of[s.shndx] >= 0 ? start + gr.section_offset(s.shndx) + s.value : 0;
    }
    const bool defined =
        s.shndx != SHN_UNDEF && (s.shndx >= SHN_LORESERVE || gr.group_of[s.shndx] >= 0);
    if (defined && !s.name.empty() && s.type() != STT_SECTION && s.type() != STT_FILE) {
      obj.symbols.push_back({s.name, value[i], s.size, s.type(), s.bind()});
    }
  }
  for (size_t i = 1; i < syms.size(); ++i) {
    const ElfSymbol& s = syms[i];
    if (s.shndx != SHN_UNDEF) continue;
    if (s.name == "_GLOBAL_OFFSET_TABLE_") {
      value[i] = got;
    } else if (plan.referenced[i]) {
      value[i] = resolve_import(obj, s.name, s.bind() == STB_WEAK);
    }
  }
  for (const auto& [sym, off] : plan.slot) {
    const uint64_t target = sym < value.size() ? value[sym] : 0;
    std::memcpy(mem.host(got + off), &target, word);
  }

  const RelocTargets targets{start, gr, value, plan, got};
  for (const ElfSection* rs : plan.rel_sections) {
    apply_relocations(v, sections, *rs, targets, mem, obj.relocations);
  }
  for (int g = 0; g < Groups::kCount; ++g) {
    const uint64_t len = gr.pages(gr.size[g]);
    if (len != 0) m_.memory().protect(start + gr.start[g], len, Groups::kProt[g]);
  }
}

}  // namespace padlock::emu
