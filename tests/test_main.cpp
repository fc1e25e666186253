// tests/test_main.cpp — the Catch2 runner of loom_tests. The seed of every random choice in the
// suite comes from LOOM_TEST_SEED (else the clock); it is printed first so any failure can be
// replayed with LOOM_TEST_SEED=<seed>. The same main serves Catch2 2 (CATCH_CONFIG_RUNNER: the
// single header defines no main of its own) and 3 (linked without Catch2WithMain).
#define CATCH_CONFIG_RUNNER
#include "support.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#if defined(__GNUG__)
#include <cxxabi.h>
#endif

namespace {
std::uint64_t g_seed = 0;

bool parse_seed(const char* s, std::uint64_t& out) {
  if (s == nullptr || *s == '\0') return false;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 0);
  if (end == s || *end != '\0') return false;
  out = v;
  return true;
}
}  // namespace

std::uint64_t loom_test_seed() { return g_seed; }

std::string lt::demangle(const char* mangled) {
#if defined(__GNUG__)
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> p(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  if (status == 0 && p) return p.get();
#endif
  return mangled;
}

int main(int argc, char* argv[]) {
  const char* env = std::getenv("LOOM_TEST_SEED");
  if (env != nullptr && *env != '\0') {
    if (!parse_seed(env, g_seed)) {
      std::fprintf(stderr, "loom tests: LOOM_TEST_SEED='%s' is not an unsigned integer\n", env);
      return 2;
    }
  } else {
    g_seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007ull;
  }
  std::printf("loom tests: seed = %llu\n", static_cast<unsigned long long>(g_seed));
  std::fflush(stdout);
  return Catch::Session().run(argc, argv);
}
