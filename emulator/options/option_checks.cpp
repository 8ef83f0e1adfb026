#include "emulator/options/option_checks.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "emulator/time/virtual_time.hpp"

namespace padlock::emu {

namespace {

// The lowest clock the timing model runs at (docs/timing.md, "Interrupts"): at least
// kMinMhz, and periodic interrupts may take at most half of the clock even in their
// shortest period (each costs VirtualTimeConfig::irq_cycles; the period varies by
// +-irq_jitter). Below that the guest would make no progress between interrupts.
constexpr double kMinMhz = 1.0;
constexpr double kMaxMhz = 100000;
constexpr double kMaxIrqHz = 1e7;
constexpr uint64_t kMinMaxMemory = 1 << 20;  // below it not even a static program starts

// strtod of the whole string; false when it is not one number.
bool whole_double(const std::string& s, double& v) {
  char* end = nullptr;
  errno = 0;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0' && errno == 0;
}

}  // namespace

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string mhz_message(const std::string& text, const char* where) {
  return "invalid clock '" + text + "'" + where + ": expected a frequency in MHz, e.g. --mhz 1600";
}

std::string irq_hz_message(const std::string& text) {
  return "invalid interrupt rate '" + text + "': expected HZ >= 0, e.g. --irq-hz 250";
}

std::string seed_message(const std::string& text, const char* where) {
  return "invalid seed '" + text + "'" + where + ": expected an unsigned integer";
}

std::string port_message(const std::string& text) {
  return "invalid gdb port '" + text + "': expected a TCP port 0-65535, e.g. -g 1234";
}

double check_mhz(double mhz, const std::string& text, const char* where) {
  if (!std::isfinite(mhz) || mhz <= 0 || mhz > kMaxMhz) throw OptionError(mhz_message(text, where));
  return mhz;
}

double check_irq_hz(double hz, const std::string& text) {
  if (!(hz >= 0) || hz > kMaxIrqHz) throw OptionError(irq_hz_message(text));
  return hz;
}

int check_port(double port, const std::string& text) {
  if (!(port >= 0) || port > 65535 || port != std::floor(port)) {
    throw OptionError(port_message(text));
  }
  return static_cast<int>(port);
}

double parse_mhz(const std::string& s, const char* where) {
  double v = 0;
  if (!whole_double(s, v)) throw OptionError(mhz_message(s, where));
  return check_mhz(v, s, where);
}

double parse_irq_hz(const std::string& s) {
  double v = 0;
  if (!whole_double(s, v)) throw OptionError(irq_hz_message(s));
  return check_irq_hz(v, s);
}

uint64_t parse_seed(const std::string& s, const char* where) {
  if (s.empty() || s[0] == '-') throw OptionError(seed_message(s, where));
  // Decimal, or hexadecimal with 0x: a leading zero is not octal ("--seed 010" is ten).
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, hex ? 16 : 10);
  if (*end != '\0' || errno != 0) throw OptionError(seed_message(s, where));
  return v;
}

int parse_port(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0) throw OptionError(port_message(s));
  return check_port(static_cast<double>(v), s);
}

bool parse_memory(const std::string& s, const char* where) {
  if (s == "direct") return true;
  if (s == "tlb") return false;
  throw OptionError("--memory expects direct or tlb, got '" + s + "'" + where);
}

CheckMode parse_check(const std::string& s) {
  if (s == "warn") return CheckMode::Warn;
  if (s == "error") return CheckMode::Error;
  throw OptionError("--check takes warn or error, not '" + s + "'");
}

bool parse_on_off(const std::string& what, const std::string& s) {
  if (s == "on") return true;
  if (s == "off") return false;
  throw OptionError(what + " expects on or off, got '" + s + "'");
}

std::string cpu_names(std::string* aliases) {
  return cpu_model_names(aliases);
}

const CpuModel* cpu_by_name(const std::string& name, const char* where) {
  const CpuModel* m = find_cpu_model(name);
  if (m == nullptr) {
    throw OptionError(unknown_cpu_model_message(name, where));
  }
  return m;
}

void check_sysroot(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw OptionError("sysroot '" + dir + "' is not a directory");
  }
}

void check_clock(const RunOptions& o) {
  const double mhz = o.mhz > 0 ? o.mhz : o.cpu->default_mhz.value;
  if (mhz < kMinMhz) {
    throw OptionError("clock " + number_text(mhz) +
                      " MHz is below the lowest the timing model supports (" +
                      number_text(kMinMhz) + " MHz)");
  }
  const VirtualTimeConfig vt;
  const double irq_hz = o.irq_hz < 0 ? vt.irq_hz : o.irq_hz;
  if (o.timing && irq_hz > 0 &&
      mhz * 1e6 / irq_hz * (1.0 - vt.irq_jitter) < 2.0 * static_cast<double>(vt.irq_cycles)) {
    throw OptionError("interrupts at " + number_text(irq_hz) + " Hz would take over half of a " +
                      number_text(mhz) + " MHz clock (each costs " + std::to_string(vt.irq_cycles) +
                      " clocks): raise --mhz or lower --irq-hz");
  }
}

bool parse_size(const std::string& text, uint64_t& bytes) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(text[i++] - '0');
  }
  if (i == 0) return false;
  struct Unit {
    char letter;
    unsigned shift;
  };
  static constexpr Unit kUnits[] = {{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}};
  if (i < text.size()) {
    const char c = static_cast<char>(text[i] & ~0x20);  // upper case
    for (const Unit& u : kUnits) {
      if (c == u.letter) {
        if (v > (UINT64_MAX >> u.shift)) return false;
        v <<= u.shift;
        ++i;
        break;
      }
    }
  }
  if (i < text.size() && (text[i] == 'B' || text[i] == 'b')) ++i;
  if (i != text.size() || v == 0) return false;
  bytes = v;
  return true;
}

uint64_t parse_max_memory(const std::string& s) {
  uint64_t bytes = 0;
  if (parse_size(s, bytes) && bytes >= kMinMaxMemory) return bytes;
  // Digits and a unit that parse_size refused: more bytes than 64 bits hold.
  const size_t unit = s.find_first_not_of("0123456789");
  const bool digits_and_unit =
      unit > 0 &&
      (unit == std::string::npos ||
       (unit + 1 == s.size() && std::string("KkMmGgTt").find(s[unit]) != std::string::npos));
  if (digits_and_unit && !parse_size(s, bytes)) {
    throw OptionError("--max-memory '" + s + "' does not fit in 64 bits (at most " +
                      std::to_string(UINT64_MAX >> 30) + "G)");
  }
  throw OptionError("--max-memory expects a size of at least 1M (e.g. 512M, 2G), got '" + s + "'");
}

}  // namespace padlock::emu
