// libFuzzer target: the PadLock decoder (isa/decoder.hpp) on any bytes, in both modes. The
// decoder must stay inside `avail` (ASan), and an Ok result must name an instruction of
// the table and a length within the bytes it was given.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "isa/decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const padlock::isa::CpuMode mode =
      (data[0] & 1) ? padlock::isa::CpuMode::Long64 : padlock::isa::CpuMode::Protected32;
  const padlock::isa::Decoded d = padlock::isa::decode(data + 1, size - 1, mode);
  if (d.status == padlock::isa::DecodeStatus::Ok && (d.length == 0 || d.length > size - 1)) {
    std::abort();
  }
  return 0;
}
