#include "emulator/observe/debug_log.hpp"

#include <cctype>
#include <stdexcept>

#include "emulator/observe/trace/jsonl_trace.hpp"
#include "isa/decoder.hpp"

namespace padlock::emu {

namespace {

struct ItemName {
  const char* name;
  unsigned bit;
};
constexpr ItemName kItems[] = {{"in_asm", kLogInAsm},
                               {"cpu", kLogCpu},
                               {"exec", kLogExec},
                               {"padlock", kLogPadlock},
                               {"syscall", kLogSyscall}};

// qemu's x86 flag letters, from DF down to CF.
struct FlagLetter {
  char letter;
  int bit;
};
constexpr FlagLetter kFlagLetters[] = {{'D', 10}, {'O', 11}, {'S', 7}, {'Z', 6},
                                       {'A', 4},  {'P', 2},  {'C', 0}};

constexpr int kGpr32[8] = {UC_X86_REG_EAX, UC_X86_REG_EBX, UC_X86_REG_ECX, UC_X86_REG_EDX,
                           UC_X86_REG_ESI, UC_X86_REG_EDI, UC_X86_REG_EBP, UC_X86_REG_ESP};
constexpr const char* kGpr32Names[8] = {"EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "EBP", "ESP"};
constexpr int kGpr64[16] = {UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX,
                            UC_X86_REG_RSI, UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_RSP,
                            UC_X86_REG_R8,  UC_X86_REG_R9,  UC_X86_REG_R10, UC_X86_REG_R11,
                            UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15};
constexpr const char* kGpr64Names[16] = {"RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "RSP",
                                         "R8",  "R9",  "R10", "R11", "R12", "R13", "R14", "R15"};

}  // namespace

unsigned parse_debug_items(const std::string& list) {
  unsigned bits = 0;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma == std::string::npos ? comma : comma - pos);
    bool known = false;
    for (const ItemName& i : kItems) {
      if (item == i.name) {
        bits |= i.bit;
        known = true;
      }
    }
    if (!known) throw std::invalid_argument(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return bits;
}

std::string debug_items_text(unsigned bits) {
  std::string s;
  for (const ItemName& i : kItems) {
    if ((bits & i.bit) != 0) s += (s.empty() ? "" : ",") + std::string(i.name);
  }
  return s;
}

std::string debug_item_names() {
  std::string s;
  for (const ItemName& i : kItems) s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

DebugLog::DebugLog(FILE* out, unsigned items, GuestMemory& mem, const profile::ObjectMap& objects,
                   bool guest64)
    : out_(out), items_(items), walker_(mem, guest64), objects_(objects), guest64_(guest64) {}

DebugLog::~DebugLog() = default;

void DebugLog::on_block(const BlockInfo& b) {
  if (has(kLogInAsm) && !b.in_asm_logged) in_asm(b);
  if (has(kLogExec)) {
    std::fprintf(out_, "Trace 0x%08llx [%u insns] %s\n", static_cast<unsigned long long>(b.address),
                 b.insns, objects_.function(objects_.function_at(b.address)).name.c_str());
  }
  if (has(kLogCpu)) cpu_state();
}

void DebugLog::on_new_blocks(const BlockInfo* const* blocks, size_t nblocks) {
  for (; seen_blocks_ < nblocks; ++seen_blocks_) {
    const BlockInfo* b = blocks[seen_blocks_];
    if (b != nullptr && !b->in_asm_logged) in_asm(*b);
  }
}

// qemu's in_asm layout: a separator, "IN: function", one instruction a line.
void DebugLog::in_asm(const BlockInfo& b) {
  b.in_asm_logged = true;
  std::fprintf(out_, "----------------\nIN: %s\n",
               objects_.function(objects_.function_at(b.address)).name.c_str());
  walker_.walk(
      b,
      [&](const cs_insn& insn) {
        std::fprintf(out_, "0x%08llx:  %s %s\n", static_cast<unsigned long long>(insn.address),
                     insn.mnemonic, insn.op_str);
      },
      [&](uint64_t pc, const isa::Decoded& d) {
        std::string name =
            d.status == isa::DecodeStatus::Ok ? d.info().guide_name : "(bad PadLock)";
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::fprintf(out_, "0x%08llx:  %s\n", static_cast<unsigned long long>(pc), name.c_str());
      },
      [&](uint64_t pc, size_t left) {
        std::fprintf(out_, "0x%08llx:  (%zu bytes Capstone does not decode)\n",
                     static_cast<unsigned long long>(pc), left);
      });
  std::fprintf(out_, "\n");
}

// qemu's cpu layout for the user-visible part: four registers a line, then the PC and
// the flags with their letters.
void DebugLog::cpu_state() {
  if (cpu_ == nullptr) return;
  const int n = guest64_ ? 16 : 8;
  for (int i = 0; i < n; ++i) {
    const uint64_t v = cpu_->reg(guest64_ ? kGpr64[i] : kGpr32[i]);
    if (guest64_)
      std::fprintf(out_, "%s=%016llx", kGpr64Names[i], static_cast<unsigned long long>(v));
    else
      std::fprintf(out_, "%s=%08llx", kGpr32Names[i], static_cast<unsigned long long>(v));
    std::fputc(i % 4 == 3 ? '\n' : ' ', out_);
  }
  const uint64_t flags = cpu_->reg(guest64_ ? UC_X86_REG_RFLAGS : UC_X86_REG_EFLAGS);
  char letters[8];
  for (size_t i = 0; i < 7; ++i) {
    letters[i] = (flags >> kFlagLetters[i].bit) & 1 ? kFlagLetters[i].letter : '-';
  }
  letters[7] = 0;
  std::fprintf(out_, guest64_ ? "RIP=%016llx RFL=%08llx [%s]\n" : "EIP=%08llx EFL=%08llx [%s]\n",
               static_cast<unsigned long long>(cpu_->pc()),
               static_cast<unsigned long long>(flags & 0xFFFFFFFFu), letters);
}

void DebugLog::on_padlock(const PadlockRecord& r) {
  const Outcome& o = r.outcome;
  std::fprintf(out_,
               "PadLock 0x%08llx: %s %s, %llu bytes, %llu cycles; ECX %llx -> %llx, ESI %llx -> "
               "%llx, EDI %llx -> %llx, EFLAGS[30] %d -> %d\n",
               static_cast<unsigned long long>(r.pc), r.decoded.info().guide_name,
               trace::status_name(o.status), static_cast<unsigned long long>(o.bytes),
               static_cast<unsigned long long>(o.cycles),
               static_cast<unsigned long long>(r.before[Gpr::CX]),
               static_cast<unsigned long long>(r.after[Gpr::CX]),
               static_cast<unsigned long long>(r.before[Gpr::SI]),
               static_cast<unsigned long long>(r.after[Gpr::SI]),
               static_cast<unsigned long long>(r.before[Gpr::DI]),
               static_cast<unsigned long long>(r.after[Gpr::DI]), r.before.eflags30() ? 1 : 0,
               r.after.eflags30() ? 1 : 0);
}

}  // namespace padlock::emu
