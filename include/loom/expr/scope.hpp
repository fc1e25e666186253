// SPDX-License-Identifier: MIT
// loom/expr/scope.hpp — the variables a tree reads outside its reductions: what an engine's
// epilogue (the expression around the reduction it runs) may depend on. A reduction's own
// variables are bound inside it only; a read of one outside it has no value an engine could give.
#pragma once
#include "../core/meta.hpp"
#include "let.hpp"
#include "ops.hpp"
#include "reduce.hpp"

namespace loom {

/// The variables of tree E outside its reductions. Node kinds not listed here fall back to all of
/// E's variables (reductions included), which can only make an engine refuse a definition.
template <class E>
struct vars_outside_reductions {
  using type = typename E::vars;
};
template <class E>
using vars_outside_reductions_t = typename vars_outside_reductions<E>::type;

template <class Op, class RV, class E>
struct vars_outside_reductions<reduce_node<Op, RV, E>> {
  using type = meta::list<>;
};
template <class Op, class A>
struct vars_outside_reductions<unary<Op, A>> {
  using type = vars_outside_reductions_t<A>;
};
template <class To, class A>
struct vars_outside_reductions<cast_node<To, A>> {
  using type = vars_outside_reductions_t<A>;
};
template <class Op, class A, class B>
struct vars_outside_reductions<binary<Op, A, B>> {
  using type = meta::concat<vars_outside_reductions_t<A>, vars_outside_reductions_t<B>>;
};
template <class Op, class A, class B>
struct vars_outside_reductions<compare<Op, A, B>> {
  using type = meta::concat<vars_outside_reductions_t<A>, vars_outside_reductions_t<B>>;
};
template <class C, class A, class B>
struct vars_outside_reductions<select_node<C, A, B>> {
  using type = meta::concat<vars_outside_reductions_t<C>, vars_outside_reductions_t<A>, vars_outside_reductions_t<B>>;
};
template <class A, class B, class C>
struct vars_outside_reductions<fma_node<A, B, C>> {
  using type = meta::concat<vars_outside_reductions_t<A>, vars_outside_reductions_t<B>, vars_outside_reductions_t<C>>;
};
template <class K, class V, class B>
struct vars_outside_reductions<let_node<K, V, B>> {
  using type = meta::concat<vars_outside_reductions_t<V>, vars_outside_reductions_t<B>>;
};

}  // namespace loom
