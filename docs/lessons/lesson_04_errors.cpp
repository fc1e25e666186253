// Lesson 4: errors and bounds.
//
// Everything that needs run-time extents is checked once per run, before any loop runs, so a
// failed run writes nothing. Index ranges come from bounds inference over the affine indices.
// Shapes are checked where tensors and views are made: a negative extent, a size or a strided
// span past 64 bits, or a null pointer with a non-empty shape is a shape_error naming the tensor.
// Schedules are checked by the compiler: an illegal one does not build, and its message is the
// first error at the call of run (see tests/compile_fail).
#include <loom/loom.hpp>

#include <cstdio>
#include <string>

#include "check.hpp"

using namespace loom::vars;
using namespace loom;

int main() {
  Tensor<float, 1> in("in", 100), out("out", 100);
  for (int q = 0; q < 100; ++q) out(q) = -7.f;  // a sentinel: nothing may overwrite it

  // in(x + 1) at x = 99 reads in(100): a bounds_error naming the access, dimension and range.
  try {
    run(out(x) = in(x + 1));
    lesson::expect_near(0, 1, 0, "bounds_error expected");
  } catch (const bounds_error& e) {
    std::printf("caught: %s\n", e.what());
    const std::string msg = e.what();
    lesson::expect_near(msg.find("in(x + 1)") != std::string::npos, 1, 0, "message names the access");
    lesson::expect_near(msg.find("[1, 100]") != std::string::npos, 1, 0, "message gives the range");
  }
  for (int q = 0; q < 100; ++q) lesson::expect_near(out(q), -7.0, 0, "nothing written");

  // The same stencil over the interior is fine: the output is one shorter.
  Tensor<float, 1> inner_out("inner_out", 99);
  run(inner_out(x) = in(x + 1) - in(x));

  // Reduction extents must agree.
  Tensor<float, 2> A("A", 4, 5), B("B", 6, 3), C("C", 4, 3);
  try {
    run(C(i, j) = sum(k, A(i, k) * B(k, j)));
    lesson::expect_near(0, 1, 0, "shape_error expected");
  } catch (const shape_error& e) {
    std::printf("caught: %s\n", e.what());
  }

  // Reading the output at other points than it is written is made correct (via a temporary).
  Tensor<float, 2> S("S", 3, 3);
  for (int r = 0; r < 3; ++r)
    for (int c2 = 0; c2 < 3; ++c2) S(r, c2) = float(3 * r + c2);
  run(S(i, j) = S(j, i));
  for (int r = 0; r < 3; ++r)
    for (int c2 = 0; c2 < 3; ++c2) lesson::expect_near(S(r, c2), 3.0 * c2 + r, 0, "in-place transpose");

  // Zero extents are valid: nothing runs.
  Tensor<float, 1> empty_in("empty_in", 0), empty_out("empty_out", 0);
  run(empty_out(i) = empty_in(i) * 2.f);

  // Bad shapes fail where the tensor or view is made, before any allocation or run.
  try {
    Tensor<float, 2> huge("huge", index_t(1) << 40, index_t(1) << 30);  // 2^70 elements
    lesson::expect_near(0, 1, 0, "shape_error expected");
  } catch (const shape_error& e) {
    std::printf("caught: %s\n", e.what());
  }
  try {
    float* nothing = nullptr;
    auto v = view(nothing, shape(4, 4), "v");
    lesson::expect_near(0, 1, v.size(), "shape_error expected");
  } catch (const shape_error& e) {
    std::printf("caught: %s\n", e.what());
  }

  // Every loom error derives from loom::error.
  try {
    run(out(x) = in(2 * x));
  } catch (const error& e) {
    std::printf("caught (as loom::error): %s\n", e.what());
  }
  return lesson::finish("lesson 4");
}
