// SPDX-License-Identifier: MIT
// loom/kernels/gemm.hpp — the GEMM engine's direct entry point, for apps that do not use index
// notation:
//
//   loom::gemm(C, A, B);                         // C = A B
//   loom::gemm(C, A, B, alpha, beta);            // C = alpha A B + beta C
//   loom::gemm<Policy>(C, A, B, alpha, beta, epilogue);
//
// A, B, C are rank-2 tensors or views of float or double with any strides (row-major,
// column-major, transposed(), block(), strided()). Shapes are checked before anything is read or
// written; C must not overlap A or B. Without a policy, small products skip the packing: a fully
// unrolled path when M, N and K are static extents <= 64 (gemm/small.hpp), register blocks chosen
// at run time when they are run-time extents (gemm/small_dynamic.hpp).
#pragma once
#include <algorithm>
#include <type_traits>

#include "../core/error.hpp"
#include "../core/tensor.hpp"
#include "gemm/driver.hpp"
#include "gemm/epilogue.hpp"
#include "gemm/policy.hpp"
#include "gemm/small.hpp"

namespace loom {

namespace gemm_detail {

template <class V>
using view_of = std::remove_cvref_t<decltype(std::declval<V&>().as_view())>;

template <class V>
concept matrix = requires(V& v) {
  v.as_view();
  requires view_of<V>::rank == 2;
};

/// The alias error, out of line and cold: the overlap tests in make_problem stay inline (as calls
/// they were a visible share of a 16^3 product, docs/tuning.md#small-gemm).
template <class C, class X>
LOOM_COLD void throw_overlap(const C& c, const X& x, const char* role) {
  throw alias_error(detail::cat("loom::gemm: the output '", c.name(), "' overlaps ", role, " '", x.name(),
                                "' in memory (their address ranges intersect); C = A B needs C apart from its operands "
                                "(copy the operand first, or write the product in index notation, which computes into a "
                                "temporary)"));
}

/// Checks that C = A B is well formed: the shapes agree and C overlaps neither operand. Inline so
/// that static extents fold the shape tests away (the messages are built only on the throw path).
template <class CV, class AV, class BV>
LOOM_INLINE void check_operands(const CV& c, const AV& a, const BV& b) {
  const index_t M = c.extent(0), N = c.extent(1), K = a.extent(1);
  if (a.extent(0) != M)
    throw shape_error(detail::cat("loom::gemm: A '", a.name(), "' dimension 0 has extent ", a.extent(0), " but C '",
                                  c.name(), "' dimension 0 has extent ", M, " (C is M x N, A is M x K)"));
  if (b.extent(1) != N)
    throw shape_error(detail::cat("loom::gemm: B '", b.name(), "' dimension 1 has extent ", b.extent(1), " but C '",
                                  c.name(), "' dimension 1 has extent ", N, " (C is M x N, B is K x N)"));
  if (b.extent(0) != K)
    throw shape_error(detail::cat("loom::gemm: B '", b.name(), "' dimension 0 has extent ", b.extent(0), " but A '",
                                  a.name(), "' dimension 1 has extent ", K, " (A is M x K, B is K x N)"));
  if (views_overlap(c, a)) throw_overlap(c, a, "A");
  if (views_overlap(c, b)) throw_overlap(c, b, "B");
  detail::check_distinct_elements(c, "loom::gemm");
}

/// Checks the operands and forms the problem. A column-major C with the identity epilogue is
/// computed as C^T = B^T A^T, so the micro-kernel always writes rows of C with vector stores.
template <class T, class CV, class AV, class BV>
problem<T> make_problem(const CV& c, const AV& a, const BV& b, T alpha, T beta, bool may_transpose) {
  check_operands(c, a, b);
  const index_t M = c.extent(0), N = c.extent(1), K = a.extent(1);
  if (may_transpose && c.stride(1) != 1 && c.stride(0) == 1) {
    return problem<T>{N, M, K, {b.data(), b.stride(1), b.stride(0)}, {a.data(), a.stride(1), a.stride(0)},
                      {c.data(), c.stride(1), c.stride(0)}, alpha, beta};
  }
  return problem<T>{M, N, K, {a.data(), a.stride(0), a.stride(1)}, {b.data(), b.stride(0), b.stride(1)},
                    {c.data(), c.stride(0), c.stride(1)}, alpha, beta};
}

/// The static extent of dimension d of a view type (dyn when it is only known at run time).
template <class V>
constexpr index_t static_extent(std::size_t d) {
  return V::extents_type::static_extent(d);
}

/// M, N, K as the view types know them (dyn where only the run time does), and whether they
/// select the unpacked path of small.hpp: all static and small.
template <class CV, class AV, class BV>
struct static_dims {
  static constexpr index_t M = static_extent<CV>(0), N = static_extent<CV>(1);
  static constexpr index_t K = static_extent<AV>(1) != dyn ? static_extent<AV>(1) : static_extent<BV>(0);
  static constexpr bool small = [] {
    if constexpr (M == dyn || N == dyn || K == dyn) return false;
    else return small_shape<typename CV::value_type, M, N, K>::fits;
  }();
};
template <class CV, class AV, class BV>
constexpr bool small_static = static_dims<CV, AV, BV>::small;

/// The run-time side of loom::gemm, out of line (loom::gemm itself is inlined): the packed engine,
/// or for small products without a policy the unpacked run-time path.
template <class Policy, class CV, class AV, class BV, class T, class Epi>
void run_views(const CV& c, const AV& a, const BV& b, T alpha, T beta, const Epi& epilogue) {
  run_engine<Policy>(make_problem<T>(c, a, b, alpha, beta, is_identity_epilogue<Epi>), epilogue);
}

}  // namespace gemm_detail

/// C = epilogue(alpha * A B + beta * C). With beta = 0, C is not read (it may hold anything).
///
/// Always inlined: a caller that builds its views per call (as loom::Tensor's as_view() does)
/// would otherwise hand them over through the stack, where gcc merges the stores of their strides
/// and names into 32-byte stores that the callee's 8-byte loads cannot forward from (at 16^3, an
/// eighth of the call). Inlined, the views live in registers, and the strides of views built
/// from static extents fold into the small path's dense test. The packed engine stays a call.
template <class Policy = void, gemm_detail::matrix CM, gemm_detail::matrix AM, gemm_detail::matrix BM,
          class Epi = identity_epilogue>
LOOM_INLINE void gemm(CM&& C, const AM& A, const BM& B, typename gemm_detail::view_of<CM>::value_type alpha = 1,
          typename gemm_detail::view_of<CM>::value_type beta = 0, const Epi& epilogue = {}) {
  using T = typename gemm_detail::view_of<CM>::value_type;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "loom::gemm: C must hold float or double");
  static_assert(std::is_same_v<typename gemm_detail::view_of<const AM>::value_type, T> &&
                    std::is_same_v<typename gemm_detail::view_of<const BM>::value_type, T>,
                "loom::gemm: A, B and C must have the same element type");
  static_assert(!std::is_const_v<typename gemm_detail::view_of<CM>::element_type>,
                "loom::gemm: C must be writable (not a view of const)");
  using P = std::conditional_t<std::is_void_v<Policy>, default_gemm_policy<T>, Policy>;
  static_assert(GemmPolicy<P>, "loom::gemm<Policy>: Policy must be a loom::gemm_policy<...>");
  static_assert(std::is_same_v<typename P::value_type, T>, "loom::gemm: the policy is for another element type");
  const auto& c = C.as_view();
  const auto& a = A.as_view();
  const auto& b = B.as_view();
  using dims = gemm_detail::static_dims<std::remove_cvref_t<decltype(c)>, std::remove_cvref_t<decltype(a)>,
                                        std::remove_cvref_t<decltype(b)>>;
  if constexpr (std::is_void_v<Policy>) {
    // Small products with contiguous rows in B and C skip the packing, straight from here with the
    // views in registers: static extents <= 64 on the fully unrolled path (their strides are
    // constants once inlined, and its dense test folds), run-time extents on the run-time path
    // (through run_views and a problem struct it costs more at 16^3). A column-major C goes
    // through run_views, which turns it into C^T = B^T A^T first.
    if (b.stride(1) == 1 && c.stride(1) == 1) {
      const index_t M = c.extent(0), N = c.extent(1), K = a.extent(1);
      if (dims::small || gemm_detail::small_dynamic_shape<T>::fits(M, N, K)) {
        gemm_detail::check_operands(c, a, b);
        const gemm_detail::matrix_ref<T> ar{a.data(), a.stride(0), a.stride(1)}, br{b.data(), b.stride(0), 1};
        const gemm_detail::tile_ref<T> cr{c.data(), c.stride(0), 1};
        if constexpr (dims::small) gemm_detail::small_gemm<T, dims::M, dims::N, dims::K>(ar, br, cr, alpha, beta, epilogue);
        else gemm_detail::small_dynamic_gemm<T>(M, N, K, ar, br, cr, alpha, beta, epilogue);
        return;
      }
    }
  }
  gemm_detail::run_views<Policy>(c, a, b, alpha, beta, epilogue);
}

}  // namespace loom
