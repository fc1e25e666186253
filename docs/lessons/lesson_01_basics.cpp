// Lesson 1: tensors, index variables, and a definition that loom::run executes.
//
// The algorithm is written once in index notation. `out(i) = ...` builds a lazy *definition*
// (nothing runs yet); loom::run checks it against the tensors' extents and runs the loop nest
// the compiler emitted for it.
#include <loom/loom.hpp>

#include "check.hpp"

using namespace loom::vars;  // i, j, k, x, y, ...

int main() {
  const int n = 1000;
  // Owning tensors: 64-byte aligned, row-major, zero-initialised. The name is optional and
  // shows up in error messages and printed loop nests.
  loom::Tensor<float, 1> x("x", n), y("y", n), out("out", n);
  for (int q = 0; q < n; ++q) {
    x(q) = 0.01f * float(q) - 3.f;  // integers index elements
    y(q) = float(q % 7);
  }

  // A fused elementwise chain: one pass over memory, no temporaries.
  const float a = 2.f, b = -1.f;
  loom::run(out(i) = max(a * x(i) + b, 0.f) * sigmoid(y(i)));
  for (int q = 0; q < n; ++q) {
    const double want = std::fmax(2.0 * x(q) - 1.0, 0.0) / (1.0 + std::exp(-double(y(q))));
    lesson::expect_near(out(q), want, 1e-6, "fused chain");
  }

  // Indices may be affine: a 3-point average over the interior.
  loom::Tensor<float, 1> avg("avg", n - 2);
  loom::run(avg(i) = (x(i) + x(i + 1) + x(i + 2)) / 3.f);
  for (int q = 0; q < n - 2; ++q) lesson::expect_near(avg(q), (x(q) + x(q + 1) + x(q + 2)) / 3.0, 1e-6, "stencil");

  // Views: non-owning, any strides. Here a column-major 3 x 4 matrix in a plain array.
  float raw[12];
  for (int q = 0; q < 12; ++q) raw[q] = float(q);
  auto cm = loom::view(raw, loom::shape(3, 4), loom::strides(1, 3), "cm");
  loom::Tensor<float, 2> rm("rm", 3, 4);
  loom::run(rm(i, j) = cm(i, j) * 10.f);  // a copy into row-major, scaled
  for (int r = 0; r < 3; ++r)
    for (int c2 = 0; c2 < 4; ++c2) lesson::expect_near(rm(r, c2), 10.0 * raw[r + 3 * c2], 0, "view");

  return lesson::finish("lesson 1");
}
