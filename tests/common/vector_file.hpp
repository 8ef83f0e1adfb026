// Reader for the test-vector files under tests/vectors/: Botan-style sections.
//   # comment
//   [section]
//   Key = 000102...
//   In = ...
//   (a blank line ends a record)
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace padlock::test {

struct VectorRecord {
  std::string section;
  std::map<std::string, std::string> fields;
  int line = 0;  // line of the record's first field, for failure messages

  bool has(const std::string& k) const { return fields.count(k) != 0; }
  const std::string& str(const std::string& k) const {
    auto it = fields.find(k);
    if (it == fields.end()) throw std::runtime_error("vector field missing: " + k);
    return it->second;
  }
  std::vector<uint8_t> hex(const std::string& k) const {
    const std::string& s = str(k);
    if (s.size() % 2 != 0) throw std::runtime_error("odd hex length in field " + k);
    std::vector<uint8_t> out(s.size() / 2);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<uint8_t>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
    return out;
  }
  uint64_t num(const std::string& k) const { return std::stoull(str(k), nullptr, 0); }
};

inline std::string vector_path(const std::string& rel) {
  return std::string(PADLOCK_VECTOR_DIR) + "/" + rel;
}

inline std::vector<VectorRecord> read_vectors(const std::string& rel) {
  std::ifstream in(vector_path(rel));
  if (!in) throw std::runtime_error("cannot open vector file " + vector_path(rel));
  std::vector<VectorRecord> out;
  VectorRecord cur;
  std::string section, line;
  int lineno = 0;
  auto flush = [&] {
    if (!cur.fields.empty()) out.push_back(cur);
    cur = VectorRecord{};
    cur.section = section;
  };
  auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  while (std::getline(in, line)) {
    ++lineno;
    line = trim(line);
    if (line.empty()) {
      flush();
      continue;
    }
    if (line[0] == '#') continue;
    if (line.front() == '[' && line.back() == ']') {
      flush();
      section = line.substr(1, line.size() - 2);
      cur.section = section;
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      throw std::runtime_error(rel + ":" + std::to_string(lineno) + ": expected key = value");
    if (cur.fields.empty()) cur.line = lineno;
    cur.fields[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
  }
  flush();
  return out;
}

}  // namespace padlock::test
