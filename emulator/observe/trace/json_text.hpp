// Small helpers that append JSON text to a reused std::string (the trace writers build
// each line or event in one buffer and write it with one fwrite).
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace padlock::emu::trace {

inline void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += '"';
}

inline void json_key(std::string& out, std::string_view key) {
  if (!out.empty() && out.back() != '{' && out.back() != '[') out += ',';
  json_string(out, key);
  out += ':';
}

inline void json_u64(std::string& out, uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRIu64, v);
  out += buf;
}

inline void json_i64(std::string& out, int64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRId64, v);
  out += buf;
}

// "0x" and `digits` hex digits (addresses and registers as strings: JSON numbers lose
// precision above 2^53 in most readers).
inline void json_hex(std::string& out, uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"0x%0*" PRIx64 "\"", digits, v);
  out += buf;
}

// 17 significant digits: the text reads back as the same double.
inline void json_f64(std::string& out, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out += buf;
}

inline void json_bool(std::string& out, bool v) {
  out += v ? "true" : "false";
}

// Microseconds with a fixed number of decimals: deterministic text for the same cycles.
inline void json_micros(std::string& out, uint64_t cycles, double mhz) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(cycles) / mhz);
  out += buf;
}

}  // namespace padlock::emu::trace
