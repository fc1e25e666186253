// tests/test_elementwise_layouts.cpp — elementwise definitions beyond single operators:
// broadcasting, affine indices (stencils, reversal, strides of 2), every memory layout for inputs
// and outputs, static extents, `+=`, in-place updates and aliasing through other views.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using lt::idx_t;

namespace {

template <class T, std::size_t R>
void expect_match(const char* what, const lt::buffer<T, R>& out, const std::vector<double>& ref, double tol, double floor = 1.0) {
  const auto r = lt::compare(out.view, ref, tol, floor);
  INFO(what << ": " << out.describe() << ": " << r.message);
  CHECK(r.ok);
  const auto u = out.untouched();
  INFO(u.message);
  CHECK(u.ok);
}

using S_scalar = loom::schedule<>;
using S_vec_masked = loom::schedule<loom::vectorize<j, loom::native, loom::tail::masked>>;
using S_tile = loom::schedule<loom::tile<i, j, 4, 8>, loom::vectorize<loom::inner<j>, lt::w16b<float>>, loom::parallel<loom::outer<i>>>;
using S_lane_i = loom::schedule<loom::reorder<j, i>, loom::vectorize<i>>;

}  // namespace

TEST_CASE("broadcast: bias(j) and scale(i) into out(i, j)", "[elementwise][broadcast]") {
  auto g = lt::make_rng("broadcast");
  for (int rep = 0; rep < 40; ++rep) {
    const index_t M = lt::pick_size(g, 100), N = lt::pick_size(g, 100);
    auto A = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "A", g);
    auto bias = lt::random_buffer<float, 1>({N}, lt::pick_layout(g), "bias", g);
    auto scale = lt::random_buffer<float, 1>({M}, lt::pick_layout(g), "scale", g);
    auto out = lt::make_buffer<float, 2>({M, N}, lt::pick_layout(g), "out");
    std::vector<double> ref(static_cast<std::size_t>(M * N));
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b)
        ref[std::size_t(a * N + b)] = std::max(double(A.view(a, b)) * scale.view(a) + bias.view(b), 0.0);
    auto def = out.view(i, j) = max(A.view(i, j) * scale.view(i) + bias.view(j), 0.f);
    INFO("M = " << M << ", N = " << N << "; " << A.describe());
    loom::run(def);
    expect_match("default", out, ref, 1e-6);
    lt::fill(out.view, lt::sentinel<float>());
    loom::run<S_scalar>(def);
    expect_match("scalar", out, ref, 1e-6);
    lt::fill(out.view, lt::sentinel<float>());
    loom::run<S_lane_i>(def);
    expect_match("reorder<j, i>, vectorize<i>", out, ref, 1e-6);
    lt::fill(out.view, lt::sentinel<float>());
    loom::run<S_tile>(def);
    expect_match("tile", out, ref, 1e-6);

    // Only a broadcast operand, and only a constant.
    auto rows = out.view(i, j) = bias.view(j) * 2.f;
    loom::run(rows);
    std::vector<double> ref2(ref.size());
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) ref2[std::size_t(a * N + b)] = 2.0 * bias.view(b);
    expect_match("out(i, j) = bias(j) * 2", out, ref2, 1e-7);
    loom::run<S_lane_i>(out.view(i, j) = scale.view(i) - 1.f);
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) ref2[std::size_t(a * N + b)] = double(scale.view(a)) - 1.0;
    expect_match("out(i, j) = scale(i) - 1", out, ref2, 1e-7);
    loom::run(out.view(i, j) = 1.5f);
    std::fill(ref2.begin(), ref2.end(), 1.5);
    expect_match("out(i, j) = 1.5", out, ref2, 0);
  }
}

TEST_CASE("broadcast: rank 3 output from rank 2 and rank 1 inputs, constant indices", "[elementwise][broadcast]") {
  auto g = lt::make_rng("broadcast rank 3");
  for (int rep = 0; rep < 15; ++rep) {
    const index_t P = lt::pick_size(g, 9), M = lt::pick_size(g, 20), N = lt::pick_size(g, 40);
    auto A = lt::random_buffer<double, 2>({P, N}, lt::pick_layout(g), "A", g);
    auto B = lt::random_buffer<double, 1>({M}, lt::pick_layout(g), "B", g);
    auto C = lt::random_buffer<double, 2>({M, 3}, lt::pick_layout(g), "C", g);
    auto out = lt::make_buffer<double, 3>({P, M, N}, lt::pick_layout(g), "out");
    auto def = out.view(i, j, k) = A.view(i, k) * B.view(j) + C.view(j, 2) - C.view(j, 0);
    std::vector<double> ref(static_cast<std::size_t>(P * M * N));
    for (index_t a = 0; a < P; ++a)
      for (index_t b = 0; b < M; ++b)
        for (index_t c = 0; c < N; ++c)
          ref[std::size_t((a * M + b) * N + c)] = A.view(a, c) * B.view(b) + C.view(b, 2) - C.view(b, 0);
    INFO(A.describe() << "; " << C.describe());
    loom::run(def);
    expect_match("default", out, ref, 1e-15);
    lt::fill(out.view, lt::sentinel<double>());
    loom::run<loom::schedule<loom::fuse<i, j>, loom::vectorize<k, lt::w16b<double>, loom::tail::guard>, loom::parallel<loom::fused<i, j>>>>(def);
    expect_match("fuse<i, j>, vectorize<k, 2, guard>, parallel", out, ref, 1e-15);
    lt::fill(out.view, lt::sentinel<double>());
    loom::run<loom::schedule<loom::reorder<k, j, i>, loom::vectorize<j>>>(def);
    expect_match("reorder<k, j, i>, vectorize<j>", out, ref, 1e-15);
  }
}

TEST_CASE("affine indices: 1-D stencils, strides of 2, reversal", "[elementwise][affine]") {
  auto g = lt::make_rng("affine 1d");
  for (index_t n : lt::sizes_up_to(200)) {
    auto in = lt::random_buffer<float, 1>({2 * n + 3}, lt::pick_layout(g), "in", g);
    auto out = lt::make_buffer<float, 1>({n}, lt::pick_layout(g), "out");
    auto def = out.view(x) = in.view(x) + in.view(x + 1) * 2.f + in.view(2 * x) - in.view(2 * x + 3) * 0.5f;
    std::vector<double> ref(static_cast<std::size_t>(n));
    for (index_t q = 0; q < n; ++q)
      ref[std::size_t(q)] = in.view(q) + 2.0 * in.view(q + 1) + in.view(2 * q) - 0.5 * in.view(2 * q + 3);
    INFO("n = " << n << "; " << in.describe());
    loom::run(def);
    expect_match("default", out, ref, 1e-6);
    lt::fill(out.view, lt::sentinel<float>());
    loom::run<loom::schedule<loom::vectorize<x, lt::w16b<float>, loom::tail::masked>>>(def);
    expect_match("vectorize<x, 4, masked>", out, ref, 1e-6);
    lt::fill(out.view, lt::sentinel<float>());
    loom::run<loom::schedule<loom::split<x, 5, loom::tail::shift_inwards>, loom::unroll<loom::inner<x>>>>(def);
    expect_match("split<x, 5, shift_inwards>, unroll<inner<x>>", out, ref, 1e-6);

    // Reversal with a run-time offset: out(x) = in(n - 1 - x), and a run-time shift.
    const index_t off = lt::uniform(g, 0, n + 3);
    auto rev = out.view(x) = in.view(n - 1 - x) - in.view(x + off);
    for (index_t q = 0; q < n; ++q) ref[std::size_t(q)] = double(in.view(n - 1 - q)) - in.view(q + off);
    loom::run(rev);
    expect_match("out(x) = in(n - 1 - x) - in(x + off)", out, ref, 1e-6);
    lt::fill(out.view, lt::sentinel<float>());
    loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::guard>>>(rev);
    expect_match("reversal, vectorize<x, native, guard>", out, ref, 1e-6);
  }
}

TEST_CASE("affine indices: 2-D stencil with offsets, scaled indices and mixed variables", "[elementwise][affine]") {
  auto g = lt::make_rng("affine 2d");
  for (int rep = 0; rep < 30; ++rep) {
    const index_t H = lt::pick_size(g, 70), W = lt::pick_size(g, 70);
    auto in = lt::random_buffer<float, 2>({2 * H + 2, W + 2 + H}, lt::pick_layout(g), "in", g);
    auto out = lt::make_buffer<float, 2>({H, W}, lt::pick_layout(g), "out");
    // in(y + 1, x + 2): shifted; in(2 * y + 1, x): every other row; in(y, x + y): a skewed diagonal.
    auto def = out.view(y, x) = (in.view(y, x) + in.view(y + 1, x + 2) + in.view(2 * y + 1, x) - in.view(y, x + y)) * 0.25f;
    std::vector<double> ref(static_cast<std::size_t>(H * W));
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b)
        ref[std::size_t(a * W + b)] =
            (double(in.view(a, b)) + in.view(a + 1, b + 2) + in.view(2 * a + 1, b) - in.view(a, b + a)) * 0.25;
    INFO("H = " << H << ", W = " << W << "; " << in.describe() << "; " << out.describe());
    loom::run(def);
    expect_match("default", out, ref, 1e-6);
    lt::fill(out.view, lt::sentinel<float>());
    loom::run<loom::schedule<loom::tile<y, x, 8, 16>, loom::vectorize<loom::inner<x>, lt::w32b<float>>>>(def);
    expect_match("tile<y, x, 8, 16>, vectorize<inner<x>>", out, ref, 1e-6);
    lt::fill(out.view, lt::sentinel<float>());
    loom::run<loom::schedule<loom::reorder<x, y>, loom::vectorize<y, loom::native, loom::tail::masked>>>(def);
    expect_match("reorder<x, y>, vectorize<y, masked>", out, ref, 1e-6);
  }
}

TEST_CASE("layouts: every input layout with every output layout", "[elementwise][layout]") {
  auto g = lt::make_rng("layouts");
  for (lt::layout la : lt::all_layouts()) {
    for (lt::layout lo : lt::all_layouts()) {
      for (int rep = 0; rep < 3; ++rep) {
        const index_t M = lt::pick_size(g, 50), N = lt::pick_size(g, 50);
        auto A = lt::random_buffer<float, 2>({M, N}, la, "A", g);
        auto B = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "B", g);
        auto out = lt::make_buffer<float, 2>({M, N}, lo, "out");
        auto def = out.view(i, j) = A.view(i, j) * 2.f - B.view(i, j);
        std::vector<double> ref(static_cast<std::size_t>(M * N));
        for (index_t a = 0; a < M; ++a)
          for (index_t b = 0; b < N; ++b) ref[std::size_t(a * N + b)] = 2.0 * A.view(a, b) - B.view(a, b);
        INFO("M = " << M << ", N = " << N << "; " << A.describe() << "; " << B.describe() << "; " << out.describe());
        loom::run(def);
        expect_match("default", out, ref, 1e-6);
        lt::fill(out.view, lt::sentinel<float>());
        loom::run<S_vec_masked>(def);
        expect_match("vectorize<j, native, masked>", out, ref, 1e-6);
        lt::fill(out.view, lt::sentinel<float>());
        loom::run<S_tile>(def);
        expect_match("tile<i, j, 4, 8>, vectorize, parallel", out, ref, 1e-6);
        lt::fill(out.view, lt::sentinel<float>());
        loom::run<S_lane_i>(def);
        expect_match("reorder<j, i>, vectorize<i>", out, ref, 1e-6);
      }
    }
  }
}

TEST_CASE("layouts: writing through transposed, permuted and column-major outputs", "[elementwise][layout]") {
  auto g = lt::make_rng("output views");
  for (int rep = 0; rep < 20; ++rep) {
    const index_t M = lt::pick_size(g, 70), N = lt::pick_size(g, 70);
    loom::Tensor<float, 2> A("A", M, N), T("T", N, M);
    lt::fill_random(A.view(), g);
    // T(j, i) = A(i, j) written as T.transposed()(i, j) = A(i, j).
    auto Tt = T.transposed();
    loom::run(Tt(i, j) = A(i, j));
    bool ok = true;
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) ok = ok && T(b, a) == A(a, b);
    INFO("M = " << M << ", N = " << N);
    CHECK(ok);
    lt::fill(T.view(), 0.f);
    loom::run<loom::schedule<loom::tile<i, j, 16, 16>, loom::vectorize<loom::inner<j>, loom::native, loom::tail::masked>>>(
        T.permuted<1, 0>()(i, j) = A(i, j) + 1.f);
    ok = true;
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) ok = ok && T(b, a) == A(a, b) + 1.f;
    CHECK(ok);
    // Column-major memory through loom::view.
    std::vector<float> cm(static_cast<std::size_t>(M * N), -1.f);
    auto C = loom::view(cm.data(), loom::shape(M, N), loom::strides(1, M), "C");
    loom::run(C(i, j) = A(i, j) * 3.f);
    ok = true;
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) ok = ok && cm[std::size_t(a + b * M)] == A(a, b) * 3.f;
    CHECK(ok);
  }
}

TEST_CASE("static extents: inputs and outputs with compile-time extents", "[elementwise][static]") {
  auto g = lt::make_rng("static extents");
  for (index_t N : lt::sizes_up_to(100)) {
    loom::Tensor<float, 2, loom::extents<16, loom::dyn>> S("S", 16, N);
    loom::Tensor<float, 2> A("A", 16, N), out("out", 16, N);
    lt::fill_random(A.view(), g);
    loom::run(S(i, j) = A(i, j) * 2.f);
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::masked>, loom::unroll<i, 4>>>(out(i, j) = S(i, j) + A(i, j));
    bool ok = true;
    for (index_t a = 0; a < 16; ++a)
      for (index_t b = 0; b < N; ++b) ok = ok && S(a, b) == A(a, b) * 2.f && out(a, b) == S(a, b) + A(a, b);
    INFO("N = " << N);
    CHECK(ok);

    loom::Tensor<float, 2, loom::extents<loom::dyn, 16>> W("W", N, 16);
    loom::Tensor<float, 2> B("B", N, 16);
    lt::fill_random(B.view(), g);
    loom::run<loom::schedule<loom::vectorize<j>>>(W(i, j) = B(i, j) - 1.f);
    ok = true;
    for (index_t a = 0; a < N; ++a)
      for (index_t b = 0; b < 16; ++b) ok = ok && W(a, b) == B(a, b) - 1.f;
    CHECK(ok);
  }
  // Fully static, odd extents: every tail is known to the compiler.
  loom::Tensor<double, 2, loom::extents<3, 5>> F("F");
  loom::Tensor<double, 2, loom::extents<3, 5>> G("G");
  lt::fill_random(G.view(), g);
  loom::run<loom::schedule<loom::vectorize<j, lt::w16b<double>>>>(F(i, j) = G(i, j) * G(i, j));
  bool ok = true;
  for (index_t a = 0; a < 3; ++a)
    for (index_t b = 0; b < 5; ++b) ok = ok && F(a, b) == G(a, b) * G(a, b);
  CHECK(ok);
  loom::run(F(i, j) = G(i, j) + 1.0);
  CHECK(F(2, 4) == G(2, 4) + 1.0);
  CHECK(F(0, 0) == G(0, 0) + 1.0);
}

TEST_CASE("+=: accumulates into the output under every legal tail", "[elementwise][accumulate]") {
  auto g = lt::make_rng("plus equals");
  for (int rep = 0; rep < 30; ++rep) {
    const index_t M = lt::pick_size(g, 70), N = lt::pick_size(g, 70);
    auto A = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "A", g);
    auto bias = lt::random_buffer<float, 1>({N}, lt::pick_layout(g), "bias", g);
    auto out = lt::make_buffer<float, 2>({M, N}, lt::pick_layout(g), "out");
    lt::fill_random(out.view, g);
    std::vector<double> ref(static_cast<std::size_t>(M * N));
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) ref[std::size_t(a * N + b)] = double(out.view(a, b));
    auto def = out.view(i, j) += A.view(i, j) * 2.f + bias.view(j);
    auto step = [&] {
      for (index_t a = 0; a < M; ++a)
        for (index_t b = 0; b < N; ++b) ref[std::size_t(a * N + b)] += 2.0 * A.view(a, b) + bias.view(b);
    };
    INFO("M = " << M << ", N = " << N << "; " << A.describe() << "; " << out.describe());
    loom::run(def);
    step();
    expect_match("default", out, ref, 1e-5);
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::masked>>>(def);
    step();
    expect_match("vectorize<j, masked>", out, ref, 1e-5);
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::guard>, loom::split<i, 3>>>(def);
    step();
    expect_match("vectorize<j, guard>, split<i, 3>", out, ref, 1e-5);
    loom::run<loom::schedule<loom::tile<i, j, 3, 8>, loom::unroll<loom::inner<i>>, loom::parallel<loom::outer<i>>>>(def);
    step();
    expect_match("tile<i, j, 3, 8>, unroll<inner<i>>, parallel<outer<i>>", out, ref, 1e-5);
  }
  // int32: exact.
  for (index_t n : lt::sizes_up_to(100)) {
    auto a = lt::random_buffer<int, 1>({n}, lt::pick_layout(g), "a", g, -1000, 1000);
    auto o = lt::make_buffer<int, 1>({n}, lt::pick_layout(g), "o");
    lt::fill_random(o.view, g, -5, 5);
    std::vector<double> ref(static_cast<std::size_t>(n));
    for (index_t q = 0; q < n; ++q) ref[std::size_t(q)] = double(o.view(q)) + 3.0 * a.view(q) + 3.0 * a.view(q);
    loom::run(o.view(x) += a.view(x) * 3);
    loom::run<loom::schedule<loom::unroll<x, 4>>>(o.view(x) += 3 * a.view(x));
    INFO("n = " << n);
    expect_match("int +=", o, ref, 0);
  }
}

TEST_CASE("in place: the output read at its own points", "[elementwise][alias]") {
  auto g = lt::make_rng("in place");
  for (index_t n : lt::sizes_up_to(200)) {
    auto A = lt::random_buffer<float, 1>({n}, lt::pick_layout(g), "A", g);
    std::vector<double> ref(static_cast<std::size_t>(n));
    for (index_t q = 0; q < n; ++q) ref[std::size_t(q)] = 2.0 * A.view(q) + 1.0;
    loom::run(A.view(x) = A.view(x) * 2.f + 1.f);
    INFO("n = " << n);
    expect_match("A(x) = A(x) * 2 + 1", A, ref, 1e-6);
    for (index_t q = 0; q < n; ++q) ref[std::size_t(q)] = ref[std::size_t(q)] + ref[std::size_t(q)] * ref[std::size_t(q)];
    loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>>>(A.view(x) += A.view(x) * A.view(x));
    expect_match("A(x) += A(x) * A(x) (vectorized)", A, ref, 1e-5);
  }
}

TEST_CASE("aliasing: shifted reads of the output see the old values", "[elementwise][alias]") {
  auto g = lt::make_rng("alias shift");
  for (index_t n : lt::sizes_up_to(200)) {
    if (n < 2) continue;
    loom::Tensor<float, 1> A("A", n);
    lt::fill_random(A.view(), g);
    const std::vector<float> old(A.begin(), A.end());
    // Left shift: A[q] = old[q + 1].
    auto head = A.block({0}, {n - 1});
    loom::run(head(x) = A(x + 1));
    bool ok = A(n - 1) == old[std::size_t(n - 1)];
    for (index_t q = 0; q + 1 < n; ++q) ok = ok && A(q) == old[std::size_t(q + 1)];
    INFO("n = " << n);
    CHECK(ok);
    // Right shift, which a forward loop without a temporary would smear: A[q + 1] = old'[q].
    const std::vector<float> old2(A.begin(), A.end());
    auto tail = A.block({1}, {n - 1});
    loom::run<loom::schedule<loom::vectorize<x, lt::w16b<float>, loom::tail::shift_inwards>>>(tail(x) = A(x) * 1.f);
    ok = A(0) == old2[0];
    for (index_t q = 0; q + 1 < n; ++q) ok = ok && A(q + 1) == old2[std::size_t(q)];
    CHECK(ok);
    // Reversal in place: A(x) = A(n - 1 - x).
    const std::vector<float> old3(A.begin(), A.end());
    loom::run(A(x) = A(n - 1 - x));
    ok = true;
    for (index_t q = 0; q < n; ++q) ok = ok && A(q) == old3[std::size_t(n - 1 - q)];
    CHECK(ok);
  }
}

namespace {
template <class Sched>
void transpose_in_place(lt::rng_t& g, index_t n, const char* sched) {
  loom::Tensor<float, 2> A("A", n, n);
  lt::fill_random(A.view(), g);
  const loom::Tensor<float, 2> old = A;
  INFO("n = " << n << ", schedule " << sched);
  loom::run<Sched>(A(i, j) = A(j, i));
  bool ok = true;
  for (index_t a = 0; a < n; ++a)
    for (index_t b = 0; b < n; ++b) ok = ok && A(a, b) == old(b, a);
  CHECK(ok);
  // A += A^T (symmetric result), through a transposed view as well.
  loom::run<Sched>(A(i, j) += A(j, i));
  ok = true;
  for (index_t a = 0; a < n; ++a)
    for (index_t b = 0; b < n; ++b) ok = ok && A(a, b) == old(b, a) + old(a, b);
  CHECK(ok);
  auto At = A.transposed();
  const loom::Tensor<float, 2> sym = A;
  loom::run<Sched>(At(i, j) = A(i, j) - old(j, i));  // writes A[j][i] = sym[i][j] - old[i][j]
  ok = true;
  for (index_t a = 0; a < n; ++a)
    for (index_t b = 0; b < n; ++b) ok = ok && A(b, a) == sym(a, b) - old(b, a);
  CHECK(ok);
}
}  // namespace

TEST_CASE("aliasing: in-place transposes under several schedules", "[elementwise][alias]") {
  auto g = lt::make_rng("alias transpose");
  for (index_t n : lt::sizes_up_to(70)) {
    transpose_in_place<loom::schedule<>>(g, n, "schedule<>");
    transpose_in_place<loom::auto_schedule>(g, n, "default");
    transpose_in_place<loom::schedule<loom::tile<i, j, 8, 8>, loom::vectorize<loom::inner<j>, lt::w16b<float>>, loom::parallel<loom::outer<i>>>>(
        g, n, "tile 8x8, vectorize, parallel");
    transpose_in_place<loom::schedule<loom::vectorize<i, loom::native, loom::tail::masked>>>(g, n, "vectorize<i, masked>");
  }
}

TEST_CASE("aliasing: overlapping and disjoint blocks of one buffer", "[elementwise][alias]") {
  auto g = lt::make_rng("alias blocks");
  for (int rep = 0; rep < 40; ++rep) {
    const index_t M = lt::pick_size(g, 40, 4), N = lt::pick_size(g, 40, 4);
    loom::Tensor<float, 2> A("A", M, N);
    lt::fill_random(A.view(), g);
    const loom::Tensor<float, 2> old = A;
    const index_t h = M / 2, w = N / 2;
    // out = the top-left block, in = the block one row and column further: they overlap.
    auto out = A.block({0, 0}, {h, w});
    auto in = A.block({1, 1}, {h + 1, w});
    loom::run<loom::schedule<loom::vectorize<j, loom::native, loom::tail::shift_inwards>>>(out(i, j) = in(i, j) + in(i + 1, j));
    bool ok = true;
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) {
        const float e = (a < h && b < w) ? old(a + 1, b + 1) + old(a + 2, b + 1) : old(a, b);
        ok = ok && A(a, b) == e;
      }
    INFO("M = " << M << ", N = " << N);
    CHECK(ok);
    // Disjoint halves (top rows from bottom rows): no temporary needed, same result.
    const loom::Tensor<float, 2> old2 = A;
    auto top = A.block({0, 0}, {h, N});
    auto bottom = A.block({M - h, 0}, {h, N});
    loom::run(top(i, j) = bottom(i, j) * 0.5f);
    ok = true;
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) ok = ok && A(a, b) == (a < h ? old2(a + M - h, b) * 0.5f : old2(a, b));
    CHECK(ok);
  }
}

TEST_CASE("definitions capture scalars when written and read tensors when run", "[elementwise]") {
  loom::Tensor<float, 1> a("a", 37), o("o", 37);
  for (index_t q = 0; q < 37; ++q) a(q) = float(q);
  float alpha = 2.5f;
  auto def = o(x) = a(x) * alpha;
  alpha = 100.f;
  a(3) = -1.f;  // tensors are read when the definition runs
  loom::run(def);
  CHECK(o(0) == 0.f);
  CHECK(o(3) == -2.5f);
  CHECK(o(36) == 90.f);
  // The same definition runs again with the new contents.
  a(4) = 10.f;
  loom::run(def);
  CHECK(o(4) == 25.f);
}

TEST_CASE("rank 4 elementwise definitions and permuted views", "[elementwise]") {
  auto g = lt::make_rng("rank 4");
  const index_t e0 = 3, e1 = 4, e2 = 5, e3 = 17;
  loom::Tensor<float, 4> A("A", e0, e1, e2, e3), out("out", e3, e0, e2, e1);
  lt::fill_random(A.view(), g);
  // out(l, i, k, j) = A(i, j, k, l) + 1 (a 4-D permutation).
  loom::run(out(l, i, k, j) = A(i, j, k, l) + 1.f);
  bool ok = true;
  for (index_t a = 0; a < e0; ++a)
    for (index_t b = 0; b < e1; ++b)
      for (index_t c = 0; c < e2; ++c)
        for (index_t q = 0; q < e3; ++q) ok = ok && out(q, a, c, b) == A(a, b, c, q) + 1.f;
  CHECK(ok);
  // The same through a permuted input view.
  loom::Tensor<float, 4> out2("out2", e3, e0, e2, e1);
  loom::run<loom::schedule<loom::vectorize<l, loom::native, loom::tail::masked>, loom::fuse<i, k>>>(
      out2(l, i, k, j) = A.permuted<3, 0, 2, 1>()(l, i, k, j) + 1.f);
  CHECK(std::equal(out.begin(), out.end(), out2.begin(), out2.end()));
}

namespace {
/// out = A * 2 + bias(j) with an output of static extents E under schedule S, against a plain loop.
template <class E, class S>
void static_output_case(lt::rng_t& g, const char* sched) {
  const index_t M = E::static_extent(0) == loom::dyn ? lt::pick_size(g, 40) : E::static_extent(0);
  const index_t N = E::static_extent(1) == loom::dyn ? lt::pick_size(g, 70) : E::static_extent(1);
  loom::Tensor<float, 2, E> out("out", M, N);
  loom::Tensor<float, 2> A("A", M, N);
  loom::Tensor<float, 1> bias("bias", N);
  lt::fill_random(A.view(), g);
  lt::fill_random(bias.view(), g);
  lt::fill(out.view(), lt::sentinel<float>());
  loom::run<S>(out(i, j) = A(i, j) * 2.f + bias(j));
  bool ok = true;
  for (index_t a = 0; a < M; ++a)
    for (index_t b = 0; b < N; ++b) ok = ok && out(a, b) == A(a, b) * 2.f + bias(b);
  INFO("static extents " << E::static_extent(0) << " x " << E::static_extent(1) << " (M = " << M << ", N = " << N
                          << ") under " << sched);
  CHECK(ok);
}

template <class E>
void static_output_schedules(lt::rng_t& g) {
  using namespace loom;
  static_output_case<E, auto_schedule>(g, "default");
  static_output_case<E, schedule<vectorize<j, lt::w16b<float>, tail::shift_inwards>, unroll<i, 4>>>(g, "vectorize<j, 4, shift>, unroll<i, 4>");
  static_output_case<E, schedule<tile<i, j, 4, 16>, vectorize<inner<j>, lt::w16b<float>>, parallel<outer<i>>>>(g, "tile<i, j, 4, 16>, vectorize, parallel");
  static_output_case<E, schedule<split<j, 8, tail::guard>, unroll<inner<j>>, fuse<i, outer<j>>>>(g, "split<j, 8, guard>, unroll, fuse");
}

/// C = sum(k, A B) + bias(j) into an output of static extents, under a register-block schedule.
template <class E>
void static_gemm(lt::rng_t& g) {
  using namespace loom;
  const index_t M = E::static_extent(0), N = E::static_extent(1), K = lt::pick_size(g, 40);
  loom::Tensor<float, 2, E> C("C", M, N);
  loom::Tensor<float, 2> A("A", M, K), B("B", K, N);
  lt::fill_random(A.view(), g);
  lt::fill_random(B.view(), g);
  std::vector<double> ref(static_cast<std::size_t>(M * N), 0.0);
  for (index_t a = 0; a < M; ++a)
    for (index_t b = 0; b < N; ++b)
      for (index_t c = 0; c < K; ++c) ref[std::size_t(a * N + b)] += double(A(a, c)) * B(c, b);
  auto check = [&](const char* sched) {
    const auto r = lt::compare(C.view(), ref, lt::tolerance<float>(K));
    INFO("static extents " << M << " x " << N << ", K = " << K << " under " << sched << ": " << r.message);
    CHECK(r.ok);
    lt::fill(C.view(), lt::sentinel<float>());
  };
  loom::run<schedule<tile<i, j, 4, 8>, vectorize<inner<j>, lt::w16b<float>>, reorder<k, inner<i>, outer<inner<j>>, inner<inner<j>>>>>(
      C(i, j) = sum(k, A(i, k) * B(k, j)));
  check("4 x 8 register block");
}
}  // namespace

TEST_CASE("static extents: outputs whose extents divide the splits, and ones that do not", "[elementwise][static][schedules]") {
  auto g = lt::make_rng("static output schedules");
  for (int rep = 0; rep < 3; ++rep) {
    static_output_schedules<loom::extents<16, 32>>(g);   // every split divides
    static_output_schedules<loom::extents<7, 33>>(g);    // none does
    static_gemm<loom::extents<8, 16>>(g);
    static_gemm<loom::extents<5, 13>>(g);
  }
}

TEST_CASE("aliasing: in-place contractions C = C B and C += C B", "[reduction][alias]") {
  auto g = lt::make_rng("in-place gemm");
  using namespace loom;
  for (index_t n : {1, 3, 8, 17, 33}) {
    loom::Tensor<float, 2> C("C", n, n), B("B", n, n);
    lt::fill_random(C.view(), g);
    lt::fill_random(B.view(), g);
    const loom::Tensor<float, 2> C0 = C;
    std::vector<double> prod(static_cast<std::size_t>(n * n), 0.0);
    for (index_t a = 0; a < n; ++a)
      for (index_t b = 0; b < n; ++b)
        for (index_t c = 0; c < n; ++c) prod[std::size_t(a * n + b)] += double(C0(a, c)) * B(c, b);
    auto expect = [&](double scale_old, const char* what) {
      std::vector<double> ref(prod.size());
      for (std::size_t q = 0; q < ref.size(); ++q) ref[q] = scale_old * C0.data()[q] + prod[q];
      const auto r = lt::compare(C.view(), ref, lt::tolerance<float>(n));
      INFO("n = " << n << ", " << what << ": " << r.message);
      CHECK(r.ok);
      C = C0;
    };
    loom::run<schedule<vectorize<j, native, tail::masked>>>(C(i, j) = sum(k, C(i, k) * B(k, j)));
    expect(0, "C = C B, vectorize<j>");
    loom::run<schedule<reorder<k, i, j>, vectorize<j>>>(C(i, j) = sum(k, C(i, k) * B(k, j)));
    expect(0, "C = C B, reorder<k, i, j> (the output accumulates)");
    loom::run<schedule<split<k, 4>, reorder<outer<k>, i, j>, parallel<outer<k>>>>(C(i, j) = sum(k, C(i, k) * B(k, j)));
    expect(0, "C = C B, chunked parallel reduction");
    loom::run<schedule<reorder<k, i, j>, vectorize<j>>>(C(i, j) += sum(k, C(i, k) * B(k, j)));
    expect(1, "C += C B, reorder<k, i, j>");
    loom::run<schedule<split<k, 4>, reorder<outer<k>, i, j>, parallel<outer<k>>>>(C(i, j) += sum(k, C(i, k) * B(k, j)));
    expect(1, "C += C B, chunked parallel reduction");
    loom::run<schedule<vectorize<j, native, tail::masked>>>(C(i, j) += sum(k, B(k, i) * C(k, j)) - sum(k, B(k, i) * C(k, j)) * 0.f);
    // (two reductions: evaluated in place; C(k, j) read while C(i, j) is written)
    for (std::size_t q = 0; q < prod.size(); ++q) prod[q] = 0;
    for (index_t a = 0; a < n; ++a)
      for (index_t b = 0; b < n; ++b)
        for (index_t c = 0; c < n; ++c) prod[std::size_t(a * n + b)] += double(B(c, a)) * C0(c, b);
    expect(1, "C += B^T C - 0 * B^T C, two in-place reductions");
  }
}
