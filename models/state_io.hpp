// Byte streams for saving and restoring model state (the harness's Machine.snapshot()).
// A stream is only read back by the same build: values are written in host byte order and
// plain structs as their bytes, so no field-by-field format is promised between versions.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace padlock {

// A stream that does not match what the reader expects (truncated, another CPU model or
// configuration, another build).
class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class StateWriter {
 public:
  explicit StateWriter(std::vector<uint8_t>& out) : out_(out) {}

  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  template <typename T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "pod() writes plain data only");
    bytes(&v, sizeof v);
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  template <typename T>
  void pods(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>, "pods() writes plain data only");
    pod<uint64_t>(v.size());
    bytes(v.data(), v.size() * sizeof(T));
  }

 private:
  std::vector<uint8_t>& out_;
};

class StateReader {
 public:
  StateReader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

  void bytes(void* dst, size_t n) {
    if (n > left()) throw StateError("snapshot: truncated");
    std::memcpy(dst, p_, n);
    p_ += n;
  }
  // The next n bytes in place (valid while the caller's buffer lives).
  const uint8_t* take(size_t n) {
    if (n > left()) throw StateError("snapshot: truncated");
    const uint8_t* p = p_;
    p_ += n;
    return p;
  }
  template <typename T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>, "pod() reads plain data only");
    T v;
    bytes(&v, sizeof v);
    return v;
  }
  // Into an object in place (trivially copyable types without a default constructor).
  template <typename T>
  void pod(T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "pod() reads plain data only");
    bytes(&v, sizeof v);
  }
  std::string str() {
    const uint64_t n = pod<uint64_t>();
    const uint8_t* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  template <typename T>
  void pods(std::vector<T>& v) {
    const uint64_t n = pod<uint64_t>();
    if (n > left() / sizeof(T)) throw StateError("snapshot: truncated");
    v.resize(n);
    bytes(v.data(), n * sizeof(T));
  }
  // A tag written by the matching save(): a stream read with the wrong layout stops here.
  void expect(uint32_t tag) {
    if (pod<uint32_t>() != tag) throw StateError("snapshot: not written by this build's layout");
  }
  size_t left() const { return static_cast<size_t>(end_ - p_); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace padlock
