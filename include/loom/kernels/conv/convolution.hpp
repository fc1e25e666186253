// SPDX-License-Identifier: MIT
// loom/kernels/conv/convolution.hpp — index notation reaches the convolution engine.
//
// A definition is a convolution the engine runs when it has the form
//
//   out(n, y, x, co) [+]= f(sum(ry, rx, ci, in(n, a y + b ry + c, d x + e rx + g, ci) * w(ry, rx, ci, co)))
//   out(n, y, x, c)  [+]= f(sum(ry, rx, in(n, a y + b ry + c, d x + e rx + g, c) * w(ry, rx, c)))   (depthwise)
//
// float or double; n, y, x, co (c) plain variables of the output in this order (NHWC); the input
// read as it is or through constant_exterior (the padding's value); the reduction's variables in
// any order and the weights' dimensions any permutation of theirs; the product's operands either
// way round; any epilogue f (bias(co), scale(co), skip(n, y, x, co), max(.., 0): outside its
// reductions a definition reads only its output's variables, definition.hpp), and for += no
// epilogue. Strides (a, d) and dilations
// (b, e) are the index coefficients, read at run time (they must be >= 1, or the run takes the
// plain loops); the padding is minus the offsets.
#pragma once
#include <type_traits>
#include <utility>

#include "../../core/meta.hpp"
#include "../../expr/access.hpp"
#include "../../expr/boundary.hpp"
#include "../../expr/definition.hpp"
#include "../../expr/ops.hpp"
#include "../../expr/reduce.hpp"

namespace loom::conv_detail {

template <class I>
inline constexpr bool plain_var = is_var<I>;

using loom::detail::plain_access_of;

/// The plain access under an input read: itself, or a constant_exterior's (the padding's value).
template <class A>
struct input_read : std::false_type {};
template <class V, class... I>
struct input_read<access<V, I...>> : std::true_type {
  using indices = meta::list<I...>;
  static constexpr bool padded = false;
};
template <class V, class... I>
struct input_read<boundary_access<boundary::constant_exterior, V, I...>> : std::true_type {
  using indices = meta::list<I...>;
  static constexpr bool padded = true;
};

/// The variable paired with Out in an index whose variables are Vars (y in y * 2 + ry - 1 pairs
/// with ry), or void when Vars is not two variables one of which is Out.
template <class Vars, class Out>
struct window_partner_of {
  using type = void;
};
template <class A, class B, class Out>
struct window_partner_of<meta::list<A, B>, Out> {
  using type = std::conditional_t<std::is_same_v<A, Out>, B, std::conditional_t<std::is_same_v<B, Out>, A, void>>;
};
template <class Vars, class Out>
using window_partner = typename window_partner_of<Vars, Out>::type;

/// Whether list L is a permutation of the types Want.
template <class L, class... Want>
inline constexpr bool permutation_of = L::size == sizeof...(Want) && (meta::contains<L, Want> && ...) &&
                                       meta::unique<L>::size == L::size;

template <class Def, class = void>
struct convolution {
  static constexpr bool value = false;
};

template <class Def>
struct convolution<Def, std::enable_if_t<Def::reductions::size == 1 && plain_access_of<typename Def::lhs_type>::value &&
                                         Def::lhs_type::rank == 4>> {
  using T = typename Def::value_type;
  using Red = meta::at<typename Def::reductions, 0>;
  using Body = typename Red::body_type;
  using out_idx = typename plain_access_of<typename Def::lhs_type>::indices;
  using N = meta::at<out_idx, 0>;
  using Y = meta::at<out_idx, 1>;
  using X = meta::at<out_idx, 2>;
  using CO = meta::at<out_idx, 3>;
  using rvars = typename Red::rvars;

  /// Which operand of the product is the input (the other is the weights), and its shape.
  template <class B, class = void>
  struct operands {
    static constexpr bool ok = false;
  };
  template <class B>
  struct operands<B, std::enable_if_t<red::is_product<B>>> {
    using P = std::remove_cvref_t<decltype(std::declval<B>().a)>;
    using Q = std::remove_cvref_t<decltype(std::declval<B>().b)>;

    template <class In, class Wt>
    static constexpr int shape = [] {  // 0: not a convolution, 1: dense, 2: depthwise
      if constexpr (!input_read<In>::value || !plain_access_of<Wt>::value) {
        return 0;
      } else {
        using ii = typename input_read<In>::indices;
        using wi = typename plain_access_of<Wt>::indices;
        if constexpr (ii::size != 4 || rvars::size < 2) {
          return 0;
        } else if constexpr (!std::is_same_v<meta::at<ii, 0>, N>) {
          return 0;
        } else {
          // dense: rvars {ry, rx, ci}, in(n, y~ry, x~rx, ci), w a permutation of (ry, rx, ci, co)
          // depthwise: rvars {ry, rx}, in(n, y~ry, x~rx, co), w a permutation of (ry, rx, co)
          using C = meta::at<ii, 3>;
          using RY = window_partner<typename meta::at<ii, 1>::vars, Y>;
          using RX = window_partner<typename meta::at<ii, 2>::vars, X>;
          constexpr bool dense_c = rvars::size == 3 && meta::contains<rvars, C>;
          constexpr bool depth_c = rvars::size == 2 && std::is_same_v<C, CO>;
          if constexpr ((!dense_c && !depth_c) || std::is_void_v<RY> || std::is_void_v<RX>) {
            return 0;
          } else if constexpr (!meta::contains<rvars, RY> || !meta::contains<rvars, RX> || std::is_same_v<RY, RX> ||
                               std::is_same_v<RY, C> || std::is_same_v<RX, C>) {
            return 0;
          } else if constexpr (dense_c) {
            return permutation_of<wi, RY, RX, C, CO> ? 1 : 0;
          } else {
            return permutation_of<wi, RY, RX, CO> ? 2 : 0;
          }
        }
      }
    }();
    static constexpr bool p_is_input = shape<P, Q> != 0;
    using In = std::conditional_t<p_is_input, P, Q>;
    using Wt = std::conditional_t<p_is_input, Q, P>;
    static constexpr int kind = p_is_input ? shape<P, Q> : shape<Q, P>;
    static constexpr bool ok = kind != 0;
  };
  using ops = operands<Body>;

  static constexpr bool bare = std::is_same_v<typename Def::rhs_type, Red>;
  static constexpr bool accumulates = std::is_same_v<typename Def::mode, assign_add>;
  static constexpr bool value = (std::is_same_v<T, float> || std::is_same_v<T, double>) && meta::unique<out_idx>::size == 4 &&
                                std::is_same_v<typename Red::op_type, red::sum> && ops::ok && (bare || !accumulates);
};

template <class Def>
inline constexpr bool is_convolution = convolution<Def>::value;

}  // namespace loom::conv_detail
