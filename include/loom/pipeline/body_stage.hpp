// SPDX-License-Identifier: MIT
// loom/pipeline/body_stage.hpp — a reduction's body that the definition computes again at its own
// points becomes a stage, computed once. In a softmax written as one definition,
// `exp(X(i, j) - maximum(k, X(i, k))) / sum(k, exp(X(i, k) - maximum(l, X(i, l))))`, hoisting
// (pipeline/hoist.hpp) leaves r1(i) = sum(k, exp(X(i, k) - r0(i))) and the output
// exp(X(i, j) - r0(i)) / r1(i): each exponential computed twice, once in the sum's pass and once
// in the output's. The sum's body, with k named j, is the numerator; it becomes stage
// b1(i, j) = exp(X(i, j) - r0(i)), computed with the other implicit stages at the output's strips,
// and the sum reads b1(i, k), the output b1(i, j).
//
// Which subtree matches is decided on types (alpha_tree, the reduction's variable bound to one of
// the output's own that the reduction does not depend on); whether the matched parts read the
// same views and hold the same constants is known per run (same_values), so with_hoisted
// (pipeline/run.hpp) runs the shared form only when that holds.
#pragma once
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/region.hpp"
#include "../expr/access.hpp"
#include "../expr/boundary.hpp"
#include "../expr/definition.hpp"
#include "../expr/equivalent.hpp"
#include "../expr/let.hpp"
#include "../expr/operands.hpp"
#include "../expr/reduce.hpp"
#include "../expr/transform.hpp"
#include "hoist.hpp"

namespace loom::detail {

/// The stage holding the body of implicit stage N (printed b0, b1, ...).
template <std::size_t N>
struct body_id : stage_label<'b', N> {};
template <std::size_t N>
inline constexpr bool is_hoisted_key<body_id<N>> = true;
template <class K>
inline constexpr bool is_body_key = false;
template <std::size_t N>
inline constexpr bool is_body_key<body_id<N>> = true;

/// Whether tree N holds a subtree alpha-equivalent to B under Map, outside any reduction (a
/// reduction's body runs at points of its own).
template <class B, class Map, class N>
struct holds_match : std::bool_constant<alpha_tree<B, N, Map>::value> {};
template <class B, class Map, Operation N>
  requires(!alpha_tree<B, N, Map>::value)
struct holds_match<B, Map, N> {
  static constexpr bool value = []<class... A>(meta::list<A...>*) {
    return (holds_match<B, Map, A>::value || ...);
  }(static_cast<typename operation<N>::operands*>(nullptr));
};
template <class B, class Map, class K, class V, class Body>
struct holds_match<B, Map, let_node<K, V, Body>>
    : std::bool_constant<holds_match<B, Map, V>::value || holds_match<B, Map, Body>::value> {};

/// The tree with every subtree alpha-equivalent to `body` under Map read from `read` instead;
/// `same` stays true while each such subtree holds the same values as `body`.
template <class B, class Map, class Read>
struct replace_matches {
  const B& body;
  const Read& read;
  bool& same;

  template <class N>
  auto operator()(const N& n) const {
    if constexpr (alpha_tree<B, N, Map>::value) {
      same = same && same_values(body, n);
      return read;
    } else if constexpr (!holds_match<B, Map, N>::value) {
      return n;
    } else if constexpr (Operation<N>) {
      return operation<N>::map(n, *this);
    } else {
      return rebuild_let(n);
    }
  }

 private:
  template <class K, class V, class Body>
  auto rebuild_let(const let_node<K, V, Body>& n) const {
    auto v = (*this)(n.value);
    auto b = (*this)(n.body);
    return let_node<K, decltype(v), decltype(b)>(v, b);
  }
};

/// Whether a body costs more than a store and two loads to compute again: it holds a division, a
/// square root or a transcendental (exp, log, tanh, sigmoid). A cheap body (`X(i, k) * 2`) is
/// recomputed: materialized, the definition would load it instead of multiplying (Halide's
/// trade of redundant work against locality).
template <class Op>
inline constexpr bool costly_op = std::is_same_v<Op, op::exp> || std::is_same_v<Op, op::log> || std::is_same_v<Op, op::tanh> ||
                                  std::is_same_v<Op, op::sigmoid> || std::is_same_v<Op, op::sqrt> || std::is_same_v<Op, op::div>;
template <class N>
struct costly : std::false_type {};
template <Operation N>
struct costly<N> {
  static constexpr bool value = []<class... A>(meta::list<A...>*) {
    return (costly<A>::value || ...);
  }(static_cast<typename operation<N>::operands*>(nullptr));
};
template <class Op, class A>
struct costly<unary<Op, A>> : std::bool_constant<costly_op<Op> || costly<A>::value> {};
template <class Op, class A, class B>
struct costly<binary<Op, A, B>> : std::bool_constant<costly_op<Op> || costly<A>::value || costly<B>::value> {};
template <class K, class V, class B>
struct costly<let_node<K, V, B>> : std::bool_constant<costly<V>::value || costly<B>::value> {};

/// The first implicit stage Q (of the n before Main) whose rhs is a reduction over one variable
/// with a costly body (no reduction, no boundary read), and a variable V of
/// Main it does not depend on, such that Main computes the body with the reduction's variable
/// named V: found = true, Q and V.
template <class Defs>
struct body_search {
  static constexpr std::size_t n = std::tuple_size_v<Defs> - 1;
  using Main = std::tuple_element_t<n, Defs>;

  template <std::size_t Q, class V>
  static constexpr bool matches = [] {
    using H = std::tuple_element_t<Q, Defs>;
    using P = single_reduction<typename H::rhs_type>;
    if constexpr (!P::one_variable) {
      return false;
    } else {
      using B = typename P::body;
      using U = typename H::lhs_type::index_types;
      if constexpr (!costly<B>::value || B::reductions::size != 0 || has_boundary<B> || meta::contains<U, V> ||
                    !meta::contains<typename B::vars, typename P::var>) {
        return false;
      } else {
        return holds_match<B, bound_vars<meta::list<typename P::var>, meta::list<V>>, typename Main::rhs_type>::value;
      }
    }
  }();

  struct found_at {
    bool found = false;
    std::size_t q = 0, v = 0;
  };
  template <std::size_t Q>
  static constexpr found_at at_stage() {
    found_at f;
    [&]<class... V>(meta::list<V...>*) {
      ((f.found ? void() : matches<Q, V> ? void(f = {true, Q, meta::index_of<typename Main::pure_vars, V>}) : void()), ...);
    }(static_cast<typename Main::pure_vars*>(nullptr));
    return f;
  }
  static constexpr found_at where = []<std::size_t... Q>(std::index_sequence<Q...>) {
    found_at f;
    ((f.found ? void() : void(f = at_stage<Q>())), ...);
    return f;
  }(std::make_index_sequence<n>{});
};

/// The definitions with a shared body (defs), whether that changed them (rewrites), whether this
/// run may use them (holds), and the body's stage position (at).
template <class Defs, bool Rewrites, std::size_t At = 0>
struct bodies_shared {
  Defs defs;
  bool holds;
  static constexpr bool rewrites = Rewrites;
  static constexpr std::size_t at = At;
};

/// Defs (implicit stages, then the definition) with the first reduction body the definition
/// computes again made a stage of its own, placed just before that reduction's stage.
template <class... D>
auto share_body(const std::tuple<D...>& defs) {
  using Defs = std::tuple<D...>;
  using S = body_search<Defs>;
  if constexpr (!S::where.found) {
    return bodies_shared<Defs, false>{defs, true};
  } else {
    constexpr std::size_t Q = S::where.q;
    using Main = typename S::Main;
    using H = std::tuple_element_t<Q, Defs>;
    using V = meta::at<typename Main::pure_vars, S::where.v>;
    using K = typename single_reduction<typename H::rhs_type>::var;
    using B = typename single_reduction<typename H::rhs_type>::body;
    using Map = bound_vars<meta::list<K>, meta::list<V>>;
    // The stage's variables: the definition's own that the body uses (K named V), in its order.
    using U = typename H::lhs_type::index_types;
    using W = decltype([]<class... P>(meta::list<P...>*) {
      return meta::concat<meta::list<>, std::conditional_t<meta::contains<U, P> || std::is_same_v<P, V>, meta::list<P>, meta::list<>>...>{};
    }(static_cast<typename Main::pure_vars*>(nullptr)));
    const H& h = std::get<Q>(defs);
    const Main& main = std::get<S::n>(defs);
    const B& body = h.rhs.body;
    using T = value_t<B>;
    return [&]<class... Wv>(meta::list<Wv...>*) {
      using EV = region_view<T, sizeof...(Wv), layout_right, body_id<Q>>;
      EV ev;
      ev.set_name(body_id<Q>::name());
      // The stage: the body with K named V, at the definition's points.
      const access<EV, Wv...> at_points(ev, Wv{}...);
      auto stage_rhs = substitute(body, index_substitution<meta::list<K>, V>{std::tuple<V>{}});
      const definition<access<EV, Wv...>, decltype(stage_rhs), assign_set> stage(at_points, stage_rhs);
      // The reduction reads it with V named K again.
      using at_k = access<EV, std::conditional_t<std::is_same_v<Wv, V>, K, Wv>...>;
      const at_k read_k(ev, std::conditional_t<std::is_same_v<Wv, V>, K, Wv>{}...);
      using R = reduce_node<typename H::rhs_type::op_type, meta::list<K>, at_k>;
      const definition<typename H::lhs_type, R, typename H::mode> reduced(h.lhs, R(read_k));
      // The definition reads it at its own points.
      bool same = true;
      auto main_rhs = replace_matches<B, Map, access<EV, Wv...>>{body, at_points, same}(main.rhs);
      const definition<typename Main::lhs_type, decltype(main_rhs), typename Main::mode> shared_main(main.lhs, main_rhs);
      auto out = [&]<std::size_t... Before, std::size_t... After>(std::index_sequence<Before...>, std::index_sequence<After...>) {
        return std::make_tuple(std::get<Before>(defs)..., stage, reduced, std::get<Q + 1 + After>(defs)..., shared_main);
      }(std::make_index_sequence<Q>{}, std::make_index_sequence<S::n - Q - 1>{});
      return bodies_shared<decltype(out), true, Q>{out, same};
    }(static_cast<W*>(nullptr));
  }
}

}  // namespace loom::detail
