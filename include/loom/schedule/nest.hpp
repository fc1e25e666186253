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

/// The first reason a schedule cannot be emitted for a definition (none: it can). The schedule
/// layer and lower/plan.hpp only compute it; loom::run and print_loop_nest turn it into one
/// static_assert (run.hpp, detail::report_schedule) so that the message is the first error.
enum class schedule_problem {
  none,
  not_a_schedule,
  condition_unknown_variable,  // a specialize condition names a variable the definition lacks
  // a directive's own parameters, and applying the directives in order (this file)
  interleave_parts, prefetch_distance, large_blocks_factor, min_bytes_negative, split_twice, unknown_loop,
  split_factor, split_masked_tail, tile_same_loop, reorder_unknown_loop, reorder_twice, fuse_unknown_first,
  fuse_unknown_second, fuse_not_adjacent, unroll_variable_trip, unroll_masked_tail, vector_width_unavailable,
  vectorize_not_coordinate, parallel_unknown_loop, large_blocks_not_split, loop_kind_twice,
  // the whole nest (lower/plan.hpp)
  large_blocks_twice, fuse_pure_with_reduction, two_vectorized, two_parallel, parallel_reduction_variable,
  parallel_inside_vectorized, parallel_inside_reduction, outer_inside_inner, large_blocks_on_lanes,
  large_blocks_reduction, large_blocks_unrolled, output_accumulator_needs_bare_reduction,
  accumulate_extremum_into_output, accumulator_block_too_large, stream_stores_twice, stream_stores_output_read,
  stream_stores_not_vectorized, prefetch_twice, prefetch_unknown_variable, interleave_twice, shift_inwards_illegal,
  masked_tail_not_vectorized, unroll_too_large, interleave_not_vectorized,
  // the definition's reductions (lower/check.hpp)
  unscheduled_reduction_loop,
  // the entry point of a single definition (run.hpp)
  prefetch_stores_outside_pipeline
};

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

/// Whether loop L of Loops already has a kind other than K (vectorized, unrolled, parallel): a
/// later directive would silently undo an earlier one (`vectorize<j>, parallel<inner<j>>` turned
/// the lanes into a parallel loop of 8 iterations).
template <class Loops, class L, loop_kind K>
inline constexpr bool has_other_kind = [] {
  if constexpr (!meta::contains<ids<Loops>, L>) return false;
  else {
    constexpr loop_kind now = meta::at<Loops, meta::index_of<ids<Loops>, L>>::kind;
    return now != loop_kind::serial && now != K;
  }
}();

/// An apply<>'s problem, none for those that check nothing.
template <class A>
inline constexpr schedule_problem problem_of = [] {
  if constexpr (requires { A::problem; }) return A::problem;
  else return schedule_problem::none;
}();

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
  static constexpr schedule_problem problem = already    ? schedule_problem::split_twice
                                              : !present ? schedule_problem::unknown_loop
                                              : F < 1    ? schedule_problem::split_factor
                                                         : schedule_problem::none;
  using type = typename split_result<N, L, F, Tail, !already && present && F >= 1>::type;
};

template <class N, class D, class T>
struct apply;

template <class N, auto V, index_t F, class Tail, class T>
struct apply<N, split<V, F, Tail>, T> {
  using split = do_split<N, loop_t<V>, F, Tail>;
  static constexpr schedule_problem problem =
      std::is_same_v<Tail, tail::masked> ? schedule_problem::split_masked_tail : split::problem;
  using type = typename split::type;
};

template <class N, auto V1, auto V2, index_t F1, index_t F2, class Tail, class T>
struct apply<N, tile<V1, V2, F1, F2, Tail>, T> {
  using L1 = loop_t<V1>;
  using L2 = loop_t<V2>;
  using split1 = do_split<N, L1, F1, Tail>;
  using split2 = do_split<typename split1::type, L2, F2, Tail>;
  static constexpr schedule_problem problem = std::is_same_v<L1, L2>                       ? schedule_problem::tile_same_loop
                                              : split1::problem != schedule_problem::none ? split1::problem
                                                                                          : split2::problem;
  using N2 = typename split2::type;
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
  static constexpr bool known = (meta::contains<I, loop_t<Vs>> && ...);
  static constexpr bool distinct = meta::unique<named>::size == named::size;
  static constexpr schedule_problem problem = !known      ? schedule_problem::reorder_unknown_loop
                                              : !distinct ? schedule_problem::reorder_twice
                                                          : schedule_problem::none;
  static constexpr bool ok = known && distinct;
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

/// The nest with loops p1 and p2 = p1 + 1 fused (computed only when they are adjacent).
template <class N, class L1, class L2, std::size_t P1, std::size_t P2, bool Adjacent>
struct fuse_result {
  using type = N;
};
template <class N, class L1, class L2, std::size_t P1, std::size_t P2>
struct fuse_result<N, L1, L2, P1, P2, true> {
  using type = nest<meta::replace_at<meta::remove<typename N::loops, meta::at<typename N::loops, P2>>, P1, loop_desc<fused_loop<L1, L2>>>,
                    typename N::splits>;
};

template <class N, auto V1, auto V2, class T>
struct apply<N, fuse<V1, V2>, T> {
  using L1 = loop_t<V1>;
  using L2 = loop_t<V2>;
  using I = ids<typename N::loops>;
  static constexpr std::size_t p1 = meta::index_of<I, L1>, p2 = meta::index_of<I, L2>;
  static constexpr bool adjacent = p2 == p1 + 1 && p2 < I::size;
  static constexpr schedule_problem problem = !meta::contains<I, L1> ? schedule_problem::fuse_unknown_first
                                              : !meta::contains<I, L2> ? schedule_problem::fuse_unknown_second
                                              : !adjacent              ? schedule_problem::fuse_not_adjacent
                                                                       : schedule_problem::none;
  using type = typename fuse_result<N, L1, L2, p1, p2, adjacent>::type;
};

template <class N, auto V, index_t F, class Tail, class T>
struct apply<N, unroll<V, F, Tail>, T> {
  using L = loop_t<V>;
  using split = do_split<N, L, (F == 0 ? 1 : F), Tail>;
  static constexpr schedule_problem problem =
      F == 0 && !constant_trip<L>                                                  ? schedule_problem::unroll_variable_trip
      : std::is_same_v<Tail, tail::masked>                                         ? schedule_problem::unroll_masked_tail
      : F == 0 && has_other_kind<typename N::loops, L, loop_kind::unrolled>        ? schedule_problem::loop_kind_twice
      : F == 0                                                                     ? schedule_problem::none
                                                                                   : split::problem;
  using split_nest = std::conditional_t<F == 0, N, typename split::type>;
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
  static constexpr schedule_problem problem = do_split<N, L, W, Tail>::problem;
  using sn = typename do_split<N, L, W, Tail>::type;
  using type = nest<typename set_kind<typename sn::loops, inner_loop<L>, loop_kind::vectorized, 0>::type, typename sn::splits>;
};
template <class N, class L, index_t W, class Tail>
struct vectorize_split<N, L, W, Tail, true> {
  static constexpr schedule_problem problem =
      has_other_kind<typename N::loops, L, loop_kind::vectorized> ? schedule_problem::loop_kind_twice : schedule_problem::none;
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
  using split = vectorize_split<N, L, width, Tail, fits_existing<N, L, width>>;
  static constexpr schedule_problem problem = !simd::width_available<T, std::size_t(width)> ? schedule_problem::vector_width_unavailable
                                              : !sets_coordinate<L> ? schedule_problem::vectorize_not_coordinate
                                                                    : problem_of<split>;
  using type = typename split::type;
};

template <class N, auto V, index_t G, class T>
struct apply<N, parallel<V, G>, T> {
  using L = loop_t<V>;
  static constexpr schedule_problem problem = !meta::contains<ids<typename N::loops>, L>                      ? schedule_problem::parallel_unknown_loop
                                              : has_other_kind<typename N::loops, L, loop_kind::parallel> ? schedule_problem::loop_kind_twice
                                                                                                          : schedule_problem::none;
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

/// prefetch_stores adds requests at the leaf, not loops (lower/plan.hpp and the pipeline check
/// where it applies).
template <class N, auto C, class T>
struct apply<N, prefetch_stores<C>, T> {
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
  static constexpr schedule_problem problem =
      is_split<typename N::splits, loop_t<V>> ? schedule_problem::none : schedule_problem::large_blocks_not_split;
  using type = N;
};

/// short_extent_chunks changes a chunked reduction's chunk length at run time, not the loops.
template <class N, auto V, index_t F, index_t B, class T>
struct apply<N, detail::short_extent_chunks<V, F, B>, T> {
  using type = N;
};

/// A directive's own parameters, read from its template arguments without instantiating it (its
/// body's static_asserts would fire deep in the nest).
template <index_t B>
inline constexpr bool bad_min_bytes = B < 0 && B != beyond_cache;
template <class D>
inline constexpr schedule_problem parameter_problem = schedule_problem::none;
template <int P, index_t B>
inline constexpr schedule_problem parameter_problem<interleave<P, B>> =
    P < 1 || P > 16 ? schedule_problem::interleave_parts : bad_min_bytes<B> ? schedule_problem::min_bytes_negative : schedule_problem::none;
template <auto V, index_t D, index_t B>
inline constexpr schedule_problem parameter_problem<prefetch<V, D, B>> =
    D == 0 ? schedule_problem::prefetch_distance : bad_min_bytes<B> ? schedule_problem::min_bytes_negative : schedule_problem::none;
template <auto V, index_t F, index_t B>
inline constexpr schedule_problem parameter_problem<large_blocks<V, F, B>> =
    F < 1 ? schedule_problem::large_blocks_factor : bad_min_bytes<B> ? schedule_problem::min_bytes_negative : schedule_problem::none;
template <index_t B>
inline constexpr schedule_problem parameter_problem<stream_stores<B>> =
    bad_min_bytes<B> ? schedule_problem::min_bytes_negative : schedule_problem::none;

/// The nest after the schedule's directives, and the first problem met (the nest is the one
/// before the directive that has it: nothing after it is applied, so nothing more fails).
template <class N, class S, class T>
struct apply_all;
template <class N, schedule_problem P>
struct stopped {
  using type = N;
  static constexpr schedule_problem problem = P;
};
template <class N, class T>
struct apply_all<N, schedule<>, T> {
  using type = N;
  static constexpr schedule_problem problem = schedule_problem::none;
};
template <class N, class D, class... Ds, class T>
struct apply_all<N, schedule<D, Ds...>, T> {
  // Named, not instantiated, unless chosen: a directive with bad parameters is never applied.
  using step = std::conditional_t<parameter_problem<D> == schedule_problem::none, apply<N, D, T>,
                                  stopped<N, parameter_problem<D>>>;
  using rest = std::conditional_t<problem_of<step> == schedule_problem::none,
                                  apply_all<typename step::type, schedule<Ds...>, T>, stopped<N, problem_of<step>>>;
  using type = typename rest::type;
  static constexpr schedule_problem problem = rest::problem;
};

template <class Vars>
struct initial;
template <class... V>
struct initial<meta::list<V...>> {
  using type = nest<meta::list<loop_desc<V>...>, meta::list<>>;
};

}  // namespace sched
}  // namespace loom
