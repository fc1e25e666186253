// SPDX-License-Identifier: MIT
// loom/expr/transform.hpp — rebuilding an expression tree: every access mapped through a
// function (a pipeline substitutes an inlined stage's expression for each access to it, or swaps
// one view type for another), and variables renamed or replaced by index expressions.
#pragma once
#include <tuple>
#include <type_traits>

#include "access.hpp"
#include "let.hpp"
#include "ops.hpp"
#include "reduce.hpp"

namespace loom {

// ---- index expressions: replace variables ----

/// A substitution of index expressions for variables: Vars[k] -> std::get<k>(with).
template <class Vars, class... E>
struct index_substitution {
  std::tuple<E...> with;
};

/// Renames a reduction's variables so that a substitution cannot capture them: a variable V of
/// the reduction becomes fresh<V> (printed V').
template <class V>
struct fresh;
template <char... C>
struct fresh<var<C...>> {
  using type = var<C..., '\''>;
};

struct index_subst {
  template <class Vars, class... E, char... C>
  static constexpr auto apply(const var<C...>& v, const index_substitution<Vars, E...>& s) {
    if constexpr (meta::contains<Vars, var<C...>>) return std::get<meta::index_of<Vars, var<C...>>>(s.with);
    else return v;
  }
  template <class Sub>
  static constexpr index_const apply(const index_const& c, const Sub&) { return c; }
  template <class Sub, class A, class B>
  static constexpr auto apply(const index_add<A, B>& e, const Sub& s) {
    auto a = apply(e.a, s);
    auto b = apply(e.b, s);
    return index_add<decltype(a), decltype(b)>{a, b};
  }
  template <class Sub, class A>
  static constexpr auto apply(const index_scale<A>& e, const Sub& s) {
    auto a = apply(e.a, s);
    return index_scale<decltype(a)>{e.k, a};
  }
};

// ---- value trees: map accesses, rebuild the rest ----

/// Rebuilds a tree with every access a replaced by f(a) (any node of the same value type) and
/// every reduction's variables renamed by R<V>::type (R = std::type_identity: unchanged). The
/// overloads are static members of one struct, so each sees the others whatever their order.
template <template <class> class Rename = std::type_identity>
struct tree_map {
  template <class F, class T>
  static constant<T> apply(const constant<T>& n, F&) { return n; }
  // An access as its own type (every access node lists itself: access, or expr/boundary.hpp's
  // boundary_access, which f must see as one).
  template <class F, class A>
    requires std::is_same_v<typename A::accesses, meta::list<A>>
  static auto apply(const A& n, F& f) { return f(n); }
  template <class F, class Op, class A>
  static auto apply(const unary<Op, A>& n, F& f) {
    auto a = apply(n.a, f);
    return unary<Op, decltype(a)>(a);
  }
  template <class F, class To, class A>
  static auto apply(const cast_node<To, A>& n, F& f) {
    auto a = apply(n.a, f);
    return cast_node<To, decltype(a)>(a);
  }
  template <class F, class Op, class A, class B>
  static auto apply(const binary<Op, A, B>& n, F& f) {
    auto a = apply(n.a, f);
    auto b = apply(n.b, f);
    return binary<Op, decltype(a), decltype(b)>(a, b);
  }
  template <class F, class Op, class A, class B>
  static auto apply(const compare<Op, A, B>& n, F& f) {
    auto a = apply(n.a, f);
    auto b = apply(n.b, f);
    return compare<Op, decltype(a), decltype(b)>(a, b);
  }
  template <class F, class C, class A, class B>
  static auto apply(const select_node<C, A, B>& n, F& f) {
    auto c = apply(n.cond, f);
    auto a = apply(n.a, f);
    auto b = apply(n.b, f);
    return select_node<decltype(c), decltype(a), decltype(b)>(c, a, b);
  }
  template <class F, class A, class B, class C>
  static auto apply(const fma_node<A, B, C>& n, F& f) {
    auto a = apply(n.a, f);
    auto b = apply(n.b, f);
    auto c = apply(n.c3, f);
    return fma_node<decltype(a), decltype(b), decltype(c)>(a, b, c);
  }
  // A let keeps its key when the tree's points stay (an access mapped to another view, a stage
  // substituted by name); a substitution (Rename = fresh) moves its points, so its lets become
  // local to their bodies (expr/let.hpp).
  static constexpr bool moves_points = !std::is_same_v<Rename<var<'_'>>, std::type_identity<var<'_'>>>;
  template <class K>
  using key_t = std::conditional_t<moves_points, local_key<K>, K>;
  template <class F, class K, class V, class B>
  static auto apply(const let_node<K, V, B>& n, F& f) {
    auto v = apply(n.value, f);
    auto b = apply(n.body, f);
    return let_node<key_t<K>, decltype(v), decltype(b)>(v, b);
  }
  template <class F, class K, class T>
  static let_ref<key_t<K>, T> apply(const let_ref<K, T>&, F&) { return {}; }
  template <class F, class Op, class... RV, class E>
  static auto apply(const reduce_node<Op, meta::list<RV...>, E>& n, F& f) {
    auto body = apply(n.body, f);
    return reduce_node<Op, meta::list<typename Rename<RV>::type...>, decltype(body)>(body);
  }
};

/// The tree with each access a replaced by f(a).
template <Expr E, class F>
auto map_accesses(const E& e, F&& f) {
  return tree_map<>::apply(e, f);
}

/// The access with its indices substituted (a variable of the substitution replaced by its
/// expression everywhere it appears).
template <class V, class... I, class Sub>
auto substitute_indices(const access<V, I...>& a, const Sub& s) {
  return std::apply(
      [&](const auto&... idx) {
        return access<V, decltype(index_subst::apply(idx, s))...>(a.view, index_subst::apply(idx, s)...);
      },
      a.idx);
}

template <class V>
using fresh_t = typename fresh<V>::type;

namespace detail {
template <class L>
struct tree_rvars;
template <class... R>
struct tree_rvars<meta::list<R...>> {
  using type = meta::unique<meta::concat<meta::list<>, typename R::rvars...>>;
};
template <class Vars, class... E, class... RV>
auto with_fresh(const index_substitution<Vars, E...>& s, meta::list<RV...>*) {
  return index_substitution<meta::concat<Vars, meta::list<RV...>>, E..., fresh_t<RV>...>{
      std::tuple_cat(s.with, std::tuple<fresh_t<RV>...>{})};
}
}  // namespace detail

/// The tree with the substitution applied to every index, and every reduction variable V renamed
/// fresh<V> (in the reduction's list and in its body), so that an expression substituted for a
/// variable can never name one of the reduction's own variables by accident.
template <Expr E, class Vars, class... X>
auto substitute(const E& e, const index_substitution<Vars, X...>& s) {
  using RV = typename detail::tree_rvars<typename E::reductions>::type;
  const auto all = detail::with_fresh(s, static_cast<RV*>(nullptr));
  auto f = [&](const auto& a) { return substitute_indices(a, all); };
  return tree_map<fresh>::apply(e, f);
}

}  // namespace loom
