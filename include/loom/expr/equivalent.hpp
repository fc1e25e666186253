// SPDX-License-Identifier: MIT
// loom/expr/equivalent.hpp — whether two trees compute the same values: `maximum(k, X(i, k))` and
// `maximum(l, X(i, l))` do, when both X are the same view. The shape is compared at compile time
// up to the names of the reductions' own variables (alpha_equivalent); the run-time values (the
// views, the constants, the offsets of indices) per run (same_values). Either answers "no" for a
// node it does not know, so a caller that merges on "yes" is never wrong.
#pragma once
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/region.hpp"
#include "access.hpp"
#include "index.hpp"
#include "let.hpp"
#include "node.hpp"
#include "ops.hpp"
#include "reduce.hpp"

namespace loom::detail {

/// The variables bound so far: As[p] in the first tree stands for Bs[p] in the second.
template <class As, class Bs>
struct bound_vars {
  using first = As;
  using second = Bs;
};

// ---- index expressions ----

template <class A, class B, class Map>
struct alpha_index : std::false_type {};
template <char... C, char... D, class Map>
struct alpha_index<var<C...>, var<D...>, Map> {
  using VA = var<C...>;
  using VB = var<D...>;
  static constexpr bool bound_a = meta::contains<typename Map::first, VA>;
  static constexpr bool bound_b = meta::contains<typename Map::second, VB>;
  static constexpr bool value = [] {
    if constexpr (bound_a && bound_b) return meta::index_of<typename Map::first, VA> == meta::index_of<typename Map::second, VB>;
    else return !bound_a && !bound_b && std::is_same_v<VA, VB>;  // the same free variable
  }();
};
template <class Map>
struct alpha_index<index_const, index_const, Map> : std::true_type {};
template <class A1, class A2, class B1, class B2, class Map>
struct alpha_index<index_add<A1, A2>, index_add<B1, B2>, Map>
    : std::bool_constant<alpha_index<A1, B1, Map>::value && alpha_index<A2, B2, Map>::value> {};
template <class A, class B, class Map>
struct alpha_index<index_scale<A>, index_scale<B>, Map> : alpha_index<A, B, Map> {};

// ---- value trees ----

/// Whether trees A and B have the same shape, with the variables of Map bound pairwise.
template <class A, class B, class Map>
struct alpha_tree : std::false_type {};
template <class T, class Map>
struct alpha_tree<constant<T>, constant<T>, Map> : std::true_type {};
template <class V, class... IA, class... IB, class Map>
  requires(sizeof...(IA) == sizeof...(IB))
struct alpha_tree<access<V, IA...>, access<V, IB...>, Map> : std::bool_constant<(alpha_index<IA, IB, Map>::value && ...)> {};
template <class Op, class A, class B, class Map>
struct alpha_tree<unary<Op, A>, unary<Op, B>, Map> : alpha_tree<A, B, Map> {};
template <class To, class A, class B, class Map>
struct alpha_tree<cast_node<To, A>, cast_node<To, B>, Map> : alpha_tree<A, B, Map> {};
template <class Op, class A1, class A2, class B1, class B2, class Map>
struct alpha_tree<binary<Op, A1, A2>, binary<Op, B1, B2>, Map>
    : std::bool_constant<alpha_tree<A1, B1, Map>::value && alpha_tree<A2, B2, Map>::value> {};
template <class Op, class A1, class A2, class B1, class B2, class Map>
struct alpha_tree<compare<Op, A1, A2>, compare<Op, B1, B2>, Map>
    : std::bool_constant<alpha_tree<A1, B1, Map>::value && alpha_tree<A2, B2, Map>::value> {};
template <class A1, class A2, class A3, class B1, class B2, class B3, class Map>
struct alpha_tree<select_node<A1, A2, A3>, select_node<B1, B2, B3>, Map>
    : std::bool_constant<alpha_tree<A1, B1, Map>::value && alpha_tree<A2, B2, Map>::value && alpha_tree<A3, B3, Map>::value> {};
template <class A1, class A2, class A3, class B1, class B2, class B3, class Map>
struct alpha_tree<fma_node<A1, A2, A3>, fma_node<B1, B2, B3>, Map>
    : std::bool_constant<alpha_tree<A1, B1, Map>::value && alpha_tree<A2, B2, Map>::value && alpha_tree<A3, B3, Map>::value> {};
template <class Op, class... RA, class EA, class... RB, class EB, class Map>
  requires(sizeof...(RA) == sizeof...(RB))
struct alpha_tree<reduce_node<Op, meta::list<RA...>, EA>, reduce_node<Op, meta::list<RB...>, EB>, Map>
    : alpha_tree<EA, EB, bound_vars<meta::concat<typename Map::first, meta::list<RA...>>, meta::concat<typename Map::second, meta::list<RB...>>>> {};

/// Whether trees A and B compute the same values once their run-time values agree: the same shape
/// up to the names of the reductions' variables (no free variable renamed).
template <class A, class B>
inline constexpr bool alpha_equivalent = alpha_tree<A, B, bound_vars<meta::list<>, meta::list<>>>::value;

// ---- run-time values (only for trees that are alpha_equivalent) ----

inline bool same_values(const index_const& a, const index_const& b) { return a.value == b.value; }
template <char... C, char... D>
bool same_values(const var<C...>&, const var<D...>&) {
  return true;
}
template <class A1, class A2, class B1, class B2>
bool same_values(const index_add<A1, A2>& a, const index_add<B1, B2>& b) {
  return same_values(a.a, b.a) && same_values(a.b, b.b);
}
template <class A, class B>
bool same_values(const index_scale<A>& a, const index_scale<B>& b) {
  return a.k == b.k && same_values(a.a, b.a);
}

template <class T>
bool same_values(const constant<T>& a, const constant<T>& b) {
  return std::memcmp(&a.value, &b.value, sizeof(T)) == 0;  // bits: NaN is NaN, -0 is not +0
}
/// The same elements: the same address, extents, strides and origin in every dimension.
template <class V, class... IA, class... IB>
bool same_values(const access<V, IA...>& a, const access<V, IB...>& b) {
  if (a.view.data() != b.view.data()) return false;
  return [&]<std::size_t... D>(std::index_sequence<D...>) {
    return ((a.view.extent(D) == b.view.extent(D) && a.view.stride(D) == b.view.stride(D) &&
             origin_of(a.view, D) == origin_of(b.view, D) && same_values(std::get<D>(a.idx), std::get<D>(b.idx))) &&
            ...);
  }(std::index_sequence_for<IA...>{});
}
template <class Op, class A, class B>
bool same_values(const unary<Op, A>& a, const unary<Op, B>& b) {
  return same_values(a.a, b.a);
}
template <class To, class A, class B>
bool same_values(const cast_node<To, A>& a, const cast_node<To, B>& b) {
  return same_values(a.a, b.a);
}
template <class Op, class A1, class A2, class B1, class B2>
bool same_values(const binary<Op, A1, A2>& a, const binary<Op, B1, B2>& b) {
  return same_values(a.a, b.a) && same_values(a.b, b.b);
}
template <class Op, class A1, class A2, class B1, class B2>
bool same_values(const compare<Op, A1, A2>& a, const compare<Op, B1, B2>& b) {
  return same_values(a.a, b.a) && same_values(a.b, b.b);
}
template <class A1, class A2, class A3, class B1, class B2, class B3>
bool same_values(const select_node<A1, A2, A3>& a, const select_node<B1, B2, B3>& b) {
  return same_values(a.cond, b.cond) && same_values(a.a, b.a) && same_values(a.b, b.b);
}
template <class A1, class A2, class A3, class B1, class B2, class B3>
bool same_values(const fma_node<A1, A2, A3>& a, const fma_node<B1, B2, B3>& b) {
  return same_values(a.a, b.a) && same_values(a.b, b.b) && same_values(a.c3, b.c3);
}
template <class Op, class RA, class EA, class RB, class EB>
bool same_values(const reduce_node<Op, RA, EA>& a, const reduce_node<Op, RB, EB>& b) {
  return same_values(a.body, b.body);
}
template <class K, class VA, class BA, class VB, class BB>
bool same_values(const let_node<K, VA, BA>& a, const let_node<K, VB, BB>& b) {
  return same_values(a.value, b.value) && same_values(a.body, b.body);
}
/// A read of the same let: the same value (the trees compared sit in one scope).
template <class K, class T>
bool same_values(const let_ref<K, T>&, const let_ref<K, T>&) {
  return true;
}

}  // namespace loom::detail
