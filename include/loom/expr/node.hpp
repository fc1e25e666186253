// SPDX-License-Identifier: MIT
// loom/expr/node.hpp — what every expression node is: a small value type that evaluates itself
// at a point, as a scalar (eval) or as W lanes along the vectorized variable (eval_v), and knows
// its variables, its accesses and how to print itself. The Expr concept is the contract.
#pragma once
#include <concepts>
#include <cstddef>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>

#include "../core/message.hpp"
#include "../core/meta.hpp"
#include "../simd/lanes.hpp"

namespace loom {

/// Base of every value node (not of index expressions).
struct expr_node {};

template <class T>
concept Expr = std::derived_from<std::remove_cvref_t<T>, expr_node>;

template <class T>
concept Scalar = std::is_arithmetic_v<std::remove_cvref_t<T>> && !std::same_as<std::remove_cvref_t<T>, bool>;

/// How a vectorized loop evaluates: the lane variable, the lane count W, whether every access
/// along the lane is unit-stride (checked once per run) and whether only `active` lanes are live.
/// W is fixed by the definition's output type; every node holds W lanes of its own type (an xsimd
/// batch, or simd::lanes where W of them do not fill exactly one register: simd/lanes.hpp).
template <class Lane, std::size_t W, bool Contig, bool Masked>
struct vmode {
  using lane = Lane;
  static constexpr std::size_t width = W;
  static constexpr bool contiguous = Contig;
  static constexpr bool masked = Masked;
  template <class T>
  using batch = simd::vec<T, W>;
};

/// The value type of a node (bool for comparisons).
template <Expr E>
using value_t = typename std::remove_cvref_t<E>::value_type;

/// A scalar captured by value when the definition is written (a literal or a run-time value).
template <class T>
struct constant : expr_node {
  using value_type = T;
  using vars = meta::list<>;
  using reductions = meta::list<>;
  using accesses = meta::list<>;
  T value;

  explicit constant(T v) : value(v) {}
  template <class C>
  LOOM_INLINE T eval(const C&) const { return value; }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C&) const { return typename VM::template batch<T>(value); }
  template <class F>
  LOOM_INLINE void for_each_access(F&&) {}
  template <class F>
  LOOM_INLINE void for_each_access(F&&) const {}
  void print(std::ostream& os) const { os << +value; }
};

template <class N>
inline constexpr bool is_constant = false;
template <class T>
inline constexpr bool is_constant<constant<T>> = true;

template <Expr E>
std::string to_string(const E& e) {
  return detail::printed(e);
}

namespace detail {
template <class To, class E>
constexpr decltype(auto) lift(const E& e) {
  if constexpr (Expr<E>) return e;  // a reference: the node that takes it makes the only copy
  else return constant<To>(static_cast<To>(e));
}
/// The node type lift<To> makes of an E.
template <class To, class E>
using lifted_t = std::remove_cvref_t<decltype(lift<To>(std::declval<const E&>()))>;
}  // namespace detail

}  // namespace loom
