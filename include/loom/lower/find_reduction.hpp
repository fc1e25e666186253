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

}  // namespace loom::lower
