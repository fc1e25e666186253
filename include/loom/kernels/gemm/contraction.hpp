// SPDX-License-Identifier: MIT
// loom/kernels/gemm/contraction.hpp — index notation reaches the GEMM engine.
//
// A definition is a contraction the engine runs when it has the form
//
//     C(i, j) [+]= f(sum(k, A(i, k) * B(k, j)))
//
// float or double, plain variables as indices, the operands of the product in either order and
// each indexed either way round ((k, i) is a transposed A), exactly one reduction, and any
// epilogue f (bias(j), scale(i), D(i, j), constants: outside its reductions a definition reads
// only its output's variables, definition.hpp). f runs on each micro-tile while it is still in registers: one pass over C. A `+=`
// definition fuses when f is the identity (beta = 1); otherwise it takes the generic loop nest.
#pragma once
#include <type_traits>
#include <utility>

#include "../../core/meta.hpp"
#include "../../expr/access.hpp"
#include "../../expr/definition.hpp"
#include "../../expr/ops.hpp"
#include "../../expr/reduce.hpp"
#include "../../lower/state.hpp"
#include "epilogue.hpp"

namespace loom::gemm_detail {

/// X(a, b) with two plain variables.
template <class N>
struct matrix_access : std::false_type {};
template <class V, class I0, class I1>
  requires(is_var<I0> && is_var<I1>)
struct matrix_access<access<V, I0, I1>> : std::true_type {
  using first = I0;
  using second = I1;
};

/// X is X(I, K) or X(K, I).
template <class X, class I, class K>
inline constexpr bool indexed_by = [] {
  if constexpr (!matrix_access<X>::value) {
    return false;
  } else {
    using F = typename matrix_access<X>::first;
    using S = typename matrix_access<X>::second;
    return (std::is_same_v<F, I> && std::is_same_v<S, K>) || (std::is_same_v<F, K> && std::is_same_v<S, I>);
  }
}();

template <class Def, class = void>
struct contraction {
  static constexpr bool value = false;
  static constexpr const char* why = "it has no single reduction sum(k, X * Y)";
};

template <class Def>
struct contraction<Def, std::enable_if_t<Def::reductions::size == 1 && matrix_access<typename Def::lhs_type>::value>> {
  using T = typename Def::value_type;
  using Red = meta::at<typename Def::reductions, 0>;
  using Body = typename Red::body_type;
  using I = typename matrix_access<typename Def::lhs_type>::first;
  using J = typename matrix_access<typename Def::lhs_type>::second;

  template <class B, class = void>
  struct operands {
    static constexpr bool ok = false;
  };
  template <class B>
  struct operands<B, std::enable_if_t<red::is_product<B>>> {
    using X = std::remove_cvref_t<decltype(std::declval<B>().a)>;
    using Y = std::remove_cvref_t<decltype(std::declval<B>().b)>;
    using K = meta::at<typename Red::rvars, 0>;
    static constexpr bool x_is_a = indexed_by<X, I, K> && indexed_by<Y, K, J>;
    static constexpr bool ok = x_is_a || (indexed_by<Y, I, K> && indexed_by<X, K, J>);
  };


  static constexpr bool bare = std::is_same_v<typename Def::rhs_type, Red>;
  static constexpr bool accumulates = std::is_same_v<typename Def::mode, assign_add>;

  static constexpr bool value = (std::is_same_v<T, float> || std::is_same_v<T, double>) && !std::is_same_v<I, J> &&
                                Red::rvars::size == 1 && std::is_same_v<typename Red::op_type, red::sum> &&
                                operands<Body>::ok && (bare || !accumulates);
  static constexpr const char* why =
      "it is not C(i, j) [+]= f(sum(k, A(i, k) * B(k, j))) on float/double with plain variables, an epilogue f "
      "over i and j only, and (for +=) no epilogue";
};

/// The epilogue of a fused definition: its right side evaluated at C(i, j : j + lanes) with the
/// reduction's value taken from the micro-tile.
template <class Def, class State>
struct expression_epilogue {
  const Def* def;  // accesses bound
  State at;        // extents set; coordinates set per call
  using J = typename contraction<Def>::J;
  using I = typename contraction<Def>::I;

  template <class B>
  LOOM_INLINE B apply(const B& v, index_t i, index_t j, index_t lanes) const {
    State s = at;
    s.template set<I>(i);
    s.template set<J>(j);
    s.active = lanes;
    with_reduction_value<State, B> c{s, v, lanes};
    if (lanes == index_t(B::size))
      return def->rhs.template eval_v<vmode<J, B::size, false, false>>(c);
    else
      return def->rhs.template eval_v<vmode<J, B::size, false, true>>(c);
  }
};

}  // namespace loom::gemm_detail
