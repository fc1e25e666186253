// SPDX-License-Identifier: MIT
// loom/pipeline/hoist.hpp — a reduction whose value does not depend on every variable around it is
// computed once per value of the variables it does depend on, not at every point: it becomes an
// implicit stage of its own (Halide computes a reduction at the loop it depends on; XLA fuses a
// reduce into its consumer). `Y(i, j) = exp(X(i, j) - maximum(k, X(i, k))) / sum(...)` is then the
// three-stage softmax, each row's maximum and sum computed once, inside Y's loop over rows.
#pragma once
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../expr/definition.hpp"
#include "../expr/equivalent.hpp"
#include "../expr/let.hpp"
#include "../expr/ops.hpp"
#include "../expr/reduce.hpp"
#include "func.hpp"

namespace loom {

namespace detail {

/// The printed name of an implicit stage: Letter then N (below 100) in decimal.
template <char Letter, std::size_t N>
struct stage_label {
  static_assert(N < 100, "loom internal: at most 100 implicit stages of one kind");
  static constexpr char text[] = {Letter, N >= 10 ? char('0' + N / 10) : char('0' + N), N >= 10 ? char('0' + N % 10) : '\0', '\0'};
  static constexpr std::string_view name() { return std::string_view(text); }
};

/// The identity of the N-th implicit stage of a definition (printed r0, r1, ...).
template <std::size_t N>
struct hoisted_id : stage_label<'r', N> {};

/// A reduction over one variable: its variable and body (one_variable false for anything else).
template <class R>
struct single_reduction {
  static constexpr bool one_variable = false;
};
template <class Op, class K, class B>
struct single_reduction<reduce_node<Op, meta::list<K>, B>> {
  static constexpr bool one_variable = true;
  using var = K;
  using body = B;
};

template <class K>
inline constexpr bool is_hoisted_key = false;
template <std::size_t N>
inline constexpr bool is_hoisted_key<hoisted_id<N>> = true;

/// Scope's variables that tree E's value depends on, in Scope's order.
template <class Scope, class E>
struct used_of;
template <class... S, class E>
struct used_of<meta::list<S...>, E> {
  using type = meta::concat<std::conditional_t<meta::contains<typename E::vars, S>, meta::list<S>, meta::list<>>...>;
};

/// Whether reduction R, where the variables Scope are live, depends on fewer of them than all:
/// its value is then the same for every value of the others, and it can be computed once per
/// value of those it uses.
template <class R, class Scope>
inline constexpr bool hoistable = used_of<Scope, typename R::body_type>::type::size < Scope::size;

/// Whether tree N holds a hoistable reduction (at any depth; a reduction's own variables join the
/// scope of its body).
template <class N, class Scope>
inline constexpr bool has_hoist = false;
template <class Op, class A, class Scope>
inline constexpr bool has_hoist<unary<Op, A>, Scope> = has_hoist<A, Scope>;
template <class To, class A, class Scope>
inline constexpr bool has_hoist<cast_node<To, A>, Scope> = has_hoist<A, Scope>;
template <class Op, class A, class B, class Scope>
inline constexpr bool has_hoist<binary<Op, A, B>, Scope> = has_hoist<A, Scope> || has_hoist<B, Scope>;
template <class Op, class A, class B, class Scope>
inline constexpr bool has_hoist<compare<Op, A, B>, Scope> = has_hoist<A, Scope> || has_hoist<B, Scope>;
template <class C, class A, class B, class Scope>
inline constexpr bool has_hoist<select_node<C, A, B>, Scope> = has_hoist<C, Scope> || has_hoist<A, Scope> || has_hoist<B, Scope>;
template <class A, class B, class C, class Scope>
inline constexpr bool has_hoist<fma_node<A, B, C>, Scope> = has_hoist<A, Scope> || has_hoist<B, Scope> || has_hoist<C, Scope>;
template <class K, class V, class B, class Scope>
inline constexpr bool has_hoist<let_node<K, V, B>, Scope> = has_hoist<V, Scope> || has_hoist<B, Scope>;
template <class Op, class... RV, class E, class Scope>
inline constexpr bool has_hoist<reduce_node<Op, meta::list<RV...>, E>, Scope> =
    has_hoist<E, meta::concat<Scope, meta::list<RV...>>> || hoistable<reduce_node<Op, meta::list<RV...>, E>, Scope>;

/// A hoistable reduction that computes what implicit stage M (a definition in Done) already
/// computes, up to the names of its variables (expr/equivalent.hpp): it reads stage M instead, if a
/// run finds the two read the same values (same_values).
template <std::size_t M, class R>
struct merged_reduction {
  R node;
};

/// The position in Done (a tuple of stage definitions) of the first stage whose reduction is
/// alpha-equivalent to R, indexed by the variables Used; Done's size if there is none.
template <class Done, class R, class Used>
struct equivalent_stage;
template <class... D, class R, class Used>
struct equivalent_stage<std::tuple<D...>, R, Used> {
  static constexpr std::size_t value = [] {
    constexpr bool match[] = {false, (alpha_equivalent<typename D::rhs_type, R> &&
                                      std::is_same_v<meta::list<typename D::lhs_type::index_types>, meta::list<Used>>)...};
    for (std::size_t m = 0; m < sizeof...(D); ++m)
      if (match[m + 1]) return m;
    return sizeof...(D);
  }();
};

/// Takes the innermost hoistable reduction out of a tree: returns the tree with an access to
/// stage Id (indexed by the variables the reduction uses) in its place, and the definition of
/// stage Id (that access = the reduction). With Merge, a reduction equivalent to one of the
/// stages in Done reads that stage instead, and the second part is a merged_reduction.
template <class Id, bool Merge, class Done>
struct hoist_one {
  const Done& done;

  template <class Scope, class Op, class A>
  auto apply(const unary<Op, A>& n) {
    auto [a, r] = apply<Scope>(n.a);
    return std::make_pair(unary<Op, decltype(a)>(a), r);
  }
  template <class Scope, class To, class A>
  auto apply(const cast_node<To, A>& n) {
    auto [a, r] = apply<Scope>(n.a);
    return std::make_pair(cast_node<To, decltype(a)>(a), r);
  }
  template <class Scope, class Op, class A, class B>
  auto apply(const binary<Op, A, B>& n) {
    if constexpr (has_hoist<A, Scope>) {
      auto [a, r] = apply<Scope>(n.a);
      return std::make_pair(binary<Op, decltype(a), B>(a, n.b), r);
    } else {
      auto [b, r] = apply<Scope>(n.b);
      return std::make_pair(binary<Op, A, decltype(b)>(n.a, b), r);
    }
  }
  template <class Scope, class Op, class A, class B>
  auto apply(const compare<Op, A, B>& n) {
    if constexpr (has_hoist<A, Scope>) {
      auto [a, r] = apply<Scope>(n.a);
      return std::make_pair(compare<Op, decltype(a), B>(a, n.b), r);
    } else {
      auto [b, r] = apply<Scope>(n.b);
      return std::make_pair(compare<Op, A, decltype(b)>(n.a, b), r);
    }
  }
  template <class Scope, class C, class A, class B>
  auto apply(const select_node<C, A, B>& n) {
    if constexpr (has_hoist<C, Scope>) {
      auto [c, r] = apply<Scope>(n.cond);
      return std::make_pair(select_node<decltype(c), A, B>(c, n.a, n.b), r);
    } else if constexpr (has_hoist<A, Scope>) {
      auto [a, r] = apply<Scope>(n.a);
      return std::make_pair(select_node<C, decltype(a), B>(n.cond, a, n.b), r);
    } else {
      auto [b, r] = apply<Scope>(n.b);
      return std::make_pair(select_node<C, A, decltype(b)>(n.cond, n.a, b), r);
    }
  }
  template <class Scope, class A, class B, class C>
  auto apply(const fma_node<A, B, C>& n) {
    if constexpr (has_hoist<A, Scope>) {
      auto [a, r] = apply<Scope>(n.a);
      return std::make_pair(fma_node<decltype(a), B, C>(a, n.b, n.c3), r);
    } else if constexpr (has_hoist<B, Scope>) {
      auto [b, r] = apply<Scope>(n.b);
      return std::make_pair(fma_node<A, decltype(b), C>(n.a, b, n.c3), r);
    } else {
      auto [c, r] = apply<Scope>(n.c3);
      return std::make_pair(fma_node<A, B, decltype(c)>(n.a, n.b, c), r);
    }
  }
  template <class Scope, class K, class V, class B>
  auto apply(const let_node<K, V, B>& n) {
    if constexpr (has_hoist<V, Scope>) {
      auto [v, r] = apply<Scope>(n.value);
      return std::make_pair(let_node<K, decltype(v), B>(v, n.body), r);
    } else {
      auto [b, r] = apply<Scope>(n.body);
      return std::make_pair(let_node<K, V, decltype(b)>(n.value, b), r);
    }
  }
  template <class Scope, class Op, class... RV, class E>
  auto apply(const reduce_node<Op, meta::list<RV...>, E>& n) {
    using inner = meta::concat<Scope, meta::list<RV...>>;
    if constexpr (has_hoist<E, inner>) {
      auto [b, r] = apply<inner>(n.body);
      return std::make_pair(reduce_node<Op, meta::list<RV...>, decltype(b)>(b), r);
    } else {
      // This one: its body holds nothing hoistable, and it depends on fewer variables than Scope.
      using used = typename used_of<Scope, E>::type;
      using R = reduce_node<Op, meta::list<RV...>, E>;
      return [&]<class... U>(meta::list<U...>*) {
        // (the unmerged variant does not search: no alpha_equivalent instantiations for it)
        constexpr std::size_t M = [] {
          if constexpr (Merge) return equivalent_stage<Done, R, meta::list<U...>>::value;
          else return std::tuple_size_v<Done>;
        }();
        if constexpr (M < std::tuple_size_v<Done>) {
          const auto& stage = std::get<M>(done);
          const access<std::remove_cvref_t<decltype(stage.lhs.view)>, U...> read(stage.lhs.view, U{}...);
          return std::make_pair(read, merged_reduction<M, R>{n});
        } else {
          using V = region_view<value_t<E>, sizeof...(U), layout_right, Id>;
          V v;
          v.set_name(Id::name());
          const access<V, U...> read(v, U{}...);
          return std::make_pair(read, definition<access<V, U...>, R, assign_set>(read, n));
        }
      }(static_cast<used*>(nullptr));
    }
  }
};

template <class T>
inline constexpr bool is_merged_reduction = false;
template <std::size_t M, class R>
inline constexpr bool is_merged_reduction<merged_reduction<M, R>> = true;

/// The definitions def becomes: its implicit stages in the order they must run (innermost
/// first), then def reading them (hoisted.defs); with Merge, a reduction equivalent to an earlier
/// stage reads it (hoisted.merged: the reductions that must read the same values as their stage).
template <class Defs, class Merged>
struct hoisted {
  Defs defs;
  Merged merged;
  /// Whether every merged reduction reads the same values as the stage it was merged into.
  bool merges_hold() const {
    return std::apply([&](const auto&... m) { return (holds(m) && ... && true); }, merged);
  }

 private:
  template <std::size_t M, class R>
  bool holds(const merged_reduction<M, R>& m) const {
    return same_values(std::get<M>(defs).rhs, m.node);
  }
};

template <bool Merge, std::size_t N = 0, class Def, class... Done, class... Merged>
auto hoist_all(const Def& def, const std::tuple<Done...>& done = {}, const std::tuple<Merged...>& merged = {}) {
  using Scope = typename Def::pure_vars;
  if constexpr (!has_hoist<typename Def::rhs_type, Scope>) {
    auto defs = std::tuple_cat(done, std::make_tuple(def));
    return hoisted<decltype(defs), std::tuple<Merged...>>{defs, merged};
  } else {
    auto [rhs, found] = hoist_one<hoisted_id<N>, Merge, std::tuple<Done...>>{done}.template apply<Scope>(def.rhs);
    using Main = definition<typename Def::lhs_type, decltype(rhs), typename Def::mode>;
    if constexpr (is_merged_reduction<decltype(found)>)
      return hoist_all<Merge, N>(Main(def.lhs, rhs), done, std::tuple_cat(merged, std::make_tuple(found)));
    else
      return hoist_all<Merge, N + 1>(Main(def.lhs, rhs), std::tuple_cat(done, std::make_tuple(found)), merged);
  }
}

template <class Def>
inline constexpr bool needs_hoisting = has_hoist<typename Def::rhs_type, typename Def::pure_vars>;

}  // namespace detail

}  // namespace loom
