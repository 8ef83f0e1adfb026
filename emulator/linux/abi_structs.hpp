// Guest layouts of the kernel structures the system calls exchange, for the i386 and
// x86-64 ABIs (Linux arch/x86/include/uapi/asm/*.h and include/uapi/linux/*.h). Each
// encoder writes the guest bytes of a host structure; sizes are the guest sizeof.
#pragma once

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/times.h>

#include <cstdint>
#include <cstring>
#include <ctime>

namespace padlock::emu {

// Unaligned little-endian field access in a guest byte buffer.
template <typename T>
inline void put_field(uint8_t* base, size_t off, T v) {
  std::memcpy(base + off, &v, sizeof v);
}
template <typename T>
inline T get_field(const uint8_t* base, size_t off) {
  T v;
  std::memcpy(&v, base + off, sizeof v);
  return v;
}

// "long"-sized field: 4 bytes on i386, 8 on x86-64.
inline void put_long(uint8_t* b, size_t off, bool wide, int64_t v) {
  if (wide)
    put_field<int64_t>(b, off, v);
  else
    put_field<int32_t>(b, off, static_cast<int32_t>(v));
}
inline int64_t get_long(const uint8_t* b, size_t off, bool wide) {
  return wide ? get_field<int64_t>(b, off) : get_field<int32_t>(b, off);
}
inline uint64_t get_ulong(const uint8_t* b, size_t off, bool wide) {
  return wide ? get_field<uint64_t>(b, off) : get_field<uint32_t>(b, off);
}

// struct timespec / timeval with time_t of `time64` width (i386 time64 calls and
// x86-64 use 64 bits; classic i386 calls 32).
inline size_t timespec_size(bool time64) {
  return time64 ? 16 : 8;
}
void encode_timespec(uint8_t* out, bool time64, const timespec& ts);
timespec decode_timespec(const uint8_t* in, bool time64);
void encode_timeval(uint8_t* out, bool wide, const timeval& tv);

inline constexpr size_t kStatSizeX86_64 = 144;
inline constexpr size_t kStat64SizeI386 = 96;
inline constexpr size_t kStatSizeI386 = 64;
void encode_stat_x86_64(uint8_t* out, const struct stat& st);
void encode_stat64_i386(uint8_t* out, const struct stat& st);
// The old i386 struct stat; false if a value does not fit (EOVERFLOW).
bool encode_stat_i386(uint8_t* out, const struct stat& st);

inline size_t rusage_size(bool wide) {
  return wide ? 144 : 72;
}
void encode_rusage(uint8_t* out, bool wide, const struct rusage& ru);
inline size_t tms_size(bool wide) {
  return wide ? 32 : 16;
}
void encode_tms(uint8_t* out, bool wide, const struct tms& t);
inline size_t sysinfo_size(bool wide) {
  return wide ? 112 : 64;
}
void encode_sysinfo(uint8_t* out, bool wide, const struct sysinfo& si);

}  // namespace padlock::emu
