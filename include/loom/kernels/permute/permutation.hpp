// SPDX-License-Identifier: MIT
// loom/kernels/permute/permutation.hpp — index notation reaches the permutation engine.
//
// A definition is a permutation the engine runs when it has the form
//
//     out(v0, v1, ..., vr) = X(the same variables in another order)
//
// of rank 2 or more, on elements of 4 or 8 bytes (float, double, 32- and 64-bit integers), X a
// tensor or view read as it is (no boundary condition, no arithmetic), and the variable that walks
// the output at unit stride is not the one that walks X at unit stride. Such a copy is a
// transpose: a vector along either variable is a gather or a scatter in the other tensor, which
// the engine avoids by transposing square blocks in registers. With two row-major (layout_right)
// views the type says which variables those are (the last index of each); where either view's
// strides are run-time values, each run finds them and runs the generic nest where there is no
// transpose to make.
#pragma once
#include <type_traits>

#include "../../core/meta.hpp"
#include "../../expr/access.hpp"
#include "../../expr/definition.hpp"

namespace loom::permute_detail {

/// A side of a permutation (a plain access, expr/access.hpp): its variables, the last one, and
/// whether its view is row-major by type.
template <class A>
struct plain_access : detail::plain_access_of<A> {};
template <class A>
  requires detail::plain_access_of<A>::value
struct plain_access<A> : std::true_type {
  using vars = typename detail::plain_access_of<A>::indices;
  using last = meta::at<vars, vars::size - 1>;
  static constexpr bool row_major = std::is_same_v<typename A::view_type::layout_type, layout_right>;
};

template <class Def, class = void>
struct permutation : std::false_type {};

template <class Def>
struct permutation<Def, std::enable_if_t<plain_access<typename Def::rhs_type>::value>> {
  using T = typename Def::value_type;
  using out = plain_access<typename Def::lhs_type>;
  using in = plain_access<typename Def::rhs_type>;
  using vars = typename Def::pure_vars;
  static constexpr bool same_variables = vars::size == in::vars::size && []<class... V>(meta::list<V...>*) {
    return (meta::contains<typename in::vars, V> && ...);
  }(static_cast<vars*>(nullptr));
  static constexpr bool bits = std::is_arithmetic_v<T> && (sizeof(T) == 4 || sizeof(T) == 8);
  /// The unit-stride variables differ by type (both row-major) or may differ at run time.
  static constexpr bool transposes = !(out::row_major && in::row_major) || !std::is_same_v<typename out::last, typename in::last>;
  static constexpr bool value =
      std::is_same_v<typename Def::mode, assign_set> && vars::size >= 2 && same_variables && bits && transposes;
  /// Whether every run transposes (no generic nest to compile beside the engine).
  static constexpr bool always = out::row_major && in::row_major;
};

}  // namespace loom::permute_detail
