// tests/test_errors.cpp — every run-time error path: bounds_error for affine indices out of range
// (the message names the access, the tensor, the dimension, the range needed and the extent),
// shape_error for lone variables ranging past a tensor and for reduction extents that disagree or
// cannot be inferred, and in every case: nothing was written. Zero-extent outputs are no-ops.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using lt::idx_t;

namespace {

// The checks run before any loop and are the same for every schedule; a scalar schedule keeps
// the compile time down (a few use the default schedule, the chunked and accumulating paths).
using S0 = loom::schedule<>;

/// Runs f, which must throw E; returns the message (empty if it did not throw E).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return lt::str("a different exception: ", e.what());
  }
  return {};
}

/// The view's elements all still hold `value` (bitwise; works for NaN sentinels).
template <class V, class T>
bool all_equal(const V& v, T value) {
  bool ok = true;
  lt::for_each_index(lt::extents_of(v), [&](const auto& q) { ok = ok && lt::same_bits(lt::at(v, q), value); });
  return ok;
}

void check_contains(const std::string& msg, std::initializer_list<const char*> parts) {
  INFO("message: " << msg);
  CHECK(!msg.empty());
  for (const char* p : parts) {
    INFO("expected in the message: '" << p << "'");
    CHECK(msg.find(p) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("errors: every loom error derives from loom::error", "[errors]") {
  static_assert(std::is_base_of_v<loom::error, loom::bounds_error>);
  static_assert(std::is_base_of_v<loom::error, loom::shape_error>);
  static_assert(std::is_base_of_v<loom::error, loom::alias_error>);
  static_assert(std::is_base_of_v<std::runtime_error, loom::error>);
  loom::Tensor<float, 1> in("in", 4), out("out", 4);
  CHECK_THROWS_AS(loom::run<S0>(out(x) = in(x + 1)), loom::error);
  CHECK_THROWS_AS(loom::run<S0>(out(x) = in(x + 1)), std::runtime_error);
}

TEST_CASE("errors: bounds_error names the access, the dimension, the range and the extent", "[errors][bounds]") {
  const float S = -7.25f;
  SECTION("1-D offset past the end") {
    loom::Tensor<float, 1> in("in", 10), out("out", 10);
    lt::fill(out.view(), S);
    const auto msg = message_of<loom::bounds_error>([&] { loom::run(out(x) = in(x) + in(x + 1)); });
    check_contains(msg, {"in(x + 1)", "'in'", "dimension 0", "[1, 10]", "extent is 10"});
    CHECK(all_equal(out.view(), S));
  }
  SECTION("1-D negative offset") {
    loom::Tensor<float, 1> in("in", 6), out("out", 6);
    lt::fill(out.view(), S);
    const auto msg = message_of<loom::bounds_error>([&] { loom::run<S0>(out(x) = in(x - 1)); });
    check_contains(msg, {"in(x - 1)", "dimension 0", "[-1, 4]", "extent is 6"});
    CHECK(all_equal(out.view(), S));
  }
  SECTION("scaled index") {
    loom::Tensor<float, 1> in("samples", 9), out("out", 5);
    lt::fill(out.view(), S);
    auto ok = message_of<loom::bounds_error>([&] { loom::run<S0>(out(x) = in(2 * x)); });  // needs [0, 8]: fits
    CHECK(ok.empty());
    loom::Tensor<float, 1> out6("out6", 6);
    lt::fill(out6.view(), S);
    const auto msg = message_of<loom::bounds_error>([&] { loom::run<S0>(out6(x) = in(2 * x)); });
    check_contains(msg, {"samples(2 * x)", "'samples'", "dimension 0", "[0, 10]", "extent is 9"});
    CHECK(all_equal(out6.view(), S));
  }
  SECTION("second dimension of a 2-D stencil, under several schedules") {
    loom::Tensor<float, 2> in("img", 8, 12), out("out", 8, 11);
    auto def = out(y, x) = in(y, x) + in(y, x + 2);
    auto check = [&](auto run_it) {
      lt::fill(out.view(), S);
      const auto msg = message_of<loom::bounds_error>(run_it);
      check_contains(msg, {"img(y, x + 2)", "dimension 1", "[2, 12]", "extent is 12"});
      CHECK(all_equal(out.view(), S));
    };
    check([&] { loom::run(def); });
    check([&] { loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>, loom::parallel<y>>>(def); });
    check([&] { loom::run<loom::schedule<loom::tile<y, x, 4, 4>, loom::fuse<loom::outer<y>, loom::outer<x>>>>(def); });
  }
  SECTION("an affine index mixing two variables") {
    loom::Tensor<float, 2> in("in", 5, 9), out("out", 5, 5);
    // x + y ranges over [0, 8]: an extent of 9 fits exactly.
    CHECK_NOTHROW(loom::run<S0>(out(y, x) = in(y, x + y)));
    lt::fill(out.view(), S);
    loom::Tensor<float, 2> in2("in2", 5, 8);
    const auto msg2 = message_of<loom::bounds_error>([&] { loom::run<S0>(out(y, x) = in2(y, x + y)); });
    check_contains(msg2, {"in2(y, x + y)", "dimension 1", "[0, 8]", "extent is 8"});
    CHECK(all_equal(out.view(), S));
  }
  SECTION("inside a reduction") {
    loom::Tensor<float, 2> A("A", 4, 6);
    loom::Tensor<float, 1> v("v", 6), out("out", 4);
    lt::fill(out.view(), S);
    const auto msg = message_of<loom::bounds_error>([&] { loom::run<S0>(out(i) = sum(k, A(i, k) * v(k + 1))); });
    check_contains(msg, {"v(k + 1)", "dimension 0", "[1, 6]", "extent is 6"});
    CHECK(all_equal(out.view(), S));
    // The same under a chunked parallel reduction.
    const auto msg2 = message_of<loom::bounds_error>([&] {
      loom::run<loom::schedule<loom::split<k, 2>, loom::reorder<loom::outer<k>, i>, loom::parallel<loom::outer<k>>>>(
          out(i) = sum(k, A(i, k) * v(k + 1)));
    });
    check_contains(msg2, {"v(k + 1)", "[1, 6]", "extent is 6"});
    CHECK(all_equal(out.view(), S));
  }
  SECTION("a constant index out of range") {
    loom::Tensor<float, 2> A("A", 4, 3);
    loom::Tensor<float, 1> out("out", 4);
    lt::fill(out.view(), S);
    const auto msg = message_of<loom::bounds_error>([&] { loom::run<S0>(out(i) = A(i, 3)); });
    check_contains(msg, {"A(i, 3)", "dimension 1", "[3, 3]", "extent is 3"});
    CHECK(all_equal(out.view(), S));
  }
  SECTION("+= leaves the output as it was") {
    loom::Tensor<double, 2> in("in", 7, 7), out("out", 7, 7);
    lt::fill(out.view(), 1.5);
    const auto msg = message_of<loom::bounds_error>([&] { loom::run<S0>(out(i, j) += in(j + 1, i)); });
    check_contains(msg, {"in(j + 1, i)", "dimension 0", "[1, 7]", "extent is 7"});
    CHECK(all_equal(out.view(), 1.5));
  }
}

TEST_CASE("errors: shape_error for a lone variable ranging past an input", "[errors][shape]") {
  const float S = 3.5f;
  SECTION("an input smaller than the output") {
    loom::Tensor<float, 2> A("A", 3, 8), C("C", 5, 8);
    lt::fill(C.view(), S);
    const auto msg = message_of<loom::shape_error>([&] { loom::run<S0>(C(i, j) = A(i, j) * 2.f); });
    check_contains(msg, {"A(i, j)", "'A'", "dimension 0", "extent 3", "i ranges over 5"});
    CHECK(all_equal(C.view(), S));
    // The same through vectorized and parallel schedules.
    const auto msg2 = message_of<loom::shape_error>(
        [&] { loom::run<loom::schedule<loom::reorder<j, i>, loom::vectorize<i>, loom::parallel<j>>>(C(i, j) = A(i, j) * 2.f); });
    check_contains(msg2, {"'A'", "dimension 0"});
    CHECK(all_equal(C.view(), S));
  }
  SECTION("a transposed input of the wrong shape") {
    loom::Tensor<float, 2> A("A", 6, 6), C("C", 6, 7);
    lt::fill(C.view(), S);
    const auto msg = message_of<loom::shape_error>([&] { loom::run<S0>(C(i, j) = A(j, i)); });
    check_contains(msg, {"A(j, i)", "dimension 0", "extent 6", "j ranges over 7"});
    CHECK(all_equal(C.view(), S));
  }
  SECTION("an empty input under a non-empty output") {
    loom::Tensor<float, 1> in("in", 0), out("out", 5);
    lt::fill(out.view(), S);
    const auto msg = message_of<loom::shape_error>([&] { loom::run<S0>(out(x) = in(x)); });
    check_contains(msg, {"'in'", "extent 0", "x ranges over 5"});
    CHECK(all_equal(out.view(), S));
  }
  SECTION("an input larger than the output is read in part (no error)") {
    loom::Tensor<float, 2> A("A", 9, 9), C("C", 4, 5);
    auto g = lt::make_rng("larger input");
    lt::fill_random(A.view(), g);
    loom::run<S0>(C(i, j) = A(i, j));
    bool ok = true;
    for (index_t a = 0; a < 4; ++a)
      for (index_t b = 0; b < 5; ++b) ok = ok && C(a, b) == A(a, b);
    CHECK(ok);
  }
}

TEST_CASE("errors: shape_error for reduction extents", "[errors][shape]") {
  const float S = -1.f;
  SECTION("two tensors disagree on a reduction variable's extent") {
    loom::Tensor<float, 2> A("A", 4, 5), B("B", 6, 3), C("C", 4, 3);
    lt::fill(C.view(), S);
    auto def = C(i, j) = sum(k, A(i, k) * B(k, j));
    auto check = [&](auto run_it) {
      lt::fill(C.view(), S);
      const auto msg = message_of<loom::shape_error>(run_it);
      check_contains(msg, {"reduction variable k", "5", "6", "A(i, k)", "B(k, j)"});
      CHECK(all_equal(C.view(), S));
    };
    check([&] { loom::run<S0>(def); });
    check([&] { loom::run<loom::schedule<loom::reorder<k, i, j>, loom::vectorize<j>>>(def); });
    check([&] { loom::run<loom::schedule<loom::split<k, 2>, loom::reorder<loom::outer<k>, i, j>, loom::parallel<loom::outer<k>>>>(def); });
    // += too.
    lt::fill(C.view(), S);
    const auto msg = message_of<loom::shape_error>([&] { loom::run<S0>(C(i, j) += sum(k, A(i, k) * B(k, j))); });
    check_contains(msg, {"reduction variable k"});
    CHECK(all_equal(C.view(), S));
  }
  SECTION("a convolution kernel of the wrong size: the extents come from lone-variable accesses") {
    loom::Tensor<float, 2> in("in", 10, 10), w("w", 3, 3), w2("w2", 3, 2), out("out", 8, 8);
    lt::fill(out.view(), S);
    // ry, rx from w: in(y + ry, x + rx) needs [0, 9] in both dimensions: fine.
    CHECK_NOTHROW(loom::run<S0>(out(y, x) = sum(ry, rx, in(y + ry, x + rx) * w(ry, rx))));
    lt::fill(out.view(), S);
    // Two kernels that disagree on rx.
    const auto msg = message_of<loom::shape_error>(
        [&] { loom::run<S0>(out(y, x) = sum(ry, rx, in(y + ry, x + rx) * w(ry, rx) * w2(ry, rx))); });
    check_contains(msg, {"reduction variable rx", "3", "2"});
    CHECK(all_equal(out.view(), S));
    // A kernel too large for the input is a bounds error of the input.
    loom::Tensor<float, 2> big("big", 4, 4);
    const auto msg2 = message_of<loom::bounds_error>([&] { loom::run<S0>(out(y, x) = sum(ry, rx, in(y + ry, x + rx) * big(ry, rx))); });
    check_contains(msg2, {"in(y + ry, x + rx)", "[0, 10]", "extent is 10"});
    CHECK(all_equal(out.view(), S));
  }
  SECTION("a reduction variable that never indexes a dimension on its own") {
    loom::Tensor<float, 1> v("v", 10), out("out", 4);
    lt::fill(out.view(), S);
    const auto msg = message_of<loom::shape_error>([&] { loom::run<S0>(out(i) = sum(k, v(i + k))); });
    check_contains(msg, {"reduction variable k", "never indexes"});
    CHECK(all_equal(out.view(), S));
  }
  SECTION("a reduction over a variable of a nested reduction that disagrees") {
    loom::Tensor<float, 2> X("X", 4, 5), Y("Y", 4, 6);
    loom::Tensor<float, 1> out("out", 4);
    lt::fill(out.view(), S);
    const auto msg = message_of<loom::shape_error>([&] { loom::run<S0>(out(i) = sum(j, X(i, j)) + maximum(j, Y(i, j))); });
    check_contains(msg, {"reduction variable j", "5", "6"});
    CHECK(all_equal(out.view(), S));
  }
}

TEST_CASE("errors: nothing is written when a run throws, whatever the layout", "[errors]") {
  auto g = lt::make_rng("errors layouts");
  for (lt::layout l : lt::all_layouts()) {
    auto in = lt::random_buffer<float, 2>({9, 13}, lt::pick_layout(g), "in", g);
    auto out = lt::make_buffer<float, 2>({9, 13}, l, "out");
    lt::fill(out.view, 42.f);
    INFO(out.describe());
    CHECK_THROWS_AS(loom::run<S0>(out.view(i, j) = in.view(i + 1, j)), loom::bounds_error);
    CHECK(all_equal(out.view, 42.f));
    CHECK(out.untouched().ok);
    // Aliased: the output is also read (the run would go through a temporary).
    CHECK_THROWS_AS(loom::run<S0>(out.view(i, j) = out.view(j, i)), loom::shape_error);
    CHECK(all_equal(out.view, 42.f));
    CHECK_THROWS_AS(loom::run<S0>(out.view(i, j) = out.view(i, j + 1)), loom::bounds_error);
    CHECK(all_equal(out.view, 42.f));
  }
}

TEST_CASE("errors: index arithmetic that overflows 64 bits is a bounds_error, nothing read or written", "[errors][overflow]") {
  using namespace loom::vars;
  loom::Tensor<float, 1> X("X", 10), out("out", 4);
  for (index_t q = 0; q < 10; ++q) X(q) = float(q);
  for (index_t q = 0; q < 4; ++q) out(q) = 42.f;
  constexpr index_t top = std::numeric_limits<index_t>::max();
  // Before, each of these wrapped into a small range that passed the check, and the run read
  // outside X (a heap overflow under ASan).
  std::string msg = message_of<loom::bounds_error>([&] { loom::run(out(i) = X(i * ((index_t(1) << 62) + 1))); });
  check_contains(msg, {"dimension 0 of 'X'", "overflow 64 bits"});
  msg = message_of<loom::bounds_error>([&] { loom::run(out(i) = X(i + top)); });
  check_contains(msg, {"X(i + 9223372036854775807)", "overflow 64 bits"});
  msg = message_of<loom::bounds_error>([&] { loom::run(out(i) = X(i * 4 + (top - 5))); });
  check_contains(msg, {"overflow 64 bits"});
  // Far outside but representable: the range is named as before.
  msg = message_of<loom::bounds_error>([&] { loom::run(out(i) = X(i - top)); });
  check_contains(msg, {"needs indices [-9223372036854775807, -9223372036854775804]"});
  // A boundary condition makes every index legal, but not indices past 64 bits.
  msg = message_of<loom::bounds_error>([&] { loom::run(out(i) = loom::repeat_edge(X)(i + (top - 2))); });
  check_contains(msg, {"repeat_edge(X)", "overflow 64 bits"});
  msg = message_of<loom::bounds_error>([&] { loom::run(out(i) = loom::constant_exterior(X, 0.f)(i * (top / 2))); });
  check_contains(msg, {"overflow 64 bits"});
  // A stage's region computed from its consumer's reads.
  constexpr loom::Func<float, 1, "f"> f;
  auto p = loom::pipeline(f(i) = X(i) * 2.f, out(i) = f(i * (top - 2)));
  msg = message_of<loom::bounds_error>([&] { loom::run<loom::stage<f, loom::compute_root>>(p); });
  check_contains(msg, {"f(", "overflows 64-bit indices"});
  for (index_t q = 0; q < 4; ++q) CHECK(out(q) == 42.f);
}

TEST_CASE("errors: an output that names an element twice is an alias_error, nothing written", "[errors][alias]") {
  using namespace loom::vars;
  loom::Tensor<float, 1> x("x", 7);
  loom::Tensor<float, 2> X("X", 4, 5);
  for (index_t q = 0; q < 7; ++q) x(q) = float(q + 1);
  std::vector<float> cells(64, 1.5f);
  // A stride of 0: every point writes the one cell (a plain loop would sum into it; loom's lanes
  // and threads would each read it stale).
  auto z = loom::view(cells.data(), loom::shape(7), loom::strides(0), "z");
  std::string msg = message_of<loom::alias_error>([&] { loom::run(z(i) += x(i)); });
  check_contains(msg, {"'z'", "more than once", "dimension 0: extent 7, stride 0"});
  msg = message_of<loom::alias_error>([&] { loom::run<loom::schedule<>>(z(i) = x(i) * 2.f); });
  check_contains(msg, {"'z'", "more than once"});
  // Strides that interleave: (2, 3) over 4 x 3 names offset 6 at (3, 0) and (0, 2).
  auto zz = loom::view(cells.data(), loom::shape(4, 3), loom::strides(2, 3), "zz");
  msg = message_of<loom::alias_error>([&] { loom::run(zz(i, j) = X(i, j)); });
  check_contains(msg, {"'zz'", "more than once"});
  // Strides that interleave without a repeat, (3, 2) over 2 x 3 (offsets 0 2 4 3 5 7): accepted.
  auto ok = loom::view(cells.data(), loom::shape(2, 3), loom::strides(3, 2), "ok");
  loom::run(ok(i, j) = X(i, j));
  for (index_t a = 0; a < 2; ++a)
    for (index_t b = 0; b < 3; ++b) CHECK(cells[std::size_t(3 * a + 2 * b)] == X(a, b));
  // A reduction into it, a pipeline's output, loom::gemm's C and conv2d's output alike.
  std::fill(cells.begin(), cells.end(), 1.5f);
  msg = message_of<loom::alias_error>([&] { loom::run(z(i) = sum(j, X(j, i))); });
  check_contains(msg, {"'z'", "more than once"});
  constexpr loom::Func<float, 1, "f"> f;
  msg = message_of<loom::alias_error>([&] { loom::run(loom::pipeline(f(i) = x(i) * 2.f, z(i) = f(i) + 1.f)); });
  check_contains(msg, {"'z'", "more than once"});
  loom::Tensor<float, 2> A("A", 3, 4), B("B", 4, 3);
  auto c = loom::view(cells.data(), loom::shape(3, 3), loom::strides(0, 1), "c");
  msg = message_of<loom::alias_error>([&] { loom::gemm(c, A.view(), B.view()); });
  check_contains(msg, {"loom::gemm", "'c'", "dimension 0: extent 3, stride 0"});
  loom::Tensor<float, 4> in("in", 1, 3, 3, 2), w("w", 1, 1, 2, 2);
  auto o = loom::view(cells.data(), loom::shape(1, 3, 3, 2), loom::strides(18, 6, 0, 1), "o");
  msg = message_of<loom::alias_error>([&] { loom::conv2d(o, in.view(), w.view()); });
  check_contains(msg, {"loom::conv2d", "'o'", "dimension 2: extent 3, stride 0"});
  for (float v : cells) CHECK(v == 1.5f);
}

TEST_CASE("errors: zero-extent outputs are no-ops and do not throw", "[errors][empty]") {
  loom::Tensor<float, 2> C("C", 0, 5), A("A", 3, 5), B("B", 5, 5);
  loom::Tensor<float, 1> e("e", 0), v("v", 4);
  CHECK_NOTHROW(loom::run<S0>(C(i, j) = A(i, j) * 2.f));
  CHECK_NOTHROW(loom::run<S0>(C(i, j) = sum(k, A(i, k) * B(k, j))));
  CHECK_NOTHROW(loom::run<S0>(e(x) = v(x + 100)));                    // even with an out-of-range index
  CHECK_NOTHROW(loom::run<loom::schedule<loom::vectorize<x>, loom::parallel<loom::outer<x>>>>(e(x) = v(x) * 2.f));
  CHECK_NOTHROW(loom::run<S0>(e(x) += v(x)));
  CHECK_NOTHROW(loom::run<loom::schedule<loom::tile<i, j, 4, 4>, loom::vectorize<loom::inner<j>, lt::w16b<float>>>>(C(i, j) = A(i, j)));
  loom::Tensor<float, 2> D("D", 4, 0);
  CHECK_NOTHROW(loom::run<S0>(D(i, j) = A(i, j)));
  CHECK_NOTHROW(loom::run<loom::schedule<loom::reorder<k, i, j>, loom::vectorize<j>>>(D(i, j) = sum(k, A(i, k) * B(k, j))));
  // A zero-extent tensor's data() is still usable, and the input is untouched.
  CHECK(std::all_of(A.begin(), A.end(), [](float f) { return f == 0.f; }));
}

TEST_CASE("errors: sizes and spans that overflow 64 bits, negative extents and null views", "[errors][overflow]") {
  // An element count past 64 bits: shape_error naming the tensor, before any allocation.
  std::string msg = message_of<loom::shape_error>([] { loom::Tensor<float, 2> t("huge", index_t(1) << 40, index_t(1) << 30); });
  check_contains(msg, {"'huge'", "1099511627776 x 1073741824", "overflows 64 bits"});
  msg = message_of<loom::shape_error>([] { loom::Tensor<float, 3>(index_t(1) << 21, index_t(1) << 21, index_t(1) << 21); });
  check_contains(msg, {"tensor 't", "overflows 64 bits"});
  // Its bytes past 64 bits (2^62 floats): also shape_error, not a wrapped, too small allocation.
  msg = message_of<loom::shape_error>([] { loom::Tensor<float, 1> t("bytes", index_t(1) << 62); });
  check_contains(msg, {"'bytes'", "overflows 64 bits"});
  msg = message_of<loom::shape_error>([] { loom::Tensor<double, 2> t({3, -4}, "neg"); });
  check_contains(msg, {"'neg'", "dimension 1", "negative extent -4"});
  msg = message_of<loom::shape_error>([] { loom::Tensor<double, 2> t("neg2", -1, 4); });
  check_contains(msg, {"'neg2'", "dimension 0", "negative extent -1"});
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOOM_TEST_ASAN 1
#endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(LOOM_TEST_ASAN)
  // A size that fits 64 bits but no address space (2^46 floats = 256 TiB): std::bad_alloc.
  // (Not under ASan, whose allocator aborts on such a request instead of throwing.)
  CHECK_THROWS_AS((loom::Tensor<float, 1>("too_big", index_t(1) << 46)), std::bad_alloc);
#endif

  std::vector<float> buf(64, 1.f);
  loom::Tensor<float, 2> out("out", 4, 4);
  // Strides whose span overflows: shape_error at the view, so no run can write through it.
  msg = message_of<loom::shape_error>([&] {
    (void)loom::view(buf.data(), loom::shape(4, 4), loom::strides(std::numeric_limits<index_t>::max() / 2, 1), "wide");
  });
  check_contains(msg, {"'wide'", "4 x 4", "overflows 64 bits"});
  msg = message_of<loom::shape_error>([&] {
    (void)loom::view(buf.data() + 63, loom::shape(3, 4), loom::strides(std::numeric_limits<index_t>::min() / 2, 1), "down");
  });
  check_contains(msg, {"'down'", "overflows 64 bits"});
  // Spans within 64 elements but past 64 bits in bytes.
  msg = message_of<loom::shape_error>([&] {
    (void)loom::view(buf.data(), loom::shape(2, 2), loom::strides(index_t(1) << 62, 1), "bytes");
  });
  check_contains(msg, {"'bytes'", "overflows 64 bits"});
  // Negative strides within range are fine (a reversed view).
  const auto rev = loom::view(buf.data() + 15, loom::shape(4, 4), loom::strides(-4, -1), "rev");
  loom::run(out(i, j) = rev(i, j) * 2.f);
  CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v == 2.f; }));
  // strided() with a step whose stride product overflows keeps one element of that dimension,
  // whose stride is never used: a valid view, no error.
  const auto tall = loom::view(buf.data(), loom::shape(3, 4), loom::strides(index_t(1) << 40, 1), "tall");
  const auto one_row = tall.strided({index_t(1) << 30, 2});
  CHECK(one_row.extent(0) == 1);
  CHECK(one_row.extent(1) == 2);
  // A null pointer with a non-empty shape: shape_error naming the view; with an empty one, fine.
  msg = message_of<loom::shape_error>([] { (void)loom::view(static_cast<float*>(nullptr), loom::shape(4, 4), "null"); });
  check_contains(msg, {"'null'", "null data pointer"});
  msg = message_of<loom::shape_error>([] {
    (void)loom::view(static_cast<const double*>(nullptr), loom::shape(2), loom::strides(1), "null1");
  });
  check_contains(msg, {"'null1'", "null data pointer"});
  const auto empty = loom::view(static_cast<float*>(nullptr), loom::shape(0, 4), "empty");
  loom::Tensor<float, 2> none("none", 0, 4);
  loom::run(none(i, j) = empty(i, j) + 1.f);
  CHECK(empty.size() == 0);
  msg = message_of<loom::shape_error>([&] { (void)loom::view(buf.data(), loom::shape(-2, 4), "negview"); });
  check_contains(msg, {"'negview'", "negative extent -2"});
  // Nothing was written to the output by any of the failed attempts above (they never reached a run).
  CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v == 2.f; }));
}
