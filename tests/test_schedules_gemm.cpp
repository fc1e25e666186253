// tests/test_schedules_gemm.cpp — the schedule matrix for contractions: C = relu(A B * alpha +
// bias) (float), the bare C = A B (float; schedules that make the output the accumulator), int32
// (exact) and double contractions, and C += A B. Register blocks, reduction lanes, unrolled
// reduction loops, deterministic parallel reductions (parallel<outer<k>>), every tail.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;
using namespace loom;
using lt::idx_t;

namespace {

constexpr index_t W4 = lt::w16b<float>;

/// C(i, j) (=|+=) combine(sum(k, A(i, k) * B(k, j))) for element type T; the reference in double.
template <class T, int Kind>
struct gemm {
  // Kind 0: C = max(sum * alpha + bias(j), 0); 1: C = sum; 2: C = sum + bias(j); 3: C += sum.
  static constexpr const char* name = Kind == 0   ? "C(i, j) = max(sum(k, A(i, k) * B(k, j)) * alpha + bias(j), 0)"
                                      : Kind == 1 ? "C(i, j) = sum(k, A(i, k) * B(k, j))"
                                      : Kind == 2 ? "C(i, j) = sum(k, A(i, k) * B(k, j)) + bias(j)"
                                                  : "C(i, j) += sum(k, A(i, k) * B(k, j))";
  struct data : lt::case_base<T, 2> {
    lt::buffer<T, 2> A, B;
    lt::buffer<T, 1> bias;
    T alpha = T(3) / T(4);
  };
  static data make(lt::rng_t& g) {
    data d;
    const index_t M = lt::case_size(g, 70, 100, 200), N = lt::case_size(g, 100, 100, 200), K = lt::pick_size(g, 100);
    const double lo = std::is_integral_v<T> ? -100 : -1, hi = -lo;
    d.A = lt::random_buffer<T, 2>({M, K}, lt::pick_layout(g), "A", g, lo, hi);
    d.B = lt::random_buffer<T, 2>({K, N}, lt::pick_layout(g), "B", g, lo, hi);
    d.bias = lt::random_buffer<T, 1>({N}, lt::pick_layout(g), "bias", g, lo, hi);
    if constexpr (Kind == 3) {
      d.out = lt::random_buffer<T, 2>({M, N}, lt::pick_layout(g), "C", g, lo, hi);
      d.keep_initial();
      d.ref_from_output();
    } else {
      d.out = lt::make_buffer<T, 2>({M, N}, lt::pick_layout(g), "C");
      d.ref.assign(static_cast<std::size_t>(M * N), 0.0);
    }
    for (index_t a = 0; a < M; ++a)
      for (index_t b = 0; b < N; ++b) {
        double s = 0;
        for (index_t c = 0; c < K; ++c) s += double(d.A.view(a, c)) * double(d.B.view(c, b));
        double& r = d.ref[std::size_t(a * N + b)];
        if constexpr (Kind == 0) r = std::max(s * double(d.alpha) + double(d.bias.view(b)), 0.0);
        else if constexpr (Kind == 1) r = s;
        else if constexpr (Kind == 2) r = s + double(d.bias.view(b));
        else r += s;
      }
    d.tol = lt::tolerance<T>(K);
    d.info = lt::str("M = ", M, ", N = ", N, ", K = ", K, "; ", d.A.describe(), "; ", d.B.describe());
    return d;
  }
  static auto def(data& d) {
    auto& A = d.A.view;
    auto& B = d.B.view;
    auto& C = d.out.view;
    if constexpr (Kind == 0) return C(i, j) = max(sum(k, A(i, k) * B(k, j)) * d.alpha + d.bias.view(j), 0);
    else if constexpr (Kind == 1) return C(i, j) = sum(k, A(i, k) * B(k, j));
    else if constexpr (Kind == 2) return C(i, j) = sum(k, A(i, k) * B(k, j)) + d.bias.view(j);
    else return C(i, j) += sum(k, A(i, k) * B(k, j));
  }
};

// A register block of 4 rows x one vector (k outside the block).
template <index_t W>
using block_4x1 = schedule<tile<i, j, 4, W>, vectorize<inner<j>, W>, reorder<k, inner<i>, inner<j>>>;

using epilogue_schedules = lt::schedule_list<
    auto_schedule,
    schedule<>,
    schedule<vectorize<j, native, tail::masked>>,
    schedule<vectorize<j, native, tail::shift_inwards>, parallel<i>>,
    block_4x1<W4>,
    schedule<split<i, 3>, split<j, 2 * W4>, split<inner<j>, W4>, vectorize<inner<inner<j>>, W4>,
             reorder<outer<i>, outer<j>, k, inner<i>, outer<inner<j>>, inner<inner<j>>>, parallel<outer<i>>>,
    schedule<vectorize<k>, unroll<outer<k>, 4>>,                   // lanes along the reduction
    schedule<vectorize<k, W4, tail::guard>>,                        // guard inside the reduction runs masked
    schedule<fuse<i, j>, parallel<fused<i, j>>>,
    schedule<tile<i, j, 8, 8>, fuse<outer<i>, outer<j>>, parallel<fused<outer<i>, outer<j>>>, vectorize<inner<j>, W4>>,
    schedule<split<k, 16>, reorder<outer<k>, i, j>, vectorize<j>, parallel<outer<k>>>,        // chunked parallel reduction
    schedule<split<k, 7>, reorder<outer<k>, i, j>, vectorize<inner<k>, W4>, parallel<outer<k>>>>;

TEST_CASE("schedule matrix: contraction with an epilogue", "[schedules][gemm]") {
  lt::check_schedules<gemm<float, 0>>(epilogue_schedules{}, lt::cases_per_schedule(14));
}

using bare_schedules = lt::schedule_list<
    schedule<reorder<k, i, j>, vectorize<j>>,                                  // the output accumulates
    schedule<reorder<i, k, j>, vectorize<j, native, tail::masked>, parallel<i>>,
    schedule<tile<i, j, 4, 16>, reorder<outer<i>, outer<j>, k, inner<i>, inner<j>>, vectorize<inner<j>, W4>>,
    schedule<reorder<k, i, j>, vectorize<k>>,                                  // reduction lanes outside the output loops
    schedule<reorder<j, k, i>, vectorize<i, native, tail::guard>>,
    schedule<split<k, 16>, reorder<outer<k>, i, j, inner<k>>, vectorize<inner<k>, W4>>,
    schedule<split<k, 32>, reorder<outer<k>, i, j>, parallel<outer<k>>, vectorize<j>>,
    schedule<reorder<k, i, j>, fuse<i, j>>>;

TEST_CASE("schedule matrix: bare contraction (the output as the accumulator)", "[schedules][gemm]") {
  lt::check_schedules<gemm<float, 1>>(bare_schedules{}, lt::cases_per_schedule(14));
}

// int32: exact, so any indexing or accumulation mistake shows.
using int_schedules = lt::schedule_list<
    schedule<vectorize<j, native, tail::masked>>,
    schedule<split<k, 4>, unroll<inner<k>>, parallel<i>>,
    schedule<reorder<j, i>, vectorize<i, W4, tail::guard>>,
    schedule<split<k, 8>, reorder<outer<k>, i, j>, parallel<outer<k>>>,
    schedule<vectorize<k, native, tail::masked>>, schedule<unroll<k, 4>>>;

using double_schedules = lt::schedule_list<
    schedule<>,
    schedule<vectorize<j, native, tail::masked>>,
    schedule<vectorize<k>, unroll<outer<k>, 2>>,
    schedule<split<k, 5>, reorder<outer<k>, i, j>, parallel<outer<k>>, vectorize<j, native, tail::guard>>>;

TEST_CASE("schedule matrix: int32 and double contractions", "[schedules][gemm]") {
  lt::check_schedules<gemm<int, 2>>(int_schedules{}, lt::cases_per_schedule(14));
  lt::check_schedules<gemm<double, 0>>(double_schedules{}, lt::cases_per_schedule(14));
}

using plus_eq_schedules = lt::schedule_list<
    schedule<vectorize<j, native, tail::masked>>,
    schedule<reorder<k, i, j>, vectorize<j>>,
    schedule<vectorize<k>, unroll<outer<k>, 2>>,
    schedule<split<k, 8>, reorder<outer<k>, i, j>, parallel<outer<k>>, vectorize<j>>>;

TEST_CASE("schedule matrix: += contraction", "[schedules][gemm][accumulate]") {
  lt::check_schedules<gemm<float, 3>>(plus_eq_schedules{}, lt::cases_per_schedule(14));
}

}  // namespace
