// A DiagnosticSink for unit tests: keeps every Diag reported, to count them.
#pragma once

#include <vector>

#include "models/diagnostics.hpp"

namespace padlock::test {

struct CountingSink : DiagnosticSink {
  std::vector<Diag> seen;
  void report(Diag d, uint64_t) override { seen.push_back(d); }
  int count(Diag d) const {
    int c = 0;
    for (Diag x : seen) c += x == d;
    return c;
  }
};

}  // namespace padlock::test
