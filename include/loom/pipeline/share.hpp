// SPDX-License-Identifier: MIT
// loom/pipeline/share.hpp — an inlined stage read at the reader's own point is computed once per
// point however many times it is read (common subexpression elimination, as Halide's CSE does
// after inlining). A read of stage Id whose indices are exactly Id's variables becomes the marker
// let<shared_key<Id>>(Id's expression, ref); share() then lifts every such let of a right side
// out to its root, one per key, in an order where each value only reads keys bound outside it:
//
//   det(y, x) = Sxx(y, x) * Syy(y, x) - Sxy(y, x) * Sxy(y, x)
//   trace(y, x) = Sxx(y, x) + Syy(y, x)
//   out(y, x) = det(y, x) - k * trace(y, x) * trace(y, x)        (all inlined)
//
// becomes out = let Sxx = .. in let Syy = .. in let Sxy = .. in let det = .. in let trace = .. in
// det - k * trace * trace: each stage's expression once, where plain substitution computed Sxx
// three times and Sxy twice per point.
//
// Lets are not lifted out of a reduction (its body runs in loops of its own): one inside a
// reduction stays where it is, computed at each of the reduction's points.
#pragma once
#include <tuple>
#include <type_traits>
#include <utility>

#include "../expr/let.hpp"
#include "../expr/ops.hpp"
#include "../expr/reduce.hpp"

namespace loom::detail {

template <class K>
inline constexpr bool is_shared_key = false;
template <class Id>
inline constexpr bool is_shared_key<shared_key<Id>> = true;

/// The marker for a read of stage Id at the reader's point: Id's expression, bound once.
template <class Id, Expr Value>
auto shared_read(const Value& v) {
  using K = shared_key<Id>;
  return let_node<K, Value, let_ref<K, value_t<Value>>>(v, {});
}

template <class K, class V>
struct binding {
  V value;
};

/// A tree and the bindings taken out of it (an aggregate: std::pair would ask whether an access
/// is assignable, and an access's operator= makes a definition).
template <class T, class B>
struct lifted {
  T tree;
  B binds;
};
template <class T, class B>
lifted(T, B) -> lifted<T, B>;

/// Takes the shared lets out of a tree: returns the tree with each replaced by its body, and the
/// bindings in an order where a value reads only keys bound before it.
struct share_walk {
  template <class N>
  static auto apply(const N& n) {
    // Leaves, reductions and local lets: nothing to lift.
    return lifted{n, std::tuple<>{}};
  }
  template <class Op, class A>
  static auto apply(const unary<Op, A>& n) {
    auto [a, ba] = apply(n.a);
    return lifted{unary<Op, decltype(a)>(a), ba};
  }
  template <class To, class A>
  static auto apply(const cast_node<To, A>& n) {
    auto [a, ba] = apply(n.a);
    return lifted{cast_node<To, decltype(a)>(a), ba};
  }
  template <class Op, class A, class B>
  static auto apply(const binary<Op, A, B>& n) {
    auto [a, ba] = apply(n.a);
    auto [b, bb] = apply(n.b);
    return lifted{binary<Op, decltype(a), decltype(b)>(a, b), std::tuple_cat(ba, bb)};
  }
  template <class Op, class A, class B>
  static auto apply(const compare<Op, A, B>& n) {
    auto [a, ba] = apply(n.a);
    auto [b, bb] = apply(n.b);
    return lifted{compare<Op, decltype(a), decltype(b)>(a, b), std::tuple_cat(ba, bb)};
  }
  template <class C, class A, class B>
  static auto apply(const select_node<C, A, B>& n) {
    auto [c, bc] = apply(n.cond);
    auto [a, ba] = apply(n.a);
    auto [b, bb] = apply(n.b);
    return lifted{select_node<decltype(c), decltype(a), decltype(b)>(c, a, b), std::tuple_cat(bc, ba, bb)};
  }
  template <class A, class B, class C>
  static auto apply(const fma_node<A, B, C>& n) {
    auto [a, ba] = apply(n.a);
    auto [b, bb] = apply(n.b);
    auto [c, bc] = apply(n.c3);
    return lifted{fma_node<decltype(a), decltype(b), decltype(c)>(a, b, c), std::tuple_cat(ba, bb, bc)};
  }
  template <class K, class V, class B>
    requires is_shared_key<K>
  static auto apply(const let_node<K, V, B>& n) {
    auto [v, bv] = apply(n.value);
    auto [b, bb] = apply(n.body);
    return lifted{b, std::tuple_cat(bv, std::make_tuple(binding<K, decltype(v)>{v}), bb)};
  }
};

template <class B>
struct binding_key;
template <class K, class V>
struct binding_key<binding<K, V>> {
  using key = K;
};

/// let K1 = v1 in let K2 = v2 in ... tree, the first binding of each key only.
template <class Tree, class... Seen>
auto bind_all(const Tree& t, std::tuple<>, meta::list<Seen...>*) {
  return t;
}
template <class Tree, class First, class... Rest, class... Seen>
auto bind_all(const Tree& t, const std::tuple<First, Rest...>& bs, meta::list<Seen...>*) {
  using K = typename binding_key<First>::key;
  auto rest = std::apply([](const First&, const Rest&... r) { return std::make_tuple(r...); }, bs);
  if constexpr ((std::is_same_v<K, Seen> || ...)) {
    return bind_all(t, rest, static_cast<meta::list<Seen...>*>(nullptr));
  } else {
    auto inner = bind_all(t, rest, static_cast<meta::list<Seen..., K>*>(nullptr));
    return let_node<K, decltype(std::get<0>(bs).value), decltype(inner)>(std::get<0>(bs).value, inner);
  }
}

/// The tree with its shared lets lifted to the root, one per key.
template <Expr E>
auto share(const E& e) {
  auto [t, bs] = share_walk::apply(e);
  return bind_all(t, bs, static_cast<meta::list<>*>(nullptr));
}

}  // namespace loom::detail
