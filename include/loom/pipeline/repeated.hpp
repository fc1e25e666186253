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
#include "../expr/definition.hpp"
#include "../expr/equivalent.hpp"
#include "../expr/let.hpp"
#include "../expr/ops.hpp"
#include "../expr/reduce.hpp"

namespace loom::detail {

/// The let a repeated operand is bound to (printed `twice`).
struct repeated_operand {
  static constexpr std::string_view name() { return "twice"; }
};

/// Two operands of one operation, rewritten as one: they must hold the same values in the run.
template <class A>
struct repeated_pair {
  A a, b;
  bool holds() const { return same_values(a, b); }
};

template <class T>
inline constexpr bool is_plain_access = false;
template <class V, class... I>
inline constexpr bool is_plain_access<access<V, I...>> = true;

/// Worth binding once: not a constant or a let's value, and every read a plain access (a boundary
/// read carries values same_values does not compare).
template <class A>
inline constexpr bool bind_once = !is_let_ref<A> && !is_constant<A> &&
                                  []<class... R>(meta::list<R...>*) { return (is_plain_access<R> && ... && true); }(
                                      static_cast<typename A::accesses*>(nullptr));

/// A rebuilt tree and the pairs its rewrites need (not a std::pair: its assignment traits would
/// instantiate an access's operator=, which builds a definition).
template <class Tree, class Pairs>
struct rewritten {
  Tree tree;
  Pairs pairs;
};
template <class Tree, class Pairs>
rewritten<Tree, Pairs> rewrite(const Tree& t, const Pairs& p) {
  return {t, p};
}

/// The tree with every `a op a` (the same type on both sides) evaluating a once, and the pairs
/// that must hold the same values for that to be right.
struct repeat_once {
  // Leaves (constants, accesses, let_refs): as they are.
  template <class N>
  static auto apply(const N& n) {
    return rewrite(n, std::tuple<>{});
  }
  template <class Op, class A>
  static auto apply(const unary<Op, A>& n) {
    auto [a, p] = apply(n.a);
    return rewrite(unary<Op, decltype(a)>(a), p);
  }
  template <class To, class A>
  static auto apply(const cast_node<To, A>& n) {
    auto [a, p] = apply(n.a);
    return rewrite(cast_node<To, decltype(a)>(a), p);
  }
  template <class Op, class A, class B>
  static auto apply(const binary<Op, A, B>& n) {
    if constexpr (std::is_same_v<A, B> && bind_once<A>) {
      auto [a, p] = apply(n.a);
      using K = local_key<repeated_operand>;
      using R = let_ref<K, value_t<A>>;
      using Body = binary<Op, R, R>;
      return rewrite(let_node<K, decltype(a), Body>(a, Body(R{}, R{})),
                            std::tuple_cat(p, std::make_tuple(repeated_pair<A>{n.a, n.b})));
    } else {
      auto [a, pa] = apply(n.a);
      auto [b, pb] = apply(n.b);
      return rewrite(binary<Op, decltype(a), decltype(b)>(a, b), std::tuple_cat(pa, pb));
    }
  }
  template <class Op, class A, class B>
  static auto apply(const compare<Op, A, B>& n) {
    auto [a, pa] = apply(n.a);
    auto [b, pb] = apply(n.b);
    return rewrite(compare<Op, decltype(a), decltype(b)>(a, b), std::tuple_cat(pa, pb));
  }
  template <class C, class A, class B>
  static auto apply(const select_node<C, A, B>& n) {
    auto [c, pc] = apply(n.cond);
    auto [a, pa] = apply(n.a);
    auto [b, pb] = apply(n.b);
    return rewrite(select_node<decltype(c), decltype(a), decltype(b)>(c, a, b), std::tuple_cat(pc, pa, pb));
  }
  template <class A, class B, class C>
  static auto apply(const fma_node<A, B, C>& n) {
    auto [a, pa] = apply(n.a);
    auto [b, pb] = apply(n.b);
    auto [c, pc] = apply(n.c3);
    return rewrite(fma_node<decltype(a), decltype(b), decltype(c)>(a, b, c), std::tuple_cat(pa, pb, pc));
  }
  template <class K, class V, class B>
  static auto apply(const let_node<K, V, B>& n) {
    auto [v, pv] = apply(n.value);
    auto [b, pb] = apply(n.body);
    return rewrite(let_node<K, decltype(v), decltype(b)>(v, b), std::tuple_cat(pv, pb));
  }
  template <class Op, class RV, class E>
  static auto apply(const reduce_node<Op, RV, E>& n) {
    auto [b, p] = apply(n.body);
    return rewrite(reduce_node<Op, RV, decltype(b)>(b), p);
  }
};

/// Definitions with their repeated operands evaluated once (defs), and the pairs a run must find
/// equal to use them (holds()).
template <class Defs, class Pairs>
struct repeated_once {
  Defs defs;
  Pairs pairs;
  static constexpr bool rewrites = std::tuple_size_v<Pairs> > 0;
  bool holds() const {
    return std::apply([](const auto&... p) { return (p.holds() && ... && true); }, pairs);
  }
};

template <class... D>
auto repeat_once_in(const std::tuple<D...>& defs) {
  return std::apply(
      [](const auto&... d) {
        auto each = std::make_tuple(repeat_once::apply(d.rhs)...);
        return std::apply(
            [&](const auto&... r) {
              auto out = std::make_tuple(definition<typename D::lhs_type, std::remove_cvref_t<decltype(r.tree)>, typename D::mode>(
                  d.lhs, r.tree)...);
              auto pairs = std::tuple_cat(r.pairs...);
              return repeated_once<decltype(out), decltype(pairs)>{out, pairs};
            },
            each);
      },
      defs);
}

}  // namespace loom::detail
