// Sourced constants with typed units. A model constant is a value in a unit plus the guide
// section (or other public source) it comes from, e.g. Clocks{9, "§3.3 ECB table"}. The
// unit is the type: a Bytes value cannot initialise a Clocks field, and the listing
// (`padlock-emu cpus --verbose`) takes the unit's text from the type. A Sourced value is a
// double and a pointer, trivially copyable, and reads as a double where the models use it.
#pragma once

#include <type_traits>

namespace padlock {

namespace unit {
struct Clocks {
  static constexpr const char* kText = "clocks";
};
struct Bytes {
  static constexpr const char* kText = "bytes";
};
struct MHz {
  static constexpr const char* kText = "MHz";
};
struct BitsPerSecond {
  static constexpr const char* kText = "bit/s";
};
struct BytesPerClock {
  static constexpr const char* kText = "bytes/clock";
};
struct Ways {  // cache associativity
  static constexpr const char* kText = "ways";
};
struct Ratio {  // a dimensionless factor or fraction
  static constexpr const char* kText = "ratio";
};
struct Probability {
  static constexpr const char* kText = "probability";
};
}  // namespace unit

// The common shape of every sourced value: the value and where it comes from. Built from a
// number and a source only: a value of another unit does not convert, even in braces.
template <typename Unit>
struct Sourced {
  using unit_type = Unit;
  static constexpr const char* unit = Unit::kText;

  double value = 0;
  const char* source = "";

  constexpr Sourced() = default;
  constexpr Sourced(double v, const char* s) : value(v), source(s) {}
  template <typename Other>
  Sourced(Sourced<Other>, const char*) = delete;

  constexpr operator double() const { return value; }
};

using Clocks = Sourced<unit::Clocks>;
using Bytes = Sourced<unit::Bytes>;
using MHz = Sourced<unit::MHz>;
using BitsPerSecond = Sourced<unit::BitsPerSecond>;
using BytesPerClock = Sourced<unit::BytesPerClock>;
using Ways = Sourced<unit::Ways>;
using Ratio = Sourced<unit::Ratio>;
using Probability = Sourced<unit::Probability>;

// As cheap as the double it holds: the models read these in per-instruction code.
static_assert(std::is_trivially_copyable_v<Clocks> && std::is_standard_layout_v<Clocks>);
static_assert(sizeof(Clocks) == sizeof(double) + sizeof(const char*));

}  // namespace padlock
