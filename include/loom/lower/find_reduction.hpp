// SPDX-License-Identifier: MIT
// loom/lower/find_reduction.hpp — reaches the one scheduled reduction inside a right side (the
// engine evaluates its body in the reduction loops and the rest of the tree as the epilogue).
#pragma once
#include "../expr/let.hpp"
#include "../expr/ops.hpp"
#include "../expr/reduce.hpp"

namespace loom::lower {

template <class N>
inline constexpr bool has_reduction = N::reductions::size > 0;

// The overloads are static members of one struct: inside a class every member is visible from
// every member body, whatever the order (free functions would need the nodes' namespace for ADL).
struct reduction_walk {
  template <class Op, class RV, class E>
  static const reduce_node<Op, RV, E>& get(const reduce_node<Op, RV, E>& r) { return r; }
  template <class Op, class A>
  static const auto& get(const unary<Op, A>& n) { return get(n.a); }
  template <class To, class A>
  static const auto& get(const cast_node<To, A>& n) { return get(n.a); }
  template <class Op, class A, class B>
  static const auto& get(const binary<Op, A, B>& n) {
    if constexpr (has_reduction<A>) return get(n.a);
    else return get(n.b);
  }
  template <class Op, class A, class B>
  static const auto& get(const compare<Op, A, B>& n) {
    if constexpr (has_reduction<A>) return get(n.a);
    else return get(n.b);
  }
  template <class C, class A, class B>
  static const auto& get(const select_node<C, A, B>& n) {
    if constexpr (has_reduction<C>) return get(n.cond);
    else if constexpr (has_reduction<A>) return get(n.a);
    else return get(n.b);
  }
  template <class A, class B, class C>
  static const auto& get(const fma_node<A, B, C>& n) {
    if constexpr (has_reduction<A>) return get(n.a);
    else if constexpr (has_reduction<B>) return get(n.b);
    else return get(n.c3);
  }
  template <class K, class V, class B>
  static const auto& get(const let_node<K, V, B>& n) {
    if constexpr (has_reduction<V>) return get(n.value);
    else return get(n.body);
  }

  /// The same tree with its scheduled reduction replaced by `r` (used to combine the partial
  /// results of a chunked parallel reduction under the original epilogue).
  template <class Op, class RV, class E, class New>
  static New replace(const reduce_node<Op, RV, E>&, const New& r) { return r; }
  template <class Op, class A, class New>
  static auto replace(const unary<Op, A>& n, const New& r) {
    auto a = replace(n.a, r);
    return unary<Op, decltype(a)>(a);
  }
  template <class To, class A, class New>
  static auto replace(const cast_node<To, A>& n, const New& r) {
    auto a = replace(n.a, r);
    return cast_node<To, decltype(a)>(a);
  }
  template <class Op, class A, class B, class New>
  static auto replace(const binary<Op, A, B>& n, const New& r) {
    if constexpr (has_reduction<A>) {
      auto a = replace(n.a, r);
      return binary<Op, decltype(a), B>(a, n.b);
    } else {
      auto b = replace(n.b, r);
      return binary<Op, A, decltype(b)>(n.a, b);
    }
  }
  template <class Op, class A, class B, class New>
  static auto replace(const compare<Op, A, B>& n, const New& r) {
    if constexpr (has_reduction<A>) {
      auto a = replace(n.a, r);
      return compare<Op, decltype(a), B>(a, n.b);
    } else {
      auto b = replace(n.b, r);
      return compare<Op, A, decltype(b)>(n.a, b);
    }
  }
  template <class C, class A, class B, class New>
  static auto replace(const select_node<C, A, B>& n, const New& r) {
    if constexpr (has_reduction<C>) {
      auto c = replace(n.cond, r);
      return select_node<decltype(c), A, B>(c, n.a, n.b);
    } else if constexpr (has_reduction<A>) {
      auto a = replace(n.a, r);
      return select_node<C, decltype(a), B>(n.cond, a, n.b);
    } else {
      auto b = replace(n.b, r);
      return select_node<C, A, decltype(b)>(n.cond, n.a, b);
    }
  }
  template <class A, class B, class C, class New>
  static auto replace(const fma_node<A, B, C>& n, const New& r) {
    if constexpr (has_reduction<A>) {
      auto a = replace(n.a, r);
      return fma_node<decltype(a), B, C>(a, n.b, n.c3);
    } else if constexpr (has_reduction<B>) {
      auto b = replace(n.b, r);
      return fma_node<A, decltype(b), C>(n.a, b, n.c3);
    } else {
      auto c = replace(n.c3, r);
      return fma_node<A, B, decltype(c)>(n.a, n.b, c);
    }
  }
  template <class K, class V, class B, class New>
  static auto replace(const let_node<K, V, B>& n, const New& r) {
    if constexpr (has_reduction<V>) {
      auto v = replace(n.value, r);
      return let_node<K, decltype(v), B>(v, n.body);
    } else {
      auto b = replace(n.body, r);
      return let_node<K, V, decltype(b)>(n.value, b);
    }
  }
};

/// The one scheduled reduction inside a right side.
template <class N>
const auto& scheduled_reduction(const N& n) { return reduction_walk::get(n); }

/// The same tree with its scheduled reduction replaced by `r` (used to combine the partial
/// results of a chunked parallel reduction under the original epilogue).
template <class N, class New>
auto replace_reduction(const N& n, const New& r) { return reduction_walk::replace(n, r); }

}  // namespace loom::lower
