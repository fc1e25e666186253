// SPDX-License-Identifier: MIT
// loom/expr/operands.hpp — the operations of a tree (unary, cast, binary, compare, select, fma)
// seen alike: their operand types, each operand visited, and the same operation rebuilt over new
// operands. A pass that treats every operation the same way and only leaves, lets and reductions
// specially (lower/invariant.hpp, pipeline/repeated.hpp) walks them through operation<N> instead of
// one overload per node kind.
#pragma once
#include <type_traits>

#include "../core/meta.hpp"
#include "ops.hpp"

namespace loom {

/// operation<N>: operands (a meta::list), each(n, f) calls f on every operand in order, map(n, f)
/// is N's kind of node over f(operand)...; undefined for anything but an operation.
template <class N>
struct operation;

template <class Op, class A>
struct operation<unary<Op, A>> {
  using operands = meta::list<A>;
  template <class F>
  static LOOM_INLINE void each(const unary<Op, A>& n, F&& f) { f(n.a); }
  template <class F>
  static LOOM_INLINE auto map(const unary<Op, A>& n, F&& f) {
    auto a = f(n.a);
    return unary<Op, decltype(a)>(a);
  }
};
template <class To, class A>
struct operation<cast_node<To, A>> {
  using operands = meta::list<A>;
  template <class F>
  static LOOM_INLINE void each(const cast_node<To, A>& n, F&& f) { f(n.a); }
  template <class F>
  static LOOM_INLINE auto map(const cast_node<To, A>& n, F&& f) {
    auto a = f(n.a);
    return cast_node<To, decltype(a)>(a);
  }
};
template <class Op, class A, class B>
struct operation<binary<Op, A, B>> {
  using operands = meta::list<A, B>;
  template <class F>
  static LOOM_INLINE void each(const binary<Op, A, B>& n, F&& f) { f(n.a), f(n.b); }
  template <class F>
  static LOOM_INLINE auto map(const binary<Op, A, B>& n, F&& f) {
    auto a = f(n.a);
    auto b = f(n.b);
    return binary<Op, decltype(a), decltype(b)>(a, b);
  }
};
template <class Op, class A, class B>
struct operation<compare<Op, A, B>> {
  using operands = meta::list<A, B>;
  template <class F>
  static LOOM_INLINE void each(const compare<Op, A, B>& n, F&& f) { f(n.a), f(n.b); }
  template <class F>
  static LOOM_INLINE auto map(const compare<Op, A, B>& n, F&& f) {
    auto a = f(n.a);
    auto b = f(n.b);
    return compare<Op, decltype(a), decltype(b)>(a, b);
  }
};
template <class C, class A, class B>
struct operation<select_node<C, A, B>> {
  using operands = meta::list<C, A, B>;
  template <class F>
  static LOOM_INLINE void each(const select_node<C, A, B>& n, F&& f) { f(n.cond), f(n.a), f(n.b); }
  template <class F>
  static LOOM_INLINE auto map(const select_node<C, A, B>& n, F&& f) {
    auto c = f(n.cond);
    auto a = f(n.a);
    auto b = f(n.b);
    return select_node<decltype(c), decltype(a), decltype(b)>(c, a, b);
  }
};
template <class A, class B, class C>
struct operation<fma_node<A, B, C>> {
  using operands = meta::list<A, B, C>;
  template <class F>
  static LOOM_INLINE void each(const fma_node<A, B, C>& n, F&& f) { f(n.a), f(n.b), f(n.c3); }
  template <class F>
  static LOOM_INLINE auto map(const fma_node<A, B, C>& n, F&& f) {
    auto a = f(n.a);
    auto b = f(n.b);
    auto c = f(n.c3);
    return fma_node<decltype(a), decltype(b), decltype(c)>(a, b, c);
  }
};

/// Whether N is an operation (operation<N> is defined).
template <class N>
concept Operation = requires { typename operation<N>::operands; };

}  // namespace loom
