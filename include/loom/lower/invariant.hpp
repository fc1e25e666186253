// SPDX-License-Identifier: MIT
// loom/lower/invariant.hpp — the values a strip computes once. In a strip (the vector loop of a
// row: emit.hpp) the variables of its outer loops are fixed, so every part of the right side that
// reads only those is the same at every vector: `sqrt(var(i) + eps)` in a row's
// `(X(i, j) - mean(i)) / sqrt(var(i) + eps)`. The strip evaluates each such part once, as a
// scalar, and its vectors read the result as a constant. The compiler cannot do this itself: the
// part reads memory that the row's stores may overwrite, as far as it can tell.
//
// A part stays in the tree when it holds a reduction (evaluated where the nest schedules it), is a
// truth value (a comparison's lanes are masks), or reads a let whose value varies along the strip.
// Scalar and vector evaluation of every op give the same values (ops.hpp), so this changes no
// result.
#pragma once
#include <string>
#include <type_traits>
#include <vector>

#include "../core/message.hpp"
#include "../core/meta.hpp"
#include "../expr/let.hpp"
#include "../expr/operands.hpp"
#include "../expr/ops.hpp"
#include "../expr/reduce.hpp"

namespace loom::detail {
/// Whether N reads a let whose value is not one of Keys (a let inside N binds its own key).
template <class N, class Keys>
struct reads_let_outside : std::false_type {};
template <class K, class T, class Keys>
struct reads_let_outside<let_ref<K, T>, Keys> : std::bool_constant<!meta::contains<Keys, K>> {};
template <class K, class V, class B, class Keys>
struct reads_let_outside<let_node<K, V, B>, Keys>
    : std::bool_constant<reads_let_outside<V, Keys>::value || reads_let_outside<B, meta::concat<Keys, meta::list<K>>>::value> {};
template <class Op, class RV, class E, class Keys>
struct reads_let_outside<reduce_node<Op, RV, E>, Keys> : reads_let_outside<E, Keys> {};
template <Operation N, class Keys>
struct reads_let_outside<N, Keys>
    : std::bool_constant<[]<class... A>(meta::list<A...>*) { return (reads_let_outside<A, Keys>::value || ...); }(
          static_cast<typename operation<N>::operands*>(nullptr))> {};

template <class L, class Of>
inline constexpr bool all_in = false;
template <class... V, class Of>
inline constexpr bool all_in<meta::list<V...>, Of> = (meta::contains<Of, V> && ... && true);
}  // namespace loom::detail

namespace loom::lower {

/// Whether node N has one value while the variables of Fixed do, the lets of Keys bound.
template <class N, class Fixed, class Keys>
inline constexpr bool strip_invariant = detail::all_in<typename N::vars, Fixed> && N::reductions::size == 0 &&
                                        !std::is_same_v<value_t<N>, bool> && !detail::reads_let_outside<N, Keys>::value;
/// Whether computing N once saves work: an operation does; a single read or a tree of constants
/// and let values does not (a vector broadcasts a read from memory in one instruction, and holding
/// it instead measured slower on short rows: docs/tuning.md#strip-invariants).
template <class N>
inline constexpr bool does_work = !std::is_same_v<typename N::accesses, meta::list<N>> && !(N::accesses::size == 0 && N::vars::size == 0);

/// The tree with every maximal strip-invariant part replaced by its value at context c (a state
/// whose variables of Fixed are the strip's). Keys: the lets (around the part) whose value is
/// already fixed, bound in c.
template <class Fixed, class Keys = meta::list<>>
struct hoist_invariants {
  template <class N, class C>
  static LOOM_INLINE auto apply(const N& n, const C& c) {
    if constexpr (does_work<N> && strip_invariant<N, Fixed, Keys>) return constant<value_t<N>>(n.eval(c));
    else return rebuild(n, c);
  }

  // Leaves (constants, accesses, boundary reads, let_refs) and reductions stay as they are.
  template <class N, class C>
  static LOOM_INLINE N rebuild(const N& n, const C&) { return n; }
  template <Operation N, class C>
  static LOOM_INLINE auto rebuild(const N& n, const C& c) {
    return operation<N>::map(n, [&](const auto& x) LOOM_LAMBDA_INLINE { return apply(x, c); });
  }
  /// A let whose value is fixed: its value once, and its body with the let bound (parts of the
  /// body that read it can then be fixed too). Otherwise both sides on their own.
  template <class K, class V, class B, class C>
  static LOOM_INLINE auto rebuild(const let_node<K, V, B>& n, const C& c) {
    if constexpr (strip_invariant<V, Fixed, Keys>) {
      const value_t<V> v = n.value.eval(c);
      auto body = hoist_invariants<Fixed, meta::concat<Keys, meta::list<K>>>::apply(n.body, let_context<C, K, value_t<V>>(c, v));
      return let_node<K, constant<value_t<V>>, decltype(body)>(constant<value_t<V>>(v), body);
    } else {
      auto value = apply(n.value, c);
      auto body = apply(n.body, c);
      return let_node<K, decltype(value), decltype(body)>(value, body);
    }
  }
};

/// The parts hoist_invariants<Fixed> computes once, printed (print_loop_nest lists them).
template <class Fixed, class Keys = meta::list<>>
struct invariant_parts {
  template <class N>
  static void collect(const N& n, std::vector<std::string>& out) {
    if constexpr (does_work<N> && strip_invariant<N, Fixed, Keys>) out.push_back(loom::detail::printed(n));
    else children(n, out);
  }
  template <class N>
  static void children(const N&, std::vector<std::string>&) {}
  template <Operation N>
  static void children(const N& n, std::vector<std::string>& out) {
    operation<N>::each(n, [&](const auto& x) { collect(x, out); });
  }
  template <class K, class V, class B>
  static void children(const let_node<K, V, B>& n, std::vector<std::string>& out) {
    if constexpr (strip_invariant<V, Fixed, Keys>) {
      out.push_back(loom::detail::cat(K::name(), " = ", loom::detail::printed(n.value)));
      invariant_parts<Fixed, meta::concat<Keys, meta::list<K>>>::collect(n.body, out);
    } else {
      collect(n.value, out), collect(n.body, out);
    }
  }
};

/// What a leaf outside any strip holds for its strip's right side: nothing.
struct no_strip_rhs {};

/// The type of a right side R in a strip that fixes Fixed.
template <class R, class Fixed, class C>
using strip_rhs_t = decltype(hoist_invariants<Fixed>::apply(std::declval<const R&>(), std::declval<const C&>()));

}  // namespace loom::lower
