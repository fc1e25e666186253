// SPDX-License-Identifier: MIT
// loom/lower/plan.hpp — a definition and a schedule become a checked plan: the loop nest after
// every directive, each split's tail strategy made concrete, and where the reduction's
// accumulators live. Everything here is compile time; a schedule that cannot be emitted
// correctly has a `problem` (schedule/nest.hpp's schedule_problem), which loom::run turns into
// a static_assert that names the fix.
#pragma once
#include "../expr/definition.hpp"
#include "../expr/ops.hpp"
#include "../schedule/nest.hpp"

namespace loom {

/// Where a scheduled reduction accumulates.
enum class accumulation {
  none,           // no reduction loops in the nest: one store per point
  registers,      // a block of accumulators (scalars or vectors) held across the reduction loops
  into_output     // the output is the accumulator (reduction loops outside non-constant pure loops)
};

template <class Def, class Sched>
struct plan {
  using def = Def;
  using schedule_type = Sched;
  using T = typename Def::value_type;
  using applied = sched::apply_all<typename sched::initial<typename Def::loop_vars>::type, Sched, T>;
  using built = typename applied::type;
  using loops = typename built::loops;
  using raw_splits = typename built::splits;
  using loop_ids = sched::ids<loops>;
  using pure = typename Def::pure_vars;
  using rvars = typename Def::scheduled_rvars;
  static constexpr std::size_t N = loops::size;

  template <class S>
  struct directive_list {
    using type = meta::list<>;
  };
  template <class... D>
  struct directive_list<schedule<D...>> {
    using type = meta::list<D...>;
  };
  /// The schedule's directives of one kind (Is<D>::value), and the first of them (None if none).
  template <template <class> class Is, class None>
  struct find_directive {
    using all = meta::filter<typename directive_list<Sched>::type, Is>;
    using first = meta::at<meta::concat<all, meta::list<None>>, 0>;
  };

  template <class D>
  struct is_large_blocks_directive : std::false_type {};
  template <auto V, index_t F, index_t B>
  struct is_large_blocks_directive<large_blocks<V, F, B>> : std::true_type {};
  struct no_large_blocks {
    using loop = void;
    static constexpr index_t factor = 0, min_bytes = 0;
  };
  using large_blocking = find_directive<is_large_blocks_directive, no_large_blocks>;
  /// The split loop whose blocks are large_blocks_factor points long when a run touches at least
  /// large_blocks_min_bytes (void: none). Its inner loop's trip is then known only at run time.
  using large_loop = typename large_blocking::first::loop;
  static constexpr index_t large_blocks_factor = large_blocking::first::factor;
  static constexpr index_t large_blocks_min_bytes = large_blocking::first::min_bytes;

  template <class D>
  struct is_short_chunks_directive : std::false_type {};
  template <auto V, index_t F, index_t B>
  struct is_short_chunks_directive<detail::short_extent_chunks<V, F, B>> : std::true_type {};
  struct no_short_chunks {
    using loop = void;
    static constexpr index_t factor = 0, below = 0;
  };
  /// A chunked reduction's chunk length under short_extent_chunks (0: always the split's factor).
  using short_chunking = typename find_directive<is_short_chunks_directive, no_short_chunks>::first;

  template <std::size_t P>
  using loop_at = meta::at<loops, P>;

  /// A pure variable's extent when the output's extents type fixes it (else dyn): a static
  /// extent divisible by the factors of its splits leaves no tail code at all.
  template <class V>
  static constexpr index_t static_extent = [] {
    using out_idx = typename Def::lhs_type::index_types;
    if constexpr (meta::contains<out_idx, V>)
      return Def::lhs_type::view_type::extents_type::static_extent(meta::index_of<out_idx, V>);
    else
      return dyn;
  }();
  template <std::size_t P>
  static constexpr bool is_pure_at = sched::all_roots_in<typename loop_at<P>::id, pure>;
  template <std::size_t P>
  static constexpr bool is_red_at = sched::all_roots_in<typename loop_at<P>::id, rvars>;

  template <class F>
  static constexpr std::size_t count_if(F f) {
    return [&]<std::size_t... P>(std::index_sequence<P...>) {
      return (std::size_t{f(std::integral_constant<std::size_t, P>{})} + ... + 0);
    }(std::make_index_sequence<N>{});
  }
  template <class F>
  static constexpr std::size_t first_if(F f) {
    std::size_t r = N;
    [&]<std::size_t... P>(std::index_sequence<P...>) {
      ((r == N && f(std::integral_constant<std::size_t, P>{}) ? (void)(r = P) : void()), ...);
    }(std::make_index_sequence<N>{});
    return r;
  }

  static constexpr std::size_t vec_pos = first_if([](auto p) { return loop_at<p>::kind == loop_kind::vectorized; });
  static constexpr std::size_t par_pos = first_if([](auto p) { return loop_at<p>::kind == loop_kind::parallel; });
  static constexpr bool vectorized = vec_pos < N;
  static constexpr bool parallelized = par_pos < N;
  /// First loop over a reduction variable: the reduction's accumulators live from here in.
  static constexpr std::size_t red_pos = first_if([](auto p) { return is_red_at<p>; });

  // ---- checks that need the whole nest ----
  /// A deterministic parallel reduction: the outermost loop is outer<k> of a reduction variable
  /// k split by F. Each chunk of F values of k reduces into its own partial result; partials are
  /// combined in chunk order, so the result does not depend on the thread count.
  static constexpr bool chunked_reduction = [] {
    if constexpr (parallelized) {
      using Y = typename loop_at<par_pos>::id;
      if constexpr (requires { typename sched::outer_parent<Y>::type; }) {
        using R = typename sched::outer_parent<Y>::type;
        return is_var<R> && meta::contains<rvars, R> && par_pos == 0;
      }
    }
    return false;
  }();
  static constexpr bool parallel_loop_is_pure = [] {
    if constexpr (parallelized) return is_pure_at<par_pos>;  // (guarded: N may be 0)
    else return true;
  }();

  using lane = std::conditional_t<vectorized, meta::at<sched::roots_t<typename meta::at<meta::concat<loops, meta::list<loop_desc<void>>>, vec_pos>::id>, 0>, void>;
  static constexpr bool lane_is_reduction = vectorized && meta::contains<rvars, lane>;
  static constexpr std::size_t width = [] {
    if constexpr (vectorized) {
      using P = typename sched::inner_parent<typename loop_at<vec_pos>::id>::type;
      return std::size_t(sched::split_of<raw_splits, P>::factor);
    } else {
      return std::size_t{1};
    }
  }();

  // ---- ordering: outer<P> outside every loop descending from inner<P> ----
  template <class Y>
  static constexpr std::size_t pos_of_descendant = first_if([](auto p) { return sched::descends<typename loop_at<p>::id, Y>::value; });
  static constexpr bool order_ok = []<class... S>(meta::list<S...>*) {
    return ((pos_of_descendant<outer_loop<typename S::parent>> < pos_of_descendant<inner_loop<typename S::parent>>) && ...);
  }(static_cast<raw_splits*>(nullptr));

  // ---- large_blocks: a block length chosen per run ----
  static constexpr bool has_large_blocks = !std::is_void_v<large_loop>;
  static constexpr bool large_blocks_on_lanes = [] {
    if constexpr (has_large_blocks && vectorized) return std::is_same_v<typename sched::inner_parent<typename loop_at<vec_pos>::id>::type, large_loop>;
    else return false;
  }();
  static constexpr bool large_blocks_pure = [] {
    if constexpr (has_large_blocks) return sched::all_roots_in<large_loop, pure>;
    else return true;
  }();

  // ---- where the reduction accumulates ----
  /// A loop's trip count when the compiler knows it (0 if not): inner<P> runs at most P's factor;
  /// outer<P> of a P with a constant trip runs ceil(trip / factor).
  template <class Y>
  struct const_trip_of : std::integral_constant<index_t, 0> {};
  template <class P>
  struct const_trip_of<inner_loop<P>>
      : std::integral_constant<index_t, std::is_same_v<P, large_loop> ? 0 : sched::split_of<raw_splits, P>::factor> {};
  template <class P>
  struct const_trip_of<outer_loop<P>>
      : std::integral_constant<index_t, const_trip_of<P>::value == 0 ? 0
                                         : loom::detail::ceil_div(const_trip_of<P>::value, sched::split_of<raw_splits, P>::factor)> {};
  template <class Y>
  static constexpr index_t const_trip = const_trip_of<Y>::value;
  template <std::size_t P>
  static constexpr bool static_trip = const_trip<typename loop_at<P>::id> > 0;
  static constexpr bool region_pure_static =
      count_if([](auto p) { return p >= red_pos && is_pure_at<p> && !static_trip<p>; }) == 0;
  static constexpr accumulation acc_kind =
      red_pos == N ? accumulation::none : region_pure_static ? accumulation::registers : accumulation::into_output;
  static constexpr bool rhs_is_bare_reduction = is_reduce<typename Def::rhs_type>;
  static constexpr bool into_output_ok = [] {
    if constexpr (acc_kind == accumulation::into_output && rhs_is_bare_reduction) {
      return std::is_same_v<typename Def::mode, assign_set> || std::is_same_v<typename Def::rhs_type::op_type, red::sum>;
    } else {
      return true;
    }
  }();

  /// A loop inside the reduction that gets its own accumulators: constant-trip pure loops, and
  /// unrolled reduction loops (separate partial results break the dependency chain).
  template <std::size_t P>
  static constexpr bool block_loop = acc_kind == accumulation::registers && P >= red_pos &&
                                     loop_at<P>::kind != loop_kind::vectorized &&
                                     ((is_pure_at<P> && static_trip<P>) || (is_red_at<P> && loop_at<P>::kind == loop_kind::unrolled));
  template <std::size_t P>
  static constexpr index_t trip_of = static_trip<P> ? const_trip<typename loop_at<P>::id> : 1;
  /// The most iterations an unrolled loop may have: each is a copy of the body to compile.
  static constexpr index_t max_unroll = 64;
  // Layout: acc[pure_index * red_block + red_index], each part row-major over its loops.
  template <bool Pure>
  static constexpr auto block_strides = [] {
    std::array<index_t, N + 1> st{};
    index_t s = 1;
    [&]<std::size_t... P>(std::index_sequence<P...>) {
      ((block_loop<N - 1 - P> && is_pure_at<N - 1 - P> == Pure ? (st[N - 1 - P] = s, s *= trip_of<N - 1 - P>) : 0), ...);
    }(std::make_index_sequence<N>{});
    st[N] = s;
    return st;
  }();
  static constexpr index_t red_block = block_strides<false>[N];
  static constexpr index_t pure_block = block_strides<true>[N];
  static constexpr index_t block_size = red_block * pure_block;
  template <std::size_t P>
  static constexpr index_t block_stride = !block_loop<P> ? 0 : is_pure_at<P> ? block_strides<true>[P] * red_block : block_strides<false>[P];

  // ---- directives that change the leaf, not the loops: stream_stores, prefetch, interleave ----
  template <class D>
  struct is_stream_directive : std::false_type {};
  template <index_t B>
  struct is_stream_directive<stream_stores<B>> : std::true_type {};
  using streaming = find_directive<is_stream_directive, stream_stores<0>>;
  /// The output is written with non-temporal stores when a run touches at least stream_min_bytes.
  static constexpr bool streams = streaming::all::size > 0;
  static constexpr index_t stream_min_bytes = streaming::first::min_bytes;

  template <class D>
  struct is_prefetch_directive : std::false_type {};
  template <auto V, index_t D, index_t B>
  struct is_prefetch_directive<prefetch<V, D, B>> : std::true_type {};
  struct no_prefetch {
    using variable = void;
    static constexpr index_t distance = 0, min_bytes = 0;
  };
  using prefetching = find_directive<is_prefetch_directive, no_prefetch>;
  /// Inputs moving along prefetch_var are read prefetch_distance steps ahead into L2 when a run
  /// touches at least prefetch_min_bytes.
  static constexpr bool prefetches = prefetching::all::size > 0;
  using prefetch_var = typename prefetching::first::variable;
  static constexpr index_t prefetch_distance = prefetching::first::distance;
  static constexpr index_t prefetch_min_bytes = prefetching::first::min_bytes;

  template <class D>
  struct is_prefetch_stores_directive : std::false_type {};
  template <auto C>
  struct is_prefetch_stores_directive<prefetch_stores<C>> : std::true_type {};
  /// Each point the leaf stores also asks for the line a consumer stores there, for writing
  /// (prefetch_stores<C>: the pipeline hands the leaf where, lower/store_hint.hpp).
  static constexpr bool prefetches_stores = find_directive<is_prefetch_stores_directive, void>::all::size > 0;

  template <class D>
  struct is_interleave_directive : std::false_type {};
  template <int P, index_t B>
  struct is_interleave_directive<interleave<P, B>> : std::true_type {};
  using interleaving = find_directive<is_interleave_directive, interleave<1>>;
  /// Strip-mined vector loops walk this many parts of their block at once, when a run touches at
  /// least interleave_min_bytes.
  static constexpr int interleave_parts = interleaving::first::parts;
  static constexpr index_t interleave_min_bytes = interleaving::first::min_bytes;

  // ---- tails ----
  template <class S>
  struct resolve_tail {
    using P = typename S::parent;
    static constexpr std::size_t inner_pos = pos_of_descendant<inner_loop<P>>;
    static constexpr std::size_t outer_pos = pos_of_descendant<outer_loop<P>>;
    static constexpr bool is_vector = vectorized && inner_pos == vec_pos;
    static constexpr bool pure_split = sched::all_roots_in<P, pure>;
    static constexpr bool shift_legal = std::is_same_v<typename Def::mode, assign_set> && pure_split &&
                                        acc_kind != accumulation::into_output &&
                                        !(parallelized && par_pos >= outer_pos && par_pos < inner_pos);
    using Tail = typename S::tail_type;
    static constexpr bool shift_ok = !std::is_same_v<Tail, tail::shift_inwards> || shift_legal;
    static constexpr bool masked_ok = !std::is_same_v<Tail, tail::masked> || is_vector;
    static constexpr bool in_region = acc_kind == accumulation::registers && is_vector && inner_pos >= red_pos;
    using automatic = std::conditional_t<shift_legal, tail::shift_inwards, std::conditional_t<is_vector, tail::masked, tail::guard>>;
    using chosen = std::conditional_t<std::is_same_v<Tail, tail::automatic>, automatic, Tail>;
    // A scalar epilogue cannot feed vector accumulators: inside the reduction, guard runs masked.
    using type = split_desc<P, S::factor, std::conditional_t<in_region && std::is_same_v<chosen, tail::guard>, tail::masked, chosen>>;
  };
  template <class L>
  struct resolve_all;
  template <class... S>
  struct resolve_all<meta::list<S...>> {
    using type = meta::list<typename resolve_tail<S>::type...>;
  };
  using splits = typename resolve_all<raw_splits>::type;

  // ---- the first problem, in the order a reader meets the checks above ----
  static constexpr schedule_problem problem = [] {
    using P = schedule_problem;
    constexpr auto tails_ok = [](auto member) {
      return [&]<class... S>(meta::list<S...>*) { return (member(resolve_tail<S>{}) && ...); }(static_cast<raw_splits*>(nullptr));
    };
    if (applied::problem != P::none) return applied::problem;
    if (large_blocking::all::size > 1) return P::large_blocks_twice;
    if (count_if([](auto p) { return !is_pure_at<p> && !is_red_at<p>; }) != 0) return P::fuse_pure_with_reduction;
    if (count_if([](auto p) { return loop_at<p>::kind == loop_kind::vectorized; }) > 1) return P::two_vectorized;
    if (count_if([](auto p) { return loop_at<p>::kind == loop_kind::parallel; }) > 1) return P::two_parallel;
    if (!chunked_reduction && !parallel_loop_is_pure) return P::parallel_reduction_variable;
    if (parallelized && vectorized && par_pos >= vec_pos) return P::parallel_inside_vectorized;
    if (parallelized && !chunked_reduction && par_pos >= red_pos) return P::parallel_inside_reduction;
    if (!order_ok) return P::outer_inside_inner;
    if (large_blocks_on_lanes) return P::large_blocks_on_lanes;
    if (!large_blocks_pure) return P::large_blocks_reduction;
    if (count_if([](auto p) { return loop_at<p>::kind == loop_kind::unrolled && !static_trip<p>; }) != 0) return P::large_blocks_unrolled;
    if (count_if([](auto p) { return loop_at<p>::kind == loop_kind::unrolled && trip_of<p> > max_unroll; }) != 0) return P::unroll_too_large;
    if (!chunked_reduction && acc_kind == accumulation::into_output && !rhs_is_bare_reduction) return P::output_accumulator_needs_bare_reduction;
    if (!chunked_reduction && !into_output_ok) return P::accumulate_extremum_into_output;
    if (block_size > 64) return P::accumulator_block_too_large;
    if (streaming::all::size > 1) return P::stream_stores_twice;
    if (streams && !(acc_kind == accumulation::none && std::is_same_v<typename Def::mode, assign_set>)) return P::stream_stores_output_read;
    if (streams && !vectorized) return P::stream_stores_not_vectorized;
    if (prefetching::all::size > 1) return P::prefetch_twice;
    if (prefetches && !meta::contains<typename Def::vars, prefetch_var>) return P::prefetch_unknown_variable;
    if (interleaving::all::size > 1) return P::interleave_twice;
    if (interleave_parts > 1 && !vectorized) return P::interleave_not_vectorized;
    if (!tails_ok([](auto t) { return decltype(t)::shift_ok; })) return P::shift_inwards_illegal;
    if (!tails_ok([](auto t) { return decltype(t)::masked_ok; })) return P::masked_tail_not_vectorized;
    return P::none;
  }();
};

}  // namespace loom
