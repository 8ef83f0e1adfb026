#include "emulator/observe/mix/instruction_mix.hpp"

#include <capstone/capstone.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "isa/decoder.hpp"

namespace padlock::emu::mix {

namespace {

// Capstone's x86 instruction ids stay below 2^14; the top bits of a stored id say which
// repeat prefix the instruction carried (Capstone's id is the same with and without).
constexpr uint16_t kRep = 0x8000, kRepne = 0x4000, kIdMask = 0x3FFF;

// Histogram key: a stored x86 id, or kPadlockBase + isa::InsnId.
constexpr uint32_t kPadlockBase = 0x10000;

}  // namespace

InstructionMix::InstructionMix(const profile::ObjectMap& objects, GuestMemory& mem, bool guest64)
    : objects_(objects),
      walker_(mem, guest64),
      records_(1),
      counts_(1, 0),
      log_records_(1, 0),
      log_counts_(1, 0) {}

InstructionMix::~InstructionMix() = default;

// A forked child's mix is a new InstructionMix over the parent's blocks, whose mix_record
// names a record of the parent's: it counts only when it names this mix's record of b.
uint32_t InstructionMix::record(const BlockInfo& b) {
  const uint32_t r = b.mix_record;
  if (r != 0 && r < records_.size() && records_[r].block == &b) return r;
  b.mix_record = decode(b);
  return b.mix_record;
}

// Once per block: its instructions up to a PadLock instruction (which ends the block and
// is counted by on_padlock when it completes).
uint32_t InstructionMix::decode(const BlockInfo& b) {
  Record r;
  r.first = static_cast<uint32_t>(ids_.size());
  r.function = objects_.function_at(b.address);
  r.block = &b;
  walker_.walk(
      b,
      [&](const cs_insn& insn) {
        uint16_t id = static_cast<uint16_t>(insn.id & kIdMask);
        const std::string m = insn.mnemonic;
        if (m.rfind("repne ", 0) == 0 || m.rfind("repnz ", 0) == 0)
          id |= kRepne;
        else if (m.rfind("rep", 0) == 0 && m.find(' ') != std::string::npos)
          id |= kRep;
        ids_.push_back(id);
      },
      [](uint64_t, const isa::Decoded&) {}, [](uint64_t, size_t) {});
  r.count = static_cast<uint32_t>(ids_.size()) - r.first;
  records_.push_back(r);
  counts_.push_back(0);
  return static_cast<uint32_t>(records_.size() - 1);
}

void InstructionMix::add_log_blocks(const BlockInfo* const* blocks, size_t nblocks) {
  for (size_t i = log_records_.size(); i < nblocks; ++i) {
    log_records_.push_back(blocks[i] != nullptr ? record(*blocks[i]) : 0);
  }
  log_counts_.resize(nblocks, 0);
}

void InstructionMix::on_padlock(const PadlockRecord& r) {
  if (r.outcome.status != Status::Completed) return;
  ++padlock_[{objects_.function_at(r.pc), static_cast<uint32_t>(r.decoded.id)}];
}

void InstructionMix::write(FILE* out, const std::string& command) const {
  using Histogram = std::unordered_map<uint32_t, uint64_t>;
  Histogram total;
  std::map<uint32_t, Histogram> by_function;
  std::vector<uint64_t> counts(counts_.begin(), counts_.end());
  for (size_t i = 1; i < log_records_.size(); ++i) counts[log_records_[i]] += log_counts_[i];
  for (size_t i = 1; i < records_.size(); ++i) {
    const uint64_t n = counts[i];
    if (n == 0) continue;
    const Record& r = records_[i];
    Histogram& f = by_function[r.function];
    for (uint32_t k = r.first; k < r.first + r.count; ++k) {
      total[ids_[k]] += n;
      f[ids_[k]] += n;
    }
  }
  for (const auto& [key, n] : padlock_) {
    total[kPadlockBase + key.second] += n;
    by_function[key.first][kPadlockBase + key.second] += n;
  }
  const csh h = walker_.capstone();
  auto name = [&](uint32_t key) {
    if (key >= kPadlockBase) {
      return std::string(isa::info(static_cast<isa::InsnId>(key - kPadlockBase)).guide_name);
    }
    const char* base = cs_insn_name(h, key & kIdMask);
    std::string s = (key & kRep) ? "REP_" : (key & kRepne) ? "REPNE_" : "";
    for (const char* c = base != nullptr ? base : "?"; *c; ++c) {
      s += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
    }
    return s;
  };
  auto sum = [](const Histogram& hist, bool padlock_only) {
    uint64_t s = 0;
    for (const auto& [key, n] : hist) {
      if (!padlock_only || key >= kPadlockBase) s += n;
    }
    return s;
  };
  auto print = [&](const Histogram& hist) {
    std::vector<std::pair<uint32_t, uint64_t>> rows(hist.begin(), hist.end());
    std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : name(a.first) < name(b.first);
    });
    std::fprintf(out, "#%-29s %20s\n", " opcode", "count");
    for (const auto& [key, n] : rows) {
      std::fprintf(out, "%-30s %20llu\n", name(key).c_str(), static_cast<unsigned long long>(n));
    }
    std::fprintf(out, "%-30s %20llu\n", "*padlock",
                 static_cast<unsigned long long>(sum(hist, true)));
    std::fprintf(out, "%-30s %20llu\n", "*total",
                 static_cast<unsigned long long>(sum(hist, false)));
  };
  std::fprintf(out,
               "# padlock-emu instruction mix (docs/debugging.md)\n"
               "# command: %s\n"
               "# executed instructions: x86 by Capstone's mnemonic (REP_ and REPNE_ for a\n"
               "# repeat prefix, one per element), PadLock by the guide's name (completed ones)\n",
               command.c_str());
  std::fprintf(out, "$global-dynamic-counts\n");
  print(total);
  std::vector<std::pair<uint32_t, uint64_t>> fns;
  for (const auto& [fn, hist] : by_function) fns.emplace_back(fn, sum(hist, false));
  std::sort(fns.begin(), fns.end(), [&](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second
                                : objects_.order(a.first) < objects_.order(b.first);
  });
  for (const auto& [fn, n] : fns) {
    const profile::FunctionInfo& f = objects_.function(fn);
    const std::string object = f.object == profile::ObjectMap::kNoObject
                                   ? std::string("anonymous")
                                   : objects_.objects()[f.object].name;
    std::fprintf(out, "\n$dynamic-counts-for-function: %s [%s]\n", f.name.c_str(), object.c_str());
    print(by_function.at(fn));
  }
}

}  // namespace padlock::emu::mix
