// Out-of-tree consumer smoke test: loom must be usable through loom::loom (CMake) or
// `pkg-config --cflags --libs loom` alone. Built by cmake/ConsumerCheck.cmake.
#include <loom/loom.hpp>
#include <loom/version.hpp>

// The package's version (find_package's loom_VERSION, pkg-config's --modversion) must be the
// headers' version.
#if defined(LOOM_CONSUMER_EXPECT_MAJOR)
static_assert(LOOM_VERSION_MAJOR == LOOM_CONSUMER_EXPECT_MAJOR && LOOM_VERSION_MINOR == LOOM_CONSUMER_EXPECT_MINOR &&
                  LOOM_VERSION_PATCH == LOOM_CONSUMER_EXPECT_PATCH,
              "the package version differs from include/loom/version.hpp");
#endif
static_assert(LOOM_VERSION == LOOM_VERSION_MAJOR * 10000 + LOOM_VERSION_MINOR * 100 + LOOM_VERSION_PATCH);

int main() {
  using namespace loom::vars;
  loom::Tensor<float, 1> x(37), y(37);
  for (loom::index_t n = 0; n < 37; ++n) x(n) = float(n);
  loom::run(y(i) = x(i) * 2.f + 1.f);  // a run: OpenMP and xsimd must link
  for (loom::index_t n = 0; n < 37; ++n) {
    if (y(n) != float(2 * n + 1)) return 1;
  }
  return 0;
}
