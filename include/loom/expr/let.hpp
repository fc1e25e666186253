// SPDX-License-Identifier: MIT
// loom/expr/let.hpp — a value computed once per point and read at several places of a tree: the
// common subexpressions a pipeline creates when it inlines a stage that is read more than once at
// the same point (`Ixx(y, x) = Ix(y, x) * Ix(y, x)`, `det - k * trace * trace`). Without it,
// every read would compute the stage's whole expression again: accesses bind their own base
// pointers, so the compiler cannot see that two reads are the same load.
//
//   let_node<Key, Value, Body>   evaluates Value, then Body with the result bound to Key
//   let_ref<Key, T>              the bound value (only inside the Body of its let_node)
//
// Keys: shared_key<Id> names stage Id read at the reader's own point (its variables, no offsets):
// two such lets anywhere in one right side are the same value, so a pipeline merges them into
// one at the root (pipeline/share.hpp). local_key<K> is a let that a substitution moved to another
// point: still a let for its own body, never merged.
#pragma once
#include <ostream>
#include <string_view>
#include <type_traits>
#include <utility>

#include "access.hpp"
#include "node.hpp"

namespace loom {

/// Stage Id read at the reader's point.
template <class Id>
struct shared_key {
  static constexpr std::string_view name() { return Id::name(); }
};
/// A let moved to another point by a substitution: scoped to its own body.
template <class K>
struct local_key {
  static constexpr std::string_view name() { return K::name(); }
};

namespace detail {
/// What a let_context shows of a block row (access.hpp's BlockRow: the row's variable, its
/// number, the block's first row), so accesses inside a let address rows as they would outside.
template <class C, bool Row = BlockRow<C>>
struct let_row_face {
  LOOM_INLINE explicit let_row_face(const C&) {}
};
template <class C>
struct let_row_face<C, true> {
  using var = typename C::var;
  static constexpr index_t row = C::row;
  const std::remove_cvref_t<decltype(std::declval<const C&>().first)>& first;
  LOOM_INLINE explicit let_row_face(const C& c) : first(c.first) {}
};
}  // namespace detail

/// An evaluation context C (a loop state, a row of a block, an epilogue's state) with the value of
/// let Key bound: coordinates, extents, the live lanes and a scheduled reduction's value are C's.
/// It refers to C rather than copying it (a copy per let and per vector cost a quarter of a
/// Harris loop in stack traffic). An unscheduled reduction copies its context to set its own
/// variables: a let whose body holds one copies C (ByValue).
template <class C, class Key, class V, bool ByValue = false>
struct let_context : detail::let_row_face<C> {
  static constexpr bool has_reduction_value = C::has_reduction_value;
  using rebased_vars = loom::rebased_vars<C>;
  std::conditional_t<ByValue, C, const C&> outer;
  V bound;
  index_t active;
  LOOM_INLINE let_context(const C& c, const V& v) : detail::let_row_face<C>(c), outer(c), bound(v), active(c.active) {}
  template <class W>
  LOOM_INLINE index_t coord() const { return outer.template coord<W>(); }
  template <class W>
  LOOM_INLINE index_t extent() const { return outer.template extent<W>(); }
  template <class W>
  LOOM_INLINE void set(index_t t)
    requires ByValue
  {
    outer.template set<W>(t);
  }
  LOOM_INLINE decltype(auto) reduction_value() const
    requires C::has_reduction_value
  {
    return outer.reduction_value();
  }
  template <class K>
  LOOM_INLINE const auto& let_value() const {
    if constexpr (std::is_same_v<K, Key>) return bound;
    else return outer.template let_value<K>();
  }
};

template <class Key, Expr Value, Expr Body>
struct let_node : expr_node {
  using key = Key;
  using value_expr = Value;
  using body_expr = Body;
  using value_type = value_t<Body>;
  // A let_ref lists no variables: the let's lists hold its value's (a ref is only ever inside
  // the body of its own let, and no reduction lies between them).
  using vars = meta::unique<meta::concat<typename Value::vars, typename Body::vars>>;
  using reductions = meta::concat<typename Value::reductions, typename Body::reductions>;
  using accesses = meta::concat<typename Value::accesses, typename Body::accesses>;
  Value value;
  Body body;
  static constexpr bool copies = Body::reductions::size > 0;
  let_node(const Value& v, const Body& b) : value(v), body(b) {}

  template <class C>
  LOOM_INLINE value_type eval(const C& c) const {
    const auto v = value.eval(c);
    return body.eval(let_context<C, Key, decltype(v), copies>(c, v));
  }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const {
    const auto v = value.template eval_v<VM>(c);
    return body.template eval_v<VM>(let_context<C, Key, decltype(v), copies>(c, v));
  }
  template <class F> LOOM_INLINE void for_each_access(F&& f) { value.for_each_access(f); body.for_each_access(f); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) const { value.for_each_access(f); body.for_each_access(f); }
  void print(std::ostream& os) const {
    os << "let " << Key::name() << " = ";
    value.print(os);
    os << " in ";
    body.print(os);
  }
};

template <class Key, class T>
struct let_ref : expr_node {
  using key = Key;
  using value_type = T;
  using vars = meta::list<>;
  using reductions = meta::list<>;
  using accesses = meta::list<>;
  template <class C>
  LOOM_INLINE T eval(const C& c) const { return c.template let_value<Key>(); }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const { return c.template let_value<Key>(); }
  template <class F> LOOM_INLINE void for_each_access(F&&) {}
  template <class F> LOOM_INLINE void for_each_access(F&&) const {}
  void print(std::ostream& os) const { os << Key::name(); }
};

template <class N>
inline constexpr bool is_let = false;
template <class K, class V, class B>
inline constexpr bool is_let<let_node<K, V, B>> = true;
template <class N>
inline constexpr bool is_let_ref = false;
template <class K, class T>
inline constexpr bool is_let_ref<let_ref<K, T>> = true;

}  // namespace loom
