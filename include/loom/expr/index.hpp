// SPDX-License-Identifier: MIT
// loom/expr/index.hpp — affine index expressions: sums of variables times integers plus an
// integer (`x + 1`, `2 * y - 1`, `x + r`). Affine so bounds inference is exact and every access
// reduces to base + Σ stride_v · v at run time.
#pragma once
#include <concepts>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>

#include "../core/config.hpp"
#include "../core/message.hpp"
#include "../core/meta.hpp"
#include "var.hpp"

namespace loom {

namespace detail {
template <class T>
struct is_index_expr_impl : std::false_type {};
}  // namespace detail

template <class T>
concept IndexExpr = detail::is_index_expr_impl<std::remove_cvref_t<T>>::value;

template <class T>
concept Integer = std::integral<std::remove_cvref_t<T>> && !std::same_as<std::remove_cvref_t<T>, bool>;

struct index_const {
  index_t value;
  using vars = meta::list<>;
  template <class V>
  constexpr index_t coef() const { return 0; }
  constexpr index_t offset() const { return value; }
  void print(std::ostream& os) const { os << value; }
};

template <IndexExpr A, IndexExpr B>
struct index_add {
  A a;
  B b;
  using vars = meta::unique<meta::concat<typename A::vars, typename B::vars>>;
  template <class V>
  constexpr index_t coef() const { return a.template coef<V>() + b.template coef<V>(); }
  constexpr index_t offset() const { return a.offset() + b.offset(); }
  void print(std::ostream& os) const {
    a.print(os);
    const std::string s = detail::printed(b);
    if (!s.empty() && s[0] == '-') os << " - " << s.substr(1);
    else os << " + " << s;
  }
};

template <IndexExpr A>
struct index_scale {
  index_t k;
  A a;
  using vars = typename A::vars;
  template <class V>
  constexpr index_t coef() const { return k * a.template coef<V>(); }
  constexpr index_t offset() const { return k * a.offset(); }
  void print(std::ostream& os) const {
    if (k == -1) os << "-";
    else os << k << " * ";
    const std::string s = detail::printed(a);
    const bool compound = s.find(' ') != std::string::npos;
    os << (compound ? "(" : "") << s << (compound ? ")" : "");
  }
};

namespace detail {
template <char... C>
struct is_index_expr_impl<var<C...>> : std::true_type {};
template <>
struct is_index_expr_impl<index_const> : std::true_type {};
template <class A, class B>
struct is_index_expr_impl<index_add<A, B>> : std::true_type {};
template <class A>
struct is_index_expr_impl<index_scale<A>> : std::true_type {};
}  // namespace detail

// Operators build affine forms. They only accept index expressions and integers, so they never
// compete with the value operators of expression nodes.
template <IndexExpr A>
constexpr auto as_index(const A& a) {
  return a;
}
template <Integer I>
constexpr index_const as_index(I v) {
  return {static_cast<index_t>(v)};
}

template <class A, class B>
concept IndexOperands = (IndexExpr<A> && (IndexExpr<B> || Integer<B>)) || (Integer<A> && IndexExpr<B>);

template <class A, class B>
  requires IndexOperands<A, B>
constexpr auto operator+(const A& a, const B& b) {
  return index_add<decltype(as_index(a)), decltype(as_index(b))>{as_index(a), as_index(b)};
}
template <IndexExpr A>
constexpr auto operator-(const A& a) {
  return index_scale<A>{-1, a};
}
template <class A, class B>
  requires IndexOperands<A, B>
constexpr auto operator-(const A& a, const B& b) {
  return as_index(a) + -as_index(b);
}
template <IndexExpr A, Integer I>
constexpr auto operator*(I k, const A& a) {
  return index_scale<A>{static_cast<index_t>(k), a};
}
template <IndexExpr A, Integer I>
constexpr auto operator*(const A& a, I k) {
  return index_scale<A>{static_cast<index_t>(k), a};
}

/// The coefficient of variable L in index type I when the type alone fixes it (variables,
/// constants, their sums, and scales of forms without L), else unknown_coef: `x + 1` and `x - r`
/// have coefficient 1 for x by type, `2 * x` only at run time.
inline constexpr index_t unknown_coef = std::numeric_limits<index_t>::min();
template <class I, class L>
inline constexpr index_t static_coef = unknown_coef;
template <char... C, class L>
inline constexpr index_t static_coef<var<C...>, L> = std::is_same_v<var<C...>, L> ? 1 : 0;
template <class L>
inline constexpr index_t static_coef<index_const, L> = 0;
template <class A, class B, class L>
inline constexpr index_t static_coef<index_add<A, B>, L> =
    static_coef<A, L> == unknown_coef || static_coef<B, L> == unknown_coef ? unknown_coef : static_coef<A, L> + static_coef<B, L>;
template <class A, class L>
inline constexpr index_t static_coef<index_scale<A>, L> = static_coef<A, L> == 0 ? 0 : unknown_coef;

template <IndexExpr A>
std::string to_string(const A& a) {
  return detail::printed(a);
}

}  // namespace loom
