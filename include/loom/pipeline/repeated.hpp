// SPDX-License-Identifier: MIT
// loom/pipeline/repeated.hpp — an operation whose two operands are one expression written twice
// (a layer norm's `(X(i, k) - mean(i)) * (X(i, k) - mean(i))`) evaluates it once: the operation
// becomes `let twice = a in twice op twice`. Each access binds its own base pointer, so the
// compiler cannot see that the two operands load the same elements; without this, a variance
// loads every element twice and subtracts twice.
//
// The two operands have the same type by construction; whether they read the same views and hold
// the same constants is known only per run (same_values), so a caller runs the rewritten tree
// only when every pair holds (with_hoisted, pipeline/run.hpp), and the tree as written otherwise.
#pragma once
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../expr/access.hpp"
#include "../expr/boundary.hpp"
#include "../expr/definition.hpp"
#include "../expr/equivalent.hpp"
#include "../expr/let.hpp"
#include "../expr/operands.hpp"
#include "../expr/ops.hpp"
#include "../expr/reduce.hpp"

namespace loom::detail {

/// The let a repeated operand is bound to (printed `twice`).
struct repeated_operand {
  static constexpr std::string_view name() { return "twice"; }
};

/// Worth binding once: not a constant or a let's value, and no boundary read (it carries values
/// same_values does not compare).
template <class A>
inline constexpr bool bind_once = !is_let_ref<A> && !is_constant<A> && !has_boundary<A>;

/// repeat_once::apply: the tree with every `a op a` (one type on both sides) evaluating a once;
/// repeat_once::holds: whether a run may use it, each such pair holding the same values.
struct repeat_once {
  // Leaves (constants, accesses, let_refs): as they are.
  template <class N>
  static N apply(const N& n) {
    return n;
  }
  template <Operation N>
  static auto apply(const N& n) {
    return operation<N>::map(n, [](const auto& x) { return apply(x); });
  }
  template <class Op, class A, class B>
    requires(std::is_same_v<A, B> && bind_once<A>)
  static auto apply(const binary<Op, A, B>& n) {
    auto a = apply(n.a);
    using K = local_key<repeated_operand>;
    using R = let_ref<K, value_t<A>>;
    using Body = binary<Op, R, R>;
    return let_node<K, decltype(a), Body>(a, Body(R{}, R{}));
  }
  template <class K, class V, class B>
  static auto apply(const let_node<K, V, B>& n) {
    auto v = apply(n.value);
    auto b = apply(n.body);
    return let_node<K, decltype(v), decltype(b)>(v, b);
  }
  template <class Op, class RV, class E>
  static auto apply(const reduce_node<Op, RV, E>& n) {
    auto b = apply(n.body);
    return reduce_node<Op, RV, decltype(b)>(b);
  }

  // The same walk, over the tree as written (a rewritten pair's second operand is dropped: the
  // pairs inside it are those of the first when the two hold the same values).
  template <class N>
  static bool holds(const N&) {
    return true;
  }
  template <Operation N>
  static bool holds(const N& n) {
    bool all = true;
    operation<N>::each(n, [&](const auto& x) { all = all && holds(x); });
    return all;
  }
  template <class Op, class A, class B>
    requires(std::is_same_v<A, B> && bind_once<A>)
  static bool holds(const binary<Op, A, B>& n) {
    return same_values(n.a, n.b) && holds(n.a);
  }
  template <class K, class V, class B>
  static bool holds(const let_node<K, V, B>& n) {
    return holds(n.value) && holds(n.body);
  }
  template <class Op, class RV, class E>
  static bool holds(const reduce_node<Op, RV, E>& n) {
    return holds(n.body);
  }
};

/// Definitions with their repeated operands evaluated once (defs), whether that changed any
/// (rewrites), and whether this run may use them (holds).
template <class Defs, bool Rewrites>
struct repeated_once {
  Defs defs;
  bool holds;
  static constexpr bool rewrites = Rewrites;
};

template <class... D>
auto repeat_once_in(const std::tuple<D...>& defs) {
  return std::apply(
      [](const D&... d) {
        auto out = std::make_tuple(definition<typename D::lhs_type, decltype(repeat_once::apply(d.rhs)), typename D::mode>(
            d.lhs, repeat_once::apply(d.rhs))...);
        return repeated_once<decltype(out), !std::is_same_v<decltype(out), std::tuple<D...>>>{out, (repeat_once::holds(d.rhs) && ... && true)};
      },
      defs);
}

}  // namespace loom::detail
