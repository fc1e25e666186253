// SPDX-License-Identifier: MIT
// loom/kernels/gemm/run_contraction.hpp — runs a contraction definition (see contraction.hpp) as
// one call of the GEMM engine, with the same checks as every loom::run: extents, bounds and
// aliasing, all before anything is written.
#pragma once
#include <type_traits>

#include "../../lower/run.hpp"
#include "contraction.hpp"
#include "driver.hpp"
#include "policy.hpp"

namespace loom {

/// A schedule that demands the GEMM engine (a compile error names what is not a contraction).
template <class Policy = void>
struct gemm_schedule {
  using policy = Policy;
};

namespace gemm_detail {

template <class S>
inline constexpr bool is_gemm_schedule = false;
template <class P>
inline constexpr bool is_gemm_schedule<gemm_schedule<P>> = true;

/// The operand accesses of the product, as (A: M x K, B: K x N) matrices.
template <class Def>
auto operand_matrices(const Def& d) {
  using C = contraction<Def>;
  using Ops = typename C::template operands<typename C::Body>;
  using T = typename C::T;
  const auto& red = lower::scheduled_reduction(d.rhs);
  const auto& xa = red.body.a;
  const auto& xb = red.body.b;
  auto as_matrix = [](const auto& acc, bool row_first) {
    // row_first: the access's first index is the matrix's row variable.
    const auto& v = acc.view;
    return row_first ? matrix_ref<T>{v.data(), v.stride(0), v.stride(1)} : matrix_ref<T>{v.data(), v.stride(1), v.stride(0)};
  };
  using X = typename Ops::X;
  using Y = typename Ops::Y;
  using I = typename C::I;
  using K = meta::at<typename C::Red::rvars, 0>;
  if constexpr (Ops::x_is_a) {
    return std::pair{as_matrix(xa, std::is_same_v<typename matrix_access<X>::first, I>),
                     as_matrix(xb, std::is_same_v<typename matrix_access<Y>::first, K>)};
  } else {
    return std::pair{as_matrix(xb, std::is_same_v<typename matrix_access<Y>::first, I>),
                     as_matrix(xa, std::is_same_v<typename matrix_access<X>::first, K>)};
  }
}

/// Policy void: none given (run_engine picks the path).
template <class Policy, class Def>
void run_contraction(const Def& def) {
  using C = contraction<Def>;
  using T = typename C::T;
  using I = typename C::I;
  using J = typename C::J;
  using K = meta::at<typename C::Red::rvars, 0>;
  using State = loop_state<typename Def::vars, 0>;
  State s;
  index_t points = 0;
  if (!detail::check_run(def, s, points)) return;  // extents, an empty output, every access in bounds
  const index_t M = s.template extent<I>(), N = s.template extent<J>(), Kx = s.template extent<K>();

  // An output that is also read (C = A * C, C = f(sum(..)) + C(j, i), ...) makes the engine write
  // a temporary (run_bound), as the generic nest does: the same engine instance, no second one.
  detail::run_bound(def, C::accumulates, [&](const Def& d) {
    const auto [a, b] = operand_matrices(d);
    const auto& cv = d.lhs.view;
    const T beta = C::accumulates ? T(1) : T(0);
    problem<T> pb{M, N, Kx, a, b, {cv.data(), cv.stride(0), cv.stride(1)}, T(1), beta};
    if constexpr (C::bare) {
      // A column-major C: compute C^T = B^T A^T, so rows of the micro-tile are contiguous.
      if (cv.stride(1) != 1 && cv.stride(0) == 1)
        pb = problem<T>{N, M, Kx, {b.p, b.cs, b.rs}, {a.p, a.cs, a.rs}, {cv.data(), cv.stride(1), cv.stride(0)}, T(1), beta};
      run_engine<Policy>(pb);
    } else {
      run_engine<Policy>(pb, expression_epilogue<Def, State>{&d, s});
    }
  });
}

}  // namespace gemm_detail
}  // namespace loom
