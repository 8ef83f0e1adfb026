// The checks of the run options and their one-line messages, shared by every entry point:
// the CLI's `run` and `system`, and the Python API (docs/python.md, "Bad arguments"). The
// messages name the CLI's options; Python raises them as ValueError (an OptionError is a
// std::invalid_argument, which pybind11 turns into one) or, for a value of the wrong type,
// as TypeError with the same text.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "emulator/options/run_options.hpp"
#include "models/cpu_model.hpp"

namespace padlock::emu {

class OptionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The messages for a value as the user gave it (`text`); `where` is "" or where it came
// from (" (from PADLOCK_EMU_MHZ)").
std::string mhz_message(const std::string& text, const char* where = "");
std::string irq_hz_message(const std::string& text);
std::string seed_message(const std::string& text, const char* where = "");
std::string port_message(const std::string& text);

// A number as the messages print it ("%g").
std::string number_text(double v);

// The checks of values given as numbers (Python): the value, or OptionError.
double check_mhz(double mhz, const std::string& text, const char* where = "");
double check_irq_hz(double hz, const std::string& text);
int check_port(double port, const std::string& text);

// The same from text (the CLI, the environment).
double parse_mhz(const std::string& s, const char* where = "");
double parse_irq_hz(const std::string& s);
uint64_t parse_seed(const std::string& s, const char* where = "");
int parse_port(const std::string& s);
bool parse_memory(const std::string& s, const char* where = "");  // true: direct, false: tlb
CheckMode parse_check(const std::string& s);
// "on" or "off"; else "WHAT expects on or off, got 'S'" (WHAT: the option or variable).
bool parse_on_off(const std::string& what, const std::string& s);

// The CPU models: "name, name, ..." (and "alias = name, ..." in *aliases), and a model by
// name or alias.
std::string cpu_names(std::string* aliases = nullptr);
const CpuModel* cpu_by_name(const std::string& name, const char* where = "");

void check_sysroot(const std::string& dir);  // a directory, or OptionError
// Once every option is known: the clock, and the interrupts' share of it.
void check_clock(const RunOptions& o);
// A size for --trace-max and --max-memory: digits with an optional K, M, G or T (powers of
// 1024) and an optional trailing B ("100M", "1G", "4096"). False on anything else or 0.
bool parse_size(const std::string& text, uint64_t& bytes);
// The guest's memory cap (--max-memory) from text: K, M, G suffixes.
uint64_t parse_max_memory(const std::string& s);

}  // namespace padlock::emu
