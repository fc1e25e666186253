// SPDX-License-Identifier: MIT
// loom/schedule/nest.hpp — applies a schedule's directives to a definition's loops at compile
// time and checks the result. The outcome, nest<Loops, Splits>, is what the emitter walks and
// print_loop_nest prints: a list of loops (outermost first) and the splits that define them.
#pragma once
#include <algorithm>
#include <array>

#include "../core/meta.hpp"
#include "../simd/arch.hpp"
#include "directives.hpp"

namespace loom {

enum class loop_kind { serial, unrolled, vectorized, parallel };

template <class Id, loop_kind K = loop_kind::serial, index_t MinPoints = 0>
struct loop_desc {
  using id = Id;
  static constexpr loop_kind kind = K;
  static constexpr index_t min_points = MinPoints;
};

/// Loop P split by F: creates outer_loop<P> and inner_loop<P>.
template <class P, index_t F, class Tail>
struct split_desc {
  using parent = P;
  static constexpr index_t factor = F;
  using tail_type = Tail;
};

template <class Loops, class Splits>
struct nest {
  using loops = Loops;
  using splits = Splits;
};

namespace sched {

template <class L>
struct ids_of;
template <class... D>
struct ids_of<meta::list<D...>> {
  using type = meta::list<typename D::id...>;
};
template <class L>
using ids = typename ids_of<L>::type;

template <class Splits, class P>
struct find_split {
  using type = void;
};
template <class S, class... Ss, class P>
struct find_split<meta::list<S, Ss...>, P> {
  using type = std::conditional_t<std::is_same_v<typename S::parent, P>, S, typename find_split<meta::list<Ss...>, P>::type>;
};
template <class Splits, class P>
using split_of = typename find_split<Splits, P>::type;

template <class Splits, class P>
inline constexpr bool is_split = !std::is_void_v<split_of<Splits, P>>;

template <class Splits>
struct parents_of;
template <class... S>
struct parents_of<meta::list<S...>> {
  using type = meta::list<typename S::parent...>;
};
/// Where the run-time range of inner_loop<P> is kept.
template <class Splits, class P>
inline constexpr std::size_t split_slot = meta::index_of<typename parents_of<Splits>::type, P>;

/// Y descends from Z: Y is Z, or a loop split or fused from one that descends from Z.
template <class Y, class Z>
struct descends : std::is_same<Y, Z> {};
template <class Y, class Z>
struct descends<outer_loop<Y>, Z> : std::bool_constant<std::is_same_v<outer_loop<Y>, Z> || descends<Y, Z>::value> {};
template <class Y, class Z>
struct descends<inner_loop<Y>, Z> : std::bool_constant<std::is_same_v<inner_loop<Y>, Z> || descends<Y, Z>::value> {};
template <class A, class B, class Z>
struct descends<fused_loop<A, B>, Z>
    : std::bool_constant<std::is_same_v<fused_loop<A, B>, Z> || descends<A, Z>::value || descends<B, Z>::value> {};

/// The variables a loop iterates (two for a fused loop).
template <class Y>
struct roots {
  using type = meta::list<Y>;
};
template <class Y>
struct roots<outer_loop<Y>> : roots<Y> {};
template <class Y>
struct roots<inner_loop<Y>> : roots<Y> {};
template <class A, class B>
struct roots<fused_loop<A, B>> {
  using type = meta::concat<typename roots<A>::type, typename roots<B>::type>;
};
template <class Y>
using roots_t = typename roots<Y>::type;

template <class Y, class Vars>
inline constexpr bool all_roots_in = []<class... R>(meta::list<R...>*) {
  return (meta::contains<Vars, R> && ...);
}(static_cast<roots_t<Y>*>(nullptr));

/// Loops whose iteration sets a variable's value (a variable, or the inner loop of a split of
/// one): only these can become vector lanes, which are consecutive values of the variable.
template <class Y>
inline constexpr bool sets_coordinate = is_var<Y>;
template <class Y>
inline constexpr bool sets_coordinate<inner_loop<Y>> = sets_coordinate<Y>;

template <class Y>
inline constexpr bool is_inner = false;
template <class Y>
inline constexpr bool is_inner<inner_loop<Y>> = true;
template <class Y>
struct inner_parent;
template <class Y>
struct inner_parent<inner_loop<Y>> {
  using type = Y;
};

/// Loops whose trip count the compiler knows: inner<P>, and outer<P> of such a P.
template <class Y>
inline constexpr bool constant_trip = false;
template <class Y>
inline constexpr bool constant_trip<inner_loop<Y>> = true;
template <class Y>
inline constexpr bool constant_trip<outer_loop<Y>> = constant_trip<Y>;

template <class Y>
struct outer_parent;
template <class Y>
struct outer_parent<outer_loop<Y>> {
  using type = Y;
};

template <class Loops, class L, loop_kind K, index_t G, bool Ok = meta::contains<ids<Loops>, L>>
struct set_kind {
  using type = Loops;
};
template <class Loops, class L, loop_kind K, index_t G>
struct set_kind<Loops, L, K, G, true> {
  using type = meta::set_at<Loops, meta::index_of<ids<Loops>, L>, loop_desc<L, K, G>>;
};

template <class L>
struct unknown_loop_error {
  static constexpr bool value = false;
};

// ---- split ----
template <class N, class L, index_t F, class Tail, bool Ok>
struct split_result {
  using type = N;
};
template <class Loops, class Splits, class L, index_t F, class Tail>
struct split_result<nest<Loops, Splits>, L, F, Tail, true> {
  static constexpr std::size_t pos = meta::index_of<ids<Loops>, L>;
  using d = meta::at<Loops, pos>;
  using type = nest<meta::replace_at<Loops, pos, loop_desc<outer_loop<L>, d::kind, d::min_points>, loop_desc<inner_loop<L>>>,
                    meta::concat<Splits, meta::list<split_desc<L, F, Tail>>>>;
};
template <class N, class L, index_t F, class Tail>
struct do_split {
  static constexpr bool already = is_split<typename N::splits, L>;
  static constexpr bool present = meta::contains<ids<typename N::loops>, L>;
  static_assert(!already, "loom::split/tile/unroll/vectorize: this loop was already split (split its outer<> or inner<> loop instead)");
  static_assert(already || present || unknown_loop_error<L>::value,
                "loom::split/tile/unroll/vectorize: the loop named is not a loop of this definition");
  static_assert(F >= 1, "loom::split/tile/unroll: the factor must be at least 1");
  using type = typename split_result<N, L, F, Tail, !already && present && F >= 1>::type;
};

template <class N, class D, class T>
struct apply;

template <class N, auto V, index_t F, class Tail, class T>
struct apply<N, split<V, F, Tail>, T> {
  static_assert(!std::is_same_v<Tail, tail::masked>, "loom::split: tail::masked applies to vectorized loops only (use vectorize<V, W, tail::masked>)");
  using type = typename do_split<N, loop_t<V>, F, Tail>::type;
};

template <class N, auto V1, auto V2, index_t F1, index_t F2, class Tail, class T>
struct apply<N, tile<V1, V2, F1, F2, Tail>, T> {
  using L1 = loop_t<V1>;
  using L2 = loop_t<V2>;
  static_assert(!std::is_same_v<L1, L2>, "loom::tile<V1, V2, ...>: V1 and V2 must be different loops");
  using N2 = typename do_split<typename do_split<N, L1, F1, Tail>::type, L2, F2, Tail>::type;
  using Loops = typename N2::loops;
  using O1 = outer_loop<L1>;
  using O2 = outer_loop<L2>;
  using I1 = inner_loop<L1>;
  using I2 = inner_loop<L2>;
  static constexpr bool ok = meta::contains<ids<Loops>, O1> && meta::contains<ids<Loops>, O2>;
  template <class X>
  static constexpr std::size_t p = meta::index_of<ids<Loops>, X>;
  struct keep_tile {
    template <class D>
    struct pred : std::bool_constant<!std::is_same_v<typename D::id, O1> && !std::is_same_v<typename D::id, O2> &&
                                     !std::is_same_v<typename D::id, I1> && !std::is_same_v<typename D::id, I2>> {};
  };
  static constexpr std::size_t first = ok ? std::min(p<O1>, p<O2>) : 0;
  using rest = meta::filter<Loops, keep_tile::template pred>;
  using tiled = std::conditional_t<ok,
                                   meta::concat<meta::take_front<rest, std::min(first, rest::size)>,
                                                meta::list<meta::at<meta::concat<Loops, meta::list<void>>, p<O1>>,
                                                           meta::at<meta::concat<Loops, meta::list<void>>, p<O2>>,
                                                           meta::at<meta::concat<Loops, meta::list<void>>, p<I1>>,
                                                           meta::at<meta::concat<Loops, meta::list<void>>, p<I2>>>,
                                                meta::drop_front<rest, std::min(first, rest::size)>>,
                                   Loops>;
  using type = nest<tiled, typename N2::splits>;
};

template <class N, auto... Vs, class T>
struct apply<N, reorder<Vs...>, T> {
  using Loops = typename N::loops;
  using I = ids<Loops>;
  using named = meta::list<loop_t<Vs>...>;
  static_assert(((meta::contains<I, loop_t<Vs>> || unknown_loop_error<loop_t<Vs>>::value) && ...),
                "loom::reorder: names a loop that is not a loop of this definition (after the splits before it)");
  static_assert(meta::unique<named>::size == named::size, "loom::reorder: names the same loop twice");
  static constexpr bool ok = (meta::contains<I, loop_t<Vs>> && ...) && meta::unique<named>::size == named::size;
  static constexpr auto perm = [] {
    std::array<std::size_t, Loops::size> out{};
    for (std::size_t q = 0; q < Loops::size; ++q) out[q] = q;
    if constexpr (ok) {
      std::array<std::size_t, sizeof...(Vs)> pos{meta::index_of<I, loop_t<Vs>>...};
      auto sorted = pos;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t q = 0; q < pos.size(); ++q) out[sorted[q]] = pos[q];
    }
    return out;
  }();
  using type = nest<decltype([]<std::size_t... Q>(std::index_sequence<Q...>) {
                      return meta::list<meta::at<Loops, perm[Q]>...>{};
                    }(std::make_index_sequence<Loops::size>{})),
                    typename N::splits>;
};

template <class N, auto V1, auto V2, class T>
struct apply<N, fuse<V1, V2>, T> {
  using L1 = loop_t<V1>;
  using L2 = loop_t<V2>;
  using I = ids<typename N::loops>;
  static_assert(meta::contains<I, L1> || unknown_loop_error<L1>::value, "loom::fuse<V1, V2>: V1 is not a loop of this definition");
  static_assert(meta::contains<I, L2> || unknown_loop_error<L2>::value, "loom::fuse<V1, V2>: V2 is not a loop of this definition");
  static constexpr std::size_t p1 = meta::index_of<I, L1>, p2 = meta::index_of<I, L2>;
  static constexpr bool adjacent = p2 == p1 + 1 && p2 < I::size;
  static_assert(!(meta::contains<I, L1> && meta::contains<I, L2>) || adjacent,
                "loom::fuse<V1, V2>: V2 must be the loop immediately inside V1 (reorder them first)");
  using type = std::conditional_t<adjacent,
                                  nest<meta::replace_at<meta::remove<typename N::loops, meta::at<meta::concat<typename N::loops, meta::list<void>>, p2>>, p1, loop_desc<fused_loop<L1, L2>>>,
                                       typename N::splits>,
                                  N>;
};

template <class N, auto V, index_t F, class Tail, class T>
struct apply<N, unroll<V, F, Tail>, T> {
  using L = loop_t<V>;
  static_assert(F != 0 || constant_trip<L>,
                "loom::unroll<V>: without a factor, V must have a constant trip count (the inner<> loop of a split, or "
                "the outer<> loop of a split inner<> loop); write unroll<V, F>");
  static_assert(!std::is_same_v<Tail, tail::masked>, "loom::unroll: tail::masked applies to vectorized loops only");
  using split_nest = std::conditional_t<F == 0, N, typename do_split<N, L, (F == 0 ? 1 : F), Tail>::type>;
  using target = std::conditional_t<F == 0, L, inner_loop<L>>;
  using type = nest<typename set_kind<typename split_nest::loops, target, loop_kind::unrolled, 0>::type, typename split_nest::splits>;
};

template <class Splits, class P, class Tail>
struct retail;
template <class... S, class P, class Tail>
struct retail<meta::list<S...>, P, Tail> {
  using type = meta::list<std::conditional_t<std::is_same_v<typename S::parent, P>, split_desc<P, S::factor, Tail>, S>...>;
};

template <class N, class L, index_t W, class Tail, bool FitsExisting>
struct vectorize_split {
  using sn = typename do_split<N, L, W, Tail>::type;
  using type = nest<typename set_kind<typename sn::loops, inner_loop<L>, loop_kind::vectorized, 0>::type, typename sn::splits>;
};
template <class N, class L, index_t W, class Tail>
struct vectorize_split<N, L, W, Tail, true> {
  using P = typename inner_parent<L>::type;
  using splits = std::conditional_t<std::is_same_v<Tail, tail::automatic>, typename N::splits,
                                    typename retail<typename N::splits, P, Tail>::type>;
  using type = nest<typename set_kind<typename N::loops, L, loop_kind::vectorized, 0>::type, splits>;
};

template <class N, class L, index_t W>
inline constexpr bool fits_existing = [] {
  if constexpr (is_inner<L>) {
    using S = split_of<typename N::splits, typename inner_parent<L>::type>;
    if constexpr (!std::is_void_v<S>) return S::factor == W;
  }
  return false;
}();

template <class N, auto V, index_t W, class Tail, class T>
struct apply<N, vectorize<V, W, Tail>, T> {
  using L = loop_t<V>;
  static constexpr index_t width = W == native ? index_t(simd::native_width<T>) : W;
  static_assert(simd::width_available<T, std::size_t(width)>,
                "loom::vectorize<V, W>: no enabled SIMD target has W lanes of this element type "
                "(use loom::native, or a width of 16/32/64 bytes that -march enables)");
  static_assert(sets_coordinate<L> || unknown_loop_error<L>::value,
                "loom::vectorize<V>: V must be a variable or an inner<> loop of one (vector lanes are consecutive "
                "values of a variable; outer<> and fused loops cannot be lanes)");
  using type = typename vectorize_split<N, L, width, Tail, fits_existing<N, L, width>>::type;
};

template <class N, auto V, index_t G, class T>
struct apply<N, parallel<V, G>, T> {
  using L = loop_t<V>;
  static_assert(meta::contains<ids<typename N::loops>, L> || unknown_loop_error<L>::value,
                "loom::parallel<V>: V is not a loop of this definition");
  using type = nest<typename set_kind<typename N::loops, L, loop_kind::parallel, G>::type, typename N::splits>;
};

/// stream_stores changes how the leaf stores, not the loops (lower/plan.hpp checks where it applies).
template <class N, index_t B, class T>
struct apply<N, stream_stores<B>, T> {
  using type = N;
};

/// prefetch adds reads ahead at the leaf, not loops (lower/plan.hpp checks the variable).
template <class N, auto V, index_t D, index_t B, class T>
struct apply<N, prefetch<V, D, B>, T> {
  using type = N;
};

/// interleave changes the order of a strip's vectors, not the loops.
template <class N, int P, index_t B, class T>
struct apply<N, interleave<P, B>, T> {
  using type = N;
};

/// large_blocks changes a split's block length at run time, not the loops (lower/plan.hpp checks
/// the rest of where it applies).
template <class N, auto V, index_t F, index_t B, class T>
struct apply<N, large_blocks<V, F, B>, T> {
  static_assert(is_split<typename N::splits, loop_t<V>>,
                "loom::large_blocks<V, F>: V is not split at this point of the schedule; split<V, F0> it first (F0: the "
                "block length of runs below the threshold)");
  using type = N;
};

template <class N, class S, class T>
struct apply_all;
template <class N, class T>
struct apply_all<N, schedule<>, T> {
  using type = N;
};
template <class N, class D, class... Ds, class T>
struct apply_all<N, schedule<D, Ds...>, T> {
  using type = typename apply_all<typename apply<N, D, T>::type, schedule<Ds...>, T>::type;
};

template <class Vars>
struct initial;
template <class... V>
struct initial<meta::list<V...>> {
  using type = nest<meta::list<loop_desc<V>...>, meta::list<>>;
};

}  // namespace sched
}  // namespace loom
