// loom/lower/find_reduction.hpp — reaches the one scheduled reduction inside a right side (the
// engine evaluates its body in the reduction loops and the rest of the tree as the epilogue).
#pragma once
#include "../expr/ops.hpp"
#include "../expr/reduce.hpp"

namespace loom::lower {

template <class N>
inline constexpr bool has_reduction = N::reductions::size > 0;

template <class Op, class RV, class E>
const reduce_node<Op, RV, E>& scheduled_reduction(const reduce_node<Op, RV, E>& r) { return r; }
template <class Op, class A>
const auto& scheduled_reduction(const unary<Op, A>& n) { return scheduled_reduction(n.a); }
template <class To, class A>
const auto& scheduled_reduction(const cast_node<To, A>& n) { return scheduled_reduction(n.a); }
template <class Op, class A, class B>
const auto& scheduled_reduction(const binary<Op, A, B>& n) {
  if constexpr (has_reduction<A>) return scheduled_reduction(n.a);
  else return scheduled_reduction(n.b);
}
template <class Op, class A, class B>
const auto& scheduled_reduction(const compare<Op, A, B>& n) {
  if constexpr (has_reduction<A>) return scheduled_reduction(n.a);
  else return scheduled_reduction(n.b);
}
template <class C, class A, class B>
const auto& scheduled_reduction(const select_node<C, A, B>& n) {
  if constexpr (has_reduction<C>) return scheduled_reduction(n.cond);
  else if constexpr (has_reduction<A>) return scheduled_reduction(n.a);
  else return scheduled_reduction(n.b);
}
template <class A, class B, class C>
const auto& scheduled_reduction(const fma_node<A, B, C>& n) {
  if constexpr (has_reduction<A>) return scheduled_reduction(n.a);
  else if constexpr (has_reduction<B>) return scheduled_reduction(n.b);
  else return scheduled_reduction(n.c3);
}

/// The same tree with its scheduled reduction replaced by `r` (used to combine the partial
/// results of a chunked parallel reduction under the original epilogue).
template <class Op, class RV, class E, class New>
New replace_reduction(const reduce_node<Op, RV, E>&, const New& r) { return r; }
template <class Op, class A, class New>
auto replace_reduction(const unary<Op, A>& n, const New& r) {
  auto a = replace_reduction(n.a, r);
  return unary<Op, decltype(a)>(a);
}
template <class To, class A, class New>
auto replace_reduction(const cast_node<To, A>& n, const New& r) {
  auto a = replace_reduction(n.a, r);
  return cast_node<To, decltype(a)>(a);
}
template <class Op, class A, class B, class New>
auto replace_reduction(const binary<Op, A, B>& n, const New& r) {
  if constexpr (has_reduction<A>) {
    auto a = replace_reduction(n.a, r);
    return binary<Op, decltype(a), B>(a, n.b);
  } else {
    auto b = replace_reduction(n.b, r);
    return binary<Op, A, decltype(b)>(n.a, b);
  }
}
template <class Op, class A, class B, class New>
auto replace_reduction(const compare<Op, A, B>& n, const New& r) {
  if constexpr (has_reduction<A>) {
    auto a = replace_reduction(n.a, r);
    return compare<Op, decltype(a), B>(a, n.b);
  } else {
    auto b = replace_reduction(n.b, r);
    return compare<Op, A, decltype(b)>(n.a, b);
  }
}
template <class C, class A, class B, class New>
auto replace_reduction(const select_node<C, A, B>& n, const New& r) {
  if constexpr (has_reduction<C>) {
    auto c = replace_reduction(n.cond, r);
    return select_node<decltype(c), A, B>(c, n.a, n.b);
  } else if constexpr (has_reduction<A>) {
    auto a = replace_reduction(n.a, r);
    return select_node<C, decltype(a), B>(n.cond, a, n.b);
  } else {
    auto b = replace_reduction(n.b, r);
    return select_node<C, A, decltype(b)>(n.cond, n.a, b);
  }
}
template <class A, class B, class C, class New>
auto replace_reduction(const fma_node<A, B, C>& n, const New& r) {
  if constexpr (has_reduction<A>) {
    auto a = replace_reduction(n.a, r);
    return fma_node<decltype(a), B, C>(a, n.b, n.c3);
  } else if constexpr (has_reduction<B>) {
    auto b = replace_reduction(n.b, r);
    return fma_node<A, decltype(b), C>(n.a, b, n.c3);
  } else {
    auto c = replace_reduction(n.c3, r);
    return fma_node<A, B, decltype(c)>(n.a, n.b, c);
  }
}

}  // namespace loom::lower
