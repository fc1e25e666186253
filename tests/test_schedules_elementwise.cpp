// tests/test_schedules_elementwise.cpp — the schedule matrix for elementwise definitions: a 2-D
// definition with a broadcast operand, 1-D fused chains (float, double, int32), a stencil and a
// `+=` definition, each under every directive and many combinations of them, on random shapes
// (1, primes, non-multiples of every factor and vector width) and random layouts of every input
// and output. Every schedule must give the plain loop's result.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using namespace loom;  // schedule, split, tile, reorder, fuse, unroll, vectorize, parallel, inner, outer, fused, tail
using lt::idx_t;

namespace {

constexpr index_t NF = lt::native_width<float>;
constexpr index_t W4 = lt::w16b<float>;   // 4 floats
constexpr index_t W8 = lt::w32b<float>;   // 8 floats where AVX2 is enabled (else 4)
constexpr index_t D2 = lt::w16b<double>;  // 2 doubles

/// Rows = true: every buffer has unit-stride rows and is used through its layout_right view, so
/// nests whose lanes walk rows are compiled without a gather version (contiguous by type).
template <bool Rows>
lt::layout pick(lt::rng_t& g) {
  return Rows ? lt::pick_row_layout(g) : lt::pick_layout(g);
}
template <bool Rows, class B>
auto view_of(const B& b) {
  if constexpr (Rows) return b.rows();
  else return b.view;
}

// ---- out(i, j) = max(A(i, j) * 2 + bias(j), B(i, j)) ----------------------------------------
template <bool Rows>
struct ew2_t {
  static constexpr const char* name = Rows ? "layout_right views: out(i, j) = max(A(i, j) * 2 + bias(j), B(i, j))"
                                           : "out(i, j) = max(A(i, j) * 2 + bias(j), B(i, j))";
  struct data : lt::case_base<float, 2> {
    lt::buffer<float, 2> A, B;
    lt::buffer<float, 1> bias;
  };
  static data make(lt::rng_t& g) {
    data d;
    const index_t M = lt::case_size(g, 70, 150, 400), N = lt::case_size(g, 200, 300, 700);
    d.A = lt::random_buffer<float, 2>({M, N}, pick<Rows>(g), "A", g);
    d.B = lt::random_buffer<float, 2>({M, N}, pick<Rows>(g), "B", g);
    d.bias = lt::random_buffer<float, 1>({N}, pick<Rows>(g), "bias", g);
    d.out = lt::make_buffer<float, 2>({M, N}, pick<Rows>(g), "out");
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) d.ref.push_back(std::max(2.0 * d.A.view(a, b) + d.bias.view(b), double(d.B.view(a, b))));
    d.tol = 1e-6;
    d.info = lt::str("M = ", M, ", N = ", N, "; ", d.A.describe(), "; ", d.B.describe());
    return d;
  }
  static auto def(data& d) {
    return view_of<Rows>(d.out)(i, j) = max(view_of<Rows>(d.A)(i, j) * 2.f + view_of<Rows>(d.bias)(j), view_of<Rows>(d.B)(i, j));
  }
};
using ew2 = ew2_t<false>;

using ew2_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<j, native, tail::guard>>,
    schedule<vectorize<j, native, tail::masked>>,
    schedule<vectorize<j, native, tail::shift_inwards>>,
    schedule<vectorize<j, W8, tail::masked>>,
    schedule<vectorize<i>>,                                          // lanes across rows: strided
    schedule<split<j, 8, tail::shift_inwards>, vectorize<inner<j>, W4>>,  // inner<j> split again by the width
    schedule<split<j, NF, tail::guard>, vectorize<inner<j>>>,              // the split is the vector loop
    schedule<tile<i, j, 8, 32>, vectorize<inner<j>>>,
    schedule<tile<i, j, 4, 16, tail::guard>, vectorize<inner<j>, native, tail::masked>>,
    schedule<reorder<j, i>, vectorize<i>>,
    schedule<tile<i, j, 8, 8>, reorder<inner<j>, inner<i>>, vectorize<inner<i>, W4>>,
    schedule<fuse<i, j>, split<fused<i, j>, 37>, parallel<outer<fused<i, j>>>>,
    schedule<unroll<i, 3>, vectorize<j>>,
    schedule<split<j, 16>, unroll<inner<j>>>,
    schedule<parallel<i, (index_t{1} << 40)>, vectorize<j, native, tail::masked>>,  // below the threshold: serial
    schedule<tile<i, j, 16, 16>, fuse<outer<i>, outer<j>>, parallel<fused<outer<i>, outer<j>>>, vectorize<inner<j>, native, tail::masked>>,
    schedule<split<i, 2>, split<outer<i>, 3>, parallel<outer<outer<i>>>, vectorize<j>>,
    schedule<split<j, 32>, split<inner<j>, 8>, vectorize<inner<inner<j>>, W8>, unroll<outer<inner<j>>>>,
    schedule<reorder<j, i>, fuse<j, i>, parallel<fused<j, i>>>,
    schedule<vectorize<j, W4, tail::shift_inwards>, unroll<outer<j>, 2, tail::guard>, parallel<i>>,
    schedule<split<j, 64>, vectorize<inner<j>>, parallel<outer<j>>, interleave<2>>,  // parts of each row's blocks
    schedule<tile<i, j, 4, 32>, vectorize<inner<j>, native, tail::masked>, interleave<3>, stream_stores<0>>,
    // blocks of 20 or (runs of 2000 bytes or more) 52, interleaved then too: no multiples of a vector
    schedule<split<j, 20>, vectorize<inner<j>>, parallel<i>, large_blocks<j, 52, 2000>, interleave<2, 2000>>,
    // non-temporal stores on every run: aligned whole vectors stream, shifted/masked ones do not
    schedule<vectorize<j>, parallel<i>, stream_stores<0>>,
    schedule<tile<i, j, 8, 32>, vectorize<inner<j>, native, tail::masked>, stream_stores<0>>,
    schedule<vectorize<j, W8, tail::shift_inwards>, stream_stores<1000>>,
    // reads ahead on every run: along the rows, and rows ahead (transposed views move along i too)
    schedule<vectorize<j>, parallel<i>, prefetch<j, 256, 0>>,
    schedule<tile<i, j, 8, 32>, vectorize<inner<j>>, prefetch<i, 8, 0>>>;

TEST_CASE("schedule matrix: 2-D elementwise with a broadcast operand", "[schedules][elementwise]") {
  lt::check_schedules<ew2>(ew2_schedules{}, lt::cases_per_schedule(20));
}

TEST_CASE("schedule matrix: 2-D elementwise on layout_right views (contiguous by type)", "[schedules][elementwise][layout]") {
  lt::check_schedules<ew2_t<true>>(ew2_schedules{}, lt::cases_per_schedule(10));
}

// ---- 1-D chains ------------------------------------------------------------------------------
template <class T, bool Rows = false>
struct chain {
  static constexpr const char* name = Rows ? "layout_right views: float: out(x) = select(a > b, fma(a, b, c), min(a, c) * -1.5) + abs(b) * 0.25"
                                      : std::is_same_v<T, float>    ? "float: out(x) = select(a > b, fma(a, b, c), min(a, c) * -1.5) + abs(b) * 0.25"
                                      : std::is_same_v<T, double> ? "double: out(x) = select(a > b, fma(a, b, c), min(a, c) * -1.5) + abs(b) * 0.25"
                                                                  : "int32: out(x) = select(a > b, a * b, a - b) + abs(c) * 3";
  struct data : lt::case_base<T, 1> {
    lt::buffer<T, 1> a, b, c;
  };
  static data make(lt::rng_t& g) {
    data d;
    const index_t n = lt::coin(g, 0.8) ? lt::pick_size(g, 200) : lt::coin(g, 0.5) ? lt::uniform(g, 200, 3000) : lt::uniform(g, 60000, 200000);
    const double lo = std::is_integral_v<T> ? -1000 : -1, hi = -lo;
    d.a = lt::random_buffer<T, 1>({n}, pick<Rows>(g), "a", g, lo, hi);
    d.b = lt::random_buffer<T, 1>({n}, pick<Rows>(g), "b", g, lo, hi);
    d.c = lt::random_buffer<T, 1>({n}, pick<Rows>(g), "c", g, lo, hi);
    d.out = lt::make_buffer<T, 1>({n}, pick<Rows>(g), "out");
    for (index_t q = 0; q < n; ++q) {
      const T a = d.a.view(q), b = d.b.view(q), c = d.c.view(q);
      if constexpr (std::is_integral_v<T>)
        d.ref.push_back(double((a > b ? a * b : a - b) + std::abs(c) * 3));
      else
        d.ref.push_back((a > b ? double(a) * b + c : std::min(double(a), double(c)) * -1.5) + std::abs(double(b)) * 0.25);
    }
    d.tol = std::is_integral_v<T> ? 0 : std::is_same_v<T, float> ? 1e-6 : 1e-15;
    d.info = lt::str("n = ", n, "; ", d.a.describe(), "; ", d.b.describe(), "; ", d.c.describe());
    return d;
  }
  static auto def(data& d) {
    auto a = view_of<Rows>(d.a);
    auto b = view_of<Rows>(d.b);
    auto c = view_of<Rows>(d.c);
    if constexpr (std::is_integral_v<T>)
      return view_of<Rows>(d.out)(x) = select(a(x) > b(x), a(x) * b(x), a(x) - b(x)) + abs(c(x)) * 3;
    else
      return view_of<Rows>(d.out)(x) = select(a(x) > b(x), fma(a(x), b(x), c(x)), min(a(x), c(x)) * -1.5) + abs(b(x)) * 0.25;
  }
};

using chain_float_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<x, native, tail::guard>>,
    schedule<vectorize<x, native, tail::masked>>,
    schedule<vectorize<x, W4, tail::shift_inwards>>,
    schedule<split<x, 1000>, vectorize<inner<x>>, parallel<outer<x>>>,
    // several parts of each block at once: the parts, what is left, the shifted or masked tail
    schedule<split<x, 4096>, vectorize<inner<x>>, parallel<outer<x>>, interleave<4>, stream_stores<0>>,
    schedule<vectorize<x, native, tail::masked>, interleave<3>>,
    schedule<vectorize<x, W4, tail::shift_inwards>, interleave<16>>,
    // the 1-D default's choices by the bytes a run touches (4096: the random sizes fall on both sides)
    schedule<split<x, 64>, vectorize<inner<x>>, parallel<outer<x>>, large_blocks<x, 1000, 4096>, interleave<3, 4096>,
             prefetch<x, 64, 4096>, stream_stores<4096>>,
    schedule<split<x, 37, tail::guard>, large_blocks<x, 301, 0>, vectorize<inner<x>, W4>>,  // always the large blocks
    schedule<split<x, 50>, large_blocks<x, 333, 1>, split<inner<x>, 8>, unroll<inner<inner<x>>>>,
    schedule<split<x, 7, tail::shift_inwards>>,
    schedule<split<x, 7, tail::guard>, unroll<inner<x>>>,
    schedule<unroll<x, 4>>,
    schedule<vectorize<x, W4, tail::masked>, unroll<outer<x>, 4>>,
    schedule<parallel<x>>,
    schedule<split<x, 64>, split<inner<x>, 16>, vectorize<inner<inner<x>>, W8>, parallel<outer<x>>>,
    schedule<split<x, 3, tail::shift_inwards>, unroll<inner<x>>>,
    schedule<split<x, 8192>, vectorize<inner<x>>, parallel<outer<x>>, stream_stores<0>>,
    schedule<vectorize<x, W4, tail::guard>, unroll<outer<x>, 2>, stream_stores<0>>,
    schedule<split<x, 8192>, vectorize<inner<x>>, parallel<outer<x>>, stream_stores<0>, prefetch<x, 1024, 0>>>;

using chain_double_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<x, native, tail::masked>>,
    schedule<vectorize<x, D2, tail::shift_inwards>, unroll<outer<x>, 3>>,
    schedule<split<x, 100>, vectorize<inner<x>, native, tail::guard>, parallel<outer<x>>>,
    schedule<split<x, 1000>, vectorize<inner<x>>, parallel<outer<x>>, stream_stores<0>>>;

using chain_int_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<x, native, tail::masked>>,
    schedule<vectorize<x, native, tail::guard>>,
    schedule<vectorize<x, W4, tail::shift_inwards>, unroll<outer<x>, 2>>,
    schedule<split<x, 50>, vectorize<inner<x>>, parallel<outer<x>>>,
    schedule<vectorize<x, native, tail::masked>, stream_stores<0>>>;

TEST_CASE("schedule matrix: 1-D fused chains (float, double, int32)", "[schedules][elementwise]") {
  lt::check_schedules<chain<float>>(chain_float_schedules{}, lt::cases_per_schedule(20));
  lt::check_schedules<chain<double>>(chain_double_schedules{}, lt::cases_per_schedule(20));
  lt::check_schedules<chain<int>>(chain_int_schedules{}, lt::cases_per_schedule(20));
}

TEST_CASE("schedule matrix: 1-D fused chain on layout_right views", "[schedules][elementwise][layout]") {
  lt::check_schedules<chain<float, true>>(chain_float_schedules{}, lt::cases_per_schedule(10));
}

// ---- stencil ---------------------------------------------------------------------------------
template <bool Rows>
struct stencil_t {
  static constexpr const char* name = Rows ? "layout_right views: out(y, x) = in(y, x) + in(y + 1, x + 2) * 0.5 - in(y + 2, x + 1) * 0.25 + w(2 * x)"
                                           : "out(y, x) = in(y, x) + in(y + 1, x + 2) * 0.5 - in(y + 2, x + 1) * 0.25 + w(2 * x)";
  struct data : lt::case_base<float, 2> {
    lt::buffer<float, 2> in;
    lt::buffer<float, 1> w;
  };
  static data make(lt::rng_t& g) {
    data d;
    const index_t H = lt::case_size(g, 70, 150, 400), W = lt::case_size(g, 130, 300, 600);
    d.in = lt::random_buffer<float, 2>({H + 2, W + 2}, pick<Rows>(g), "in", g);
    d.w = lt::random_buffer<float, 1>({2 * W}, pick<Rows>(g), "w", g);
    d.out = lt::make_buffer<float, 2>({H, W}, pick<Rows>(g), "out");
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b)
        d.ref.push_back(double(d.in.view(a, b)) + 0.5 * d.in.view(a + 1, b + 2) - 0.25 * d.in.view(a + 2, b + 1) + d.w.view(2 * b));
    d.tol = 1e-6;
    d.info = lt::str("H = ", H, ", W = ", W, "; ", d.in.describe(), "; ", d.w.describe());
    return d;
  }
  static auto def(data& d) {
    // Under Rows, the in() accesses are contiguous by type along x and w(2 * x) is not: the nest
    // keeps its run-time branch, and in() loads without a stride test.
    auto in = view_of<Rows>(d.in);
    return view_of<Rows>(d.out)(y, x) = in(y, x) + in(y + 1, x + 2) * 0.5f - in(y + 2, x + 1) * 0.25f + view_of<Rows>(d.w)(2 * x);
  }
};
using stencil = stencil_t<false>;

using stencil_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<x>>,
    schedule<vectorize<x, native, tail::masked>>,
    schedule<vectorize<x, native, tail::guard>>,
    schedule<vectorize<x, W4, tail::shift_inwards>>,
    schedule<tile<y, x, 4, 16>, vectorize<inner<x>>>,
    schedule<tile<y, x, 8, 8>, reorder<inner<x>, inner<y>>, vectorize<inner<y>, W4>>,
    schedule<reorder<x, y>, vectorize<y>>,
    schedule<unroll<y, 2>, vectorize<x>>,
    schedule<parallel<y>, vectorize<x, native, tail::masked>>,
    schedule<fuse<y, x>, parallel<fused<y, x>>>,
    schedule<split<y, 3, tail::guard>, parallel<outer<y>>, vectorize<x, native, tail::shift_inwards>>,
    schedule<tile<y, x, 4, 32>, fuse<outer<y>, outer<x>>, parallel<fused<outer<y>, outer<x>>>, vectorize<inner<x>>>,
    schedule<tile<y, x, 4, 32>, fuse<outer<y>, outer<x>>, parallel<fused<outer<y>, outer<x>>>, vectorize<inner<x>>, stream_stores<0>>>;

TEST_CASE("schedule matrix: stencil with offsets and a stride-2 access", "[schedules][elementwise]") {
  lt::check_schedules<stencil>(stencil_schedules{}, lt::cases_per_schedule(20));
}

TEST_CASE("schedule matrix: stencil on layout_right views", "[schedules][elementwise][layout]") {
  lt::check_schedules<stencil_t<true>>(stencil_schedules{}, lt::cases_per_schedule(10));
}

// ---- out(i, j) += A(i, j) * 2 + bias(j) ------------------------------------------------------
struct plus_eq {
  static constexpr const char* name = "out(i, j) += A(i, j) * 2 + bias(j)";
  struct data : lt::case_base<float, 2> {
    lt::buffer<float, 2> A;
    lt::buffer<float, 1> bias;
  };
  static data make(lt::rng_t& g) {
    data d;
    const index_t M = lt::case_size(g, 70, 150, 400), N = lt::case_size(g, 150, 300, 600);
    d.A = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "A", g);
    d.bias = lt::random_buffer<float, 1>({N}, lt::pick_layout(g), "bias", g);
    d.out = lt::random_buffer<float, 2>({M, N}, lt::pick_layout(g), "out", g);
    d.keep_initial();
    d.ref_from_output();
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) d.ref[std::size_t(a * N + b)] += 2.0 * d.A.view(a, b) + d.bias.view(b);
    d.tol = 1e-6;
    d.info = lt::str("M = ", M, ", N = ", N, "; ", d.A.describe());
    return d;
  }
  static auto def(data& d) { return d.out.view(i, j) += d.A.view(i, j) * 2.f + d.bias.view(j); }
};

using plus_eq_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<j>>,
    schedule<vectorize<j, native, tail::masked>>,
    schedule<vectorize<j, native, tail::guard>>,
    schedule<tile<i, j, 4, 16>, vectorize<inner<j>>>,
    schedule<parallel<i>, vectorize<j, W4>>,
    schedule<fuse<i, j>, parallel<fused<i, j>>>,
    schedule<reorder<j, i>, vectorize<i>>,
    schedule<unroll<j, 4>>,
    schedule<split<j, 8>, unroll<inner<j>>, split<i, 5>, parallel<outer<i>>>>;

TEST_CASE("schedule matrix: += elementwise", "[schedules][elementwise][accumulate]") {
  lt::check_schedules<plus_eq>(plus_eq_schedules{}, lt::cases_per_schedule(20));
}

}  // namespace
