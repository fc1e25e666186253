// docs/lessons/check.hpp — the lessons check their own results against plain loops.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lesson {
inline int failures = 0;
inline void expect_near(double got, double want, double tol, const char* what) {
  if (!(std::fabs(got - want) <= tol * std::fmax(1.0, std::fabs(want)))) {
    std::printf("MISMATCH %s: got %.9g, want %.9g\n", what, got, want);
    ++failures;
  }
}
inline int finish(const char* name) {
  std::printf("%s: %s\n", name, failures == 0 ? "all results match" : "FAILED");
  return failures == 0 ? 0 : 1;
}
}  // namespace lesson
