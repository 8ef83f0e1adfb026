#include "emulator/linux/abi_structs.hpp"

#include <initializer_list>

namespace padlock::emu {

void encode_timespec(uint8_t* out, bool time64, const timespec& ts) {
  if (time64) {
    put_field<int64_t>(out, 0, ts.tv_sec);
    put_field<int64_t>(out, 8, ts.tv_nsec);
  } else {
    put_field<int32_t>(out, 0, static_cast<int32_t>(ts.tv_sec));
    put_field<int32_t>(out, 4, static_cast<int32_t>(ts.tv_nsec));
  }
}

timespec decode_timespec(const uint8_t* in, bool time64) {
  timespec ts{};
  if (time64) {
    ts.tv_sec = get_field<int64_t>(in, 0);
    // The i386 time64 ABI leaves the upper half of tv_nsec as padding.
    ts.tv_nsec = get_field<int32_t>(in, 8);
  } else {
    ts.tv_sec = get_field<int32_t>(in, 0);
    ts.tv_nsec = get_field<int32_t>(in, 4);
  }
  return ts;
}

void encode_timeval(uint8_t* out, bool wide, const timeval& tv) {
  put_long(out, 0, wide, tv.tv_sec);
  put_long(out, wide ? 8 : 4, wide, tv.tv_usec);
}

namespace {

// st_atim, st_mtim and st_ctim as (seconds, nanoseconds) pairs of T from `offset` on, the
// layout every stat structure of both ABIs shares.
template <typename T>
void put_stat_times(uint8_t* o, size_t offset, const struct stat& st) {
  for (const timespec& t : {st.st_atim, st.st_mtim, st.st_ctim}) {
    put_field<T>(o, offset, static_cast<T>(t.tv_sec));
    put_field<T>(o, offset + sizeof(T), static_cast<T>(t.tv_nsec));
    offset += 2 * sizeof(T);
  }
}

}  // namespace

void encode_stat_x86_64(uint8_t* o, const struct stat& st) {
  std::memset(o, 0, kStatSizeX86_64);
  put_field<uint64_t>(o, 0, st.st_dev);
  put_field<uint64_t>(o, 8, st.st_ino);
  put_field<uint64_t>(o, 16, st.st_nlink);
  put_field<uint32_t>(o, 24, st.st_mode);
  put_field<uint32_t>(o, 28, st.st_uid);
  put_field<uint32_t>(o, 32, st.st_gid);
  put_field<uint64_t>(o, 40, st.st_rdev);
  put_field<int64_t>(o, 48, st.st_size);
  put_field<int64_t>(o, 56, st.st_blksize);
  put_field<int64_t>(o, 64, st.st_blocks);
  put_stat_times<int64_t>(o, 72, st);
}

void encode_stat64_i386(uint8_t* o, const struct stat& st) {
  std::memset(o, 0, kStat64SizeI386);
  put_field<uint64_t>(o, 0, st.st_dev);
  put_field<uint32_t>(o, 12, static_cast<uint32_t>(st.st_ino));  // __st_ino
  put_field<uint32_t>(o, 16, st.st_mode);
  put_field<uint32_t>(o, 20, static_cast<uint32_t>(st.st_nlink));
  put_field<uint32_t>(o, 24, st.st_uid);
  put_field<uint32_t>(o, 28, st.st_gid);
  put_field<uint64_t>(o, 32, st.st_rdev);
  put_field<int64_t>(o, 44, st.st_size);
  put_field<uint32_t>(o, 52, static_cast<uint32_t>(st.st_blksize));
  put_field<uint64_t>(o, 56, st.st_blocks);
  put_stat_times<uint32_t>(o, 64, st);
  put_field<uint64_t>(o, 88, st.st_ino);
}

bool encode_stat_i386(uint8_t* o, const struct stat& st) {
  if (st.st_ino > 0xFFFFFFFFu || st.st_size > 0x7FFFFFFF || st.st_nlink > 0xFFFF ||
      st.st_uid > 0xFFFF || st.st_gid > 0xFFFF) {
    return false;
  }
  std::memset(o, 0, kStatSizeI386);
  put_field<uint32_t>(o, 0, static_cast<uint32_t>(st.st_dev));
  put_field<uint32_t>(o, 4, static_cast<uint32_t>(st.st_ino));
  put_field<uint16_t>(o, 8, static_cast<uint16_t>(st.st_mode));
  put_field<uint16_t>(o, 10, static_cast<uint16_t>(st.st_nlink));
  put_field<uint16_t>(o, 12, static_cast<uint16_t>(st.st_uid));
  put_field<uint16_t>(o, 14, static_cast<uint16_t>(st.st_gid));
  put_field<uint32_t>(o, 16, static_cast<uint32_t>(st.st_rdev));
  put_field<uint32_t>(o, 20, static_cast<uint32_t>(st.st_size));
  put_field<uint32_t>(o, 24, static_cast<uint32_t>(st.st_blksize));
  put_field<uint32_t>(o, 28, static_cast<uint32_t>(st.st_blocks));
  put_stat_times<uint32_t>(o, 32, st);
  return true;
}

void encode_rusage(uint8_t* o, bool wide, const struct rusage& ru) {
  const size_t w = wide ? 8 : 4;
  std::memset(o, 0, rusage_size(wide));
  encode_timeval(o, wide, ru.ru_utime);
  encode_timeval(o + 2 * w, wide, ru.ru_stime);
  const long fields[14] = {ru.ru_maxrss, ru.ru_ixrss,    ru.ru_idrss,   ru.ru_isrss,   ru.ru_minflt,
                           ru.ru_majflt, ru.ru_nswap,    ru.ru_inblock, ru.ru_oublock, ru.ru_msgsnd,
                           ru.ru_msgrcv, ru.ru_nsignals, ru.ru_nvcsw,   ru.ru_nivcsw};
  for (int i = 0; i < 14; ++i) put_long(o, (4 + i) * w, wide, fields[i]);
}

void encode_tms(uint8_t* o, bool wide, const struct tms& t) {
  const size_t w = wide ? 8 : 4;
  put_long(o, 0, wide, t.tms_utime);
  put_long(o, w, wide, t.tms_stime);
  put_long(o, 2 * w, wide, t.tms_cutime);
  put_long(o, 3 * w, wide, t.tms_cstime);
}

void encode_sysinfo(uint8_t* o, bool wide, const struct sysinfo& si) {
  const size_t w = wide ? 8 : 4;
  std::memset(o, 0, sysinfo_size(wide));
  put_long(o, 0, wide, si.uptime);
  for (int i = 0; i < 3; ++i) put_long(o, (1 + i) * w, wide, static_cast<int64_t>(si.loads[i]));
  // Memory figures are in units of mem_unit; on i386 they must fit 32 bits.
  uint64_t unit = si.mem_unit ? si.mem_unit : 1;
  uint64_t vals[6] = {si.totalram,  si.freeram,   si.sharedram,
                      si.bufferram, si.totalswap, si.freeswap};
  if (!wide) {
    while (true) {
      bool fits = true;
      for (uint64_t v : vals) fits = fits && v <= 0xFFFFFFFFu;
      if (fits) break;
      for (uint64_t& v : vals) v >>= 1;
      unit <<= 1;
    }
  }
  for (int i = 0; i < 6; ++i) put_long(o, (4 + i) * w, wide, static_cast<int64_t>(vals[i]));
  put_field<uint16_t>(o, 10 * w, si.procs);
  const size_t high = 10 * w + (wide ? 8 : 4);  // after procs and padding
  put_long(o, high, wide, 0);
  put_long(o, high + w, wide, 0);
  put_field<uint32_t>(o, high + 2 * w, static_cast<uint32_t>(unit));
}

}  // namespace padlock::emu
