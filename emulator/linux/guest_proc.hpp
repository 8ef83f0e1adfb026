// The /proc and /sys files through which a guest learns about its processor and itself,
// generated from the CPU model and the guest's own state instead of the host's:
// /proc/cpuinfo (the modelled chip: vendor, family/model/stepping, brand, --mhz, flags
// with the PadLock ones), /proc/self/maps (the guest's address space), /proc/self/auxv
// (the auxiliary vector the guest started with), /proc/self/cmdline and environ (the
// guest's argv and environment), /proc/self/stat (the host's, without the emulator's
// addresses) and /sys/devices/system/cpu/{online,possible,present} (one CPU, CPU 0, which
// the C library counts for sysconf).
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include "emulator/linux/proc_lookup.hpp"
#include "emulator/linux/vm/map_names.hpp"
#include "emulator/loader/elf_loader.hpp"
#include "emulator/memory/address_space.hpp"
#include "models/padlock.hpp"

namespace padlock::emu {

class Process;

// Names the PT_LOAD segments of `elf`, loaded at `bias`, after `guest_path` (the pages
// that hold file bytes; the zero-filled rest of a segment is anonymous, as in Linux).
void name_elf_segments(MapNames& names, const ElfFile& elf, uint64_t bias,
                       const std::string& guest_path);

// /proc/cpuinfo of a Linux kernel on the modelled chip (one CPU) at `mhz`.
std::string cpuinfo_text(const CpuModel& model, const Padlock& padlock, double mhz);

// Opens the generated file of `e` (proc_lookup.hpp: kMaps, kAuxv, kCmdline, kEnviron,
// kStat, kCpuinfo, kCpuList) with the guest's open flags: a host descriptor or -errno;
// kNotGenerated for an entry that is not a generated file.
inline constexpr int kNotGenerated = INT_MIN;
int open_generated(Process& p, ProcEntry e, int flags);

}  // namespace padlock::emu
