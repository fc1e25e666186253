// SPDX-License-Identifier: MIT
// loom/tune/default_schedule.hpp — the schedule run(def) uses when none is given, chosen from
// the definition's structure: the vector lanes go along the variable with the most unit-stride
// traffic (the accesses' strides and bytes; per run where views' strides are run-time values),
// the nest follows from where the lanes are, and the outermost loop runs in parallel when the nest
// has enough points to pay for threads. Each default is checked against the plan's rules at
// compile time. docs/design.md, "How the default schedule chooses".
#pragma once
#include <algorithm>
#include <array>

#include "../expr/definition.hpp"
#include "../schedule/directives.hpp"
#include "../lower/plan.hpp"
#include "../schedule/nest.hpp"
#include "../schedule/specialize.hpp"
#include "../simd/arch.hpp"
#include "../simd/prefetch.hpp"

namespace loom {

namespace detail {
// ---- the lanes: the loop variable whose consecutive values fill the vector lanes ----

/// How access A moves along variable V, with every layout_stride view taken to be row-major
/// (ColMajor false: its last dimension unit-stride) or column-major (its first): 1 at unit
/// stride, 0 not at all (a broadcast), -1 at another stride (a gather or scatter).
template <class A, class V, bool ColMajor>
inline constexpr int walk_kind = [] {
  if constexpr (!meta::contains<typename A::vars, V>) {
    return 0;
  } else if constexpr (std::is_same_v<typename A::view_type::layout_type, layout_right>) {
    return A::template unit_stride_along<V> ? 1 : -1;
  } else {
    using idx = typename A::index_types;
    constexpr std::size_t unit = ColMajor ? 0 : A::rank - 1;
    const bool elsewhere = []<std::size_t... D>(std::index_sequence<D...>) {
      return ((D != unit && meta::contains<typename meta::at<idx, D>::vars, V>) || ...);
    }(std::make_index_sequence<A::rank>{});
    return !elsewhere && static_coef<meta::at<idx, unit>, V> == 1 ? 1 : -1;
  }
}();

/// The bytes access A moves, as a weight: its element size times 16 per dimension (the extents
/// are run-time values; a matrix outweighs the vectors beside it).
template <class A>
inline constexpr index_t traffic_weight =
    index_t(sizeof(typename A::value_type)) << (4 * std::min<std::size_t>({A::rank, A::vars::size, 12}));

/// Lanes along V: the weights of the accesses they walk at unit stride, less those they gather.
template <class Accs, class V, bool ColMajor>
inline constexpr index_t unit_traffic = []<class... A>(meta::list<A...>*) {
  return ((traffic_weight<A> * walk_kind<A, V, ColMajor>) + ... + index_t{0});
}(static_cast<Accs*>(nullptr));

/// The candidate with the most unit-stride traffic; the first of them on a tie.
template <class Accs, class Cands, bool ColMajor>
struct best_lane;
template <class Accs, class... C, bool ColMajor>
struct best_lane<Accs, meta::list<C...>, ColMajor> {
  static constexpr std::array<index_t, sizeof...(C)> score{unit_traffic<Accs, C, ColMajor>...};
  static constexpr std::size_t pos = [] {
    std::size_t b = 0;
    for (std::size_t q = 1; q < score.size(); ++q)
      if (score[q] > score[b]) b = q;
    return b;
  }();
  using type = meta::at<meta::list<C...>, pos>;
};

template <class L>
struct reversed;
template <>
struct reversed<meta::list<>> {
  using type = meta::list<>;
};
template <class T, class... Ts>
struct reversed<meta::list<T, Ts...>> {
  using type = meta::concat<typename reversed<meta::list<Ts...>>::type, meta::list<T>>;
};

template <class L>
struct last_of {
  using type = void;
};
template <class... T>
  requires(sizeof...(T) > 0)
struct last_of<meta::list<T...>> {
  using type = meta::at<meta::list<T...>, sizeof...(T) - 1>;
};

template <class... S>
struct joined;
template <class... A>
struct joined<schedule<A...>> {
  using type = schedule<A...>;
};
template <class... A, class... B, class... S>
struct joined<schedule<A...>, schedule<B...>, S...> : joined<schedule<A..., B...>, S...> {};
/// One schedule of the directives of several, in order.
template <class... S>
using join = typename joined<S...>::type;

/// reorder<V...> when the loops (listed outermost first) are not already in that order.
template <class Current, class... V>
using order = std::conditional_t<std::is_same_v<Current, meta::list<V...>>, schedule<>, schedule<reorder<V{}...>>>;

// ---- the self-check: a default must pass the plan's checks ----

/// The first problem lower/plan.hpp finds in schedule S (a specialize: in either leaf) for Def.
template <class Def, class S>
struct problem_in;
template <class Def, class C, class Then, class Else>
struct problem_in<Def, specialize<C, Then, Else>> {
  static constexpr schedule_problem value =
      problem_in<Def, Then>::value != schedule_problem::none ? problem_in<Def, Then>::value : problem_in<Def, Else>::value;
};
template <class Def, class... D>
struct problem_in<Def, schedule<D...>> {
  static constexpr schedule_problem value = plan<Def, schedule<D...>>::problem;
};

/// Fails the build with loom's own message when a default breaks a rule (the problem P, named in
/// this instantiation): the user wrote no schedule, so the fault is loom's.
template <schedule_problem P>
constexpr void check_default_schedule() {
  using enum schedule_problem;
  static_assert(P != two_vectorized && P != two_parallel,
                "loom internal error: the default schedule for this definition is illegal: it vectorizes or "
                "parallelizes two loops; please report");
  static_assert(P != parallel_reduction_variable && P != parallel_inside_vectorized && P != parallel_inside_reduction,
                "loom internal error: the default schedule for this definition is illegal: its parallel loop is not an "
                "output loop outside the reduction and the lanes; please report");
  static_assert(P != stream_stores_output_read && P != stream_stores_not_vectorized,
                "loom internal error: the default schedule for this definition is illegal: it streams the stores of an "
                "output that is read (a reduction or +=) or not vectorized; please report");
  static_assert(P != output_accumulator_needs_bare_reduction && P != accumulate_extremum_into_output,
                "loom internal error: the default schedule for this definition is illegal: it makes the output the "
                "accumulator of a reduction it cannot accumulate; please report");
  static_assert(P != accumulator_block_too_large,
                "loom internal error: the default schedule for this definition is illegal: its accumulator block exceeds "
                "64 registers; please report");
  static_assert(P == none || P == two_vectorized || P == two_parallel || P == parallel_reduction_variable ||
                    P == parallel_inside_vectorized || P == parallel_inside_reduction || P == stream_stores_output_read ||
                    P == stream_stores_not_vectorized || P == output_accumulator_needs_bare_reduction ||
                    P == accumulate_extremum_into_output || P == accumulator_block_too_large,
                "loom internal error: the default schedule for this definition is illegal: it breaks the rule named by "
                "the schedule_problem P of this check_default_schedule<P>; please report");
}

inline constexpr index_t parallel_min_points = index_t{1} << 16;

template <class Def>
struct default_schedule {
  using T = typename Def::value_type;
  using pure = typename Def::pure_vars;
  using rv = typename Def::scheduled_rvars;
  using loop_vars = typename Def::loop_vars;
  using accesses = meta::concat<meta::list<typename Def::lhs_type>, typename Def::rhs_type::accesses>;
  static constexpr bool has_pure = pure::size > 0;
  static constexpr bool has_red = rv::size > 0;
  static constexpr index_t W = index_t(simd::native_width<T>);
  static constexpr index_t elem_bytes = index_t(sizeof(T));
  // Lane candidates in the order ties are broken: the output's variables from its last, then the
  // reduction's from its last.
  using candidates = meta::unique<meta::concat<typename reversed<pure>::type, typename reversed<rv>::type>>;
  // Some view's strides are known only at run time (and it has rows to walk either way).
  static constexpr bool run_time_strides = []<class... A>(meta::list<A...>*) {
    return ((std::is_same_v<typename A::view_type::layout_type, layout_stride> && A::rank >= 2) || ...);
  }(static_cast<accesses*>(nullptr));
  template <bool ColMajor>
  using lane_for = typename best_lane<accesses, candidates, ColMajor>::type;

  // The reduction is the whole right side (`out(j) = sum(...)`), so the output can be its accumulator.
  static constexpr bool bare_reduction = is_reduce<typename Def::rhs_type> && !std::is_same_v<typename Def::mode, assign_add>;

  // Reading ahead (prefetch<>) into L2, in nests that only run once the run outgrows the cache
  // (hence MinBytes 0): one core's reads alone keep too few misses in flight. The same element 8
  // rows further on (the next block of 8 rows, whose pages no hardware prefetcher has reached yet;
  // 2 KiB along the row where that lands beyond half of L2). Evidence: docs/tuning.md.
  template <class Base, class... More>
  struct extended;
  template <class... D, class... More>
  struct extended<schedule<D...>, More...> {  // Base's directives, then More
    using type = schedule<D..., More...>;
  };
  // (Only where the target reads ahead by default: simd::default_read_ahead.)
  template <class Base, class... More>
  using reading_ahead_with = std::conditional_t<simd::default_read_ahead, typename extended<Base, More...>::type, Base>;
  template <class Base, class Across>
  using reading_next_rows = reading_ahead_with<Base, prefetch<Across{}, 8, 0>>;
  // Reading 2 KiB further along a row-major row (in elements of the definition's type).
  static constexpr index_t along_row_ahead = simd::prefetch_fallback_bytes / elem_bytes;

  // `out = e` outputs stream their stores once a run outgrows the cache: not with `+=` or with a
  // reduction's loops in the nest (both read the output).
  template <class... D>
  using streamed = std::conditional_t<std::is_same_v<typename Def::mode, assign_set> && !has_red, schedule<D..., stream_stores<>>,
                                      schedule<D...>>;

  // The nests for lanes along L (ColMajor: how layout_stride views were taken to be laid out).
  // Lean: one nest per shape, its choices made per run (prefetch<>'s threshold), for the two
  // candidates a run chooses between (each nest is compiled twice there: with and without gathers).
  template <class L, bool ColMajor, bool Lean>
  struct with_lanes {
    static constexpr bool lane_is_pure = meta::contains<pure, L>;
    using others = meta::remove<pure, L>;  // the output's other variables, in order
    using other_red = meta::remove<rv, L>;
    using first_other = meta::at<meta::concat<others, meta::list<void>>, 0>;
    using last_other = typename last_of<others>::type;
    template <class P>
    using par = parallel<P{}, parallel_min_points>;

    // Reduction loops listed for reorder<>: they go between the output's outer loops and the
    // register block.
    template <index_t Vectors, class... R>
    struct red_block_1d {  // cs(j) = sum(i, X(i, j)): strips of `Vectors` vectors, rows streamed
      using type = schedule<split<L{}, Vectors * W>, split<inner_loop<L>{}, W>, vectorize<inner_loop<inner_loop<L>>{}>,
                            reorder<outer_loop<L>{}, R{}..., outer_loop<inner_loop<L>>{}, inner_loop<inner_loop<L>>{}>,
                            par<outer_loop<L>>>;
    };
    template <class Red>
    struct strips_over;
    template <class... R>
    struct strips_over<meta::list<R...>> : red_block_1d<16, R...> {};
    // C(i, j) = sum(k, A(i, k) * B(k, j)): a 6 x 4W register tile over P0 and the lanes, the
    // output's other variables outside (the first in parallel).
    template <class P0, class Outer, class Red>
    struct red_block_2d;
    template <class P0, class... O, class... R>
    struct red_block_2d<P0, meta::list<O...>, meta::list<R...>> {
      using first = meta::at<meta::list<O..., outer_loop<P0>>, 0>;
      using type = schedule<split<P0{}, 6>, split<L{}, 4 * W>, split<inner_loop<L>{}, W>, vectorize<inner_loop<inner_loop<L>>{}>,
                            reorder<O{}..., outer_loop<P0>{}, outer_loop<L>{}, R{}..., inner_loop<P0>{},
                                    outer_loop<inner_loop<L>>{}, inner_loop<inner_loop<L>>{}>,
                            par<first>>;
    };

    // cs(j) = sum(i, X(i, j)) with j unit-stride in X: the output is the accumulator and rows are
    // streamed whole, 8 at a time (folded in registers, then one update of the output vector), in
    // chunks of 256 rows that threads reduce into private partial rows combined in chunk order.
    // Fewer than 512 rows: chunks of 64, so that threads have chunks to share (chosen per run: one
    // nest for both). Out of cache, the next 8 rows are read ahead where the target does (rows so
    // long that 8 of them pass half of L2, as few rows beyond the cache are, 2 KiB along the row:
    // prefetch<>'s fallback). Fewer than 16 rows (64 in cache): strips of columns across all
    // rows, sums in registers, each row one stream (one vector wide out of cache, 4 in cache).
    // Evidence: docs/tuning.md, "Row and column sums".
    template <class R>
    struct rows_streamed {
      using folded = schedule<split<R{}, 256>, unroll<inner_loop<R>{}, 8>,
                              reorder<outer_loop<R>{}, outer_loop<inner_loop<R>>{}, L{}, inner_loop<inner_loop<R>>{}>,
                              vectorize<L{}>, par<outer_loop<R>>, short_extent_chunks<R{}, 64, 512>>;
      // One nest in and out of cache (prefetch<>'s threshold is the cache), not two.
      using lean = reading_ahead_with<folded, prefetch<R{}, 8>>;
      using strips = typename red_block_1d<4, R>::type;
      using strips_of_lines = typename red_block_1d<1, R>::type;
      using under_64_rows = specialize<touches_at_least<>, specialize<extent_at_least<R{}, 16>, lean, strips_of_lines>, strips>;
      using type = specialize<extent_at_least<R{}, 64>, lean, under_64_rows>;
    };
    // rs(i) = sum(j, X(i, j)) on a matrix that outgrows the cache with rows of 8 KiB or more: 8
    // rows at once, each with its own accumulator, read ahead where the target does (more misses
    // in flight than one row's stream keeps). In cache, or with shorter rows, one row at a time (4
    // accumulators): the L2 streamer follows one stream best. Evidence: docs/tuning.md.
    template <class P0>
    struct rows_ahead {
      using one_row = schedule<vectorize<L{}>, unroll<outer_loop<L>{}, 4>, par<P0>>;
      using base = schedule<split<P0{}, 8>, vectorize<L{}>, reorder<outer_loop<P0>{}, outer_loop<L>{}, inner_loop<P0>{}, inner_loop<L>{}>,
                            par<outer_loop<P0>>>;
      using ahead = reading_next_rows<base, P0>;
      using type = specialize<touches_at_least<>, specialize<extent_at_least<L{}, index_t{8192} / elem_bytes>, ahead, one_row>, one_row>;
      using lean = reading_ahead_with<one_row, prefetch<L{}, along_row_ahead>>;
    };

    // out(i) = e: in cache, chunks of 8192 points per thread, one strip-mined vector loop each.
    // Beyond the cache, blocks of 4 parts of 4113 cache lines each (257 KiB) walked at once
    // (interleave<4>), every input read 2 KiB ahead, stores streamed: a loop with real math in it
    // keeps too few misses in flight on one stream, and the prefetchers follow 4 far-apart streams.
    // One nest for both, its choices made per run (large_blocks<>, the thresholds of prefetch<> and
    // interleave<>): a specialize<> would compile the body twice. Evidence: docs/tuning.md,
    // "Interleaved streams".
    static constexpr index_t interleaved_part_bytes = index_t{4113} * 64;
    using one_dimension = streamed<split<L{}, 8192>, vectorize<inner_loop<L>{}>, par<outer_loop<L>>,
                                   large_blocks<L{}, 4 * interleaved_part_bytes / elem_bytes>, prefetch<L{}, along_row_ahead>,
                                   interleave<4, beyond_cache>>;

    // The output variable (not the lanes') that a view walks at unit stride, for a 2-D tile.
    using transposed_by = typename best_lane<accesses, meta::concat<typename reversed<others>::type, meta::list<L>>, ColMajor>::type;
    static constexpr bool transposed = !has_red && !std::is_same_v<transposed_by, L> && Def::reductions::size == 0 &&
                                       []<class... A>(meta::list<A...>*) {
                                         return ((walk_kind<A, transposed_by, ColMajor> == 1) || ...);
                                       }(static_cast<accesses*>(nullptr));

    static auto pick() {
      if constexpr (!has_pure && !has_red) {                                      // a scalar = e
        return schedule<>{};
      } else if constexpr (!lane_is_pure) {                                       // lanes along the reduction
        if constexpr (pure::size == 1 && rv::size == 1) {
          using shape = rows_ahead<meta::at<pure, 0>>;
          if constexpr (Lean) return typename shape::lean{};
          else return typename shape::type{};
        } else {
          using lanes_last = decltype([]<class... P, class... R>(meta::list<P...>*, meta::list<R...>*) {
            return order<loop_vars, P..., R..., L>{};
          }(static_cast<pure*>(nullptr), static_cast<other_red*>(nullptr)));
          if constexpr (has_pure) return join<lanes_last, schedule<vectorize<L{}>, unroll<outer_loop<L>{}, 4>, par<meta::at<pure, 0>>>>{};
          else return join<lanes_last, schedule<vectorize<L{}>, unroll<outer_loop<L>{}, 4>>>{};
        }
      } else if constexpr (has_red && pure::size == 1) {                          // lanes along the output's only variable
        if constexpr (rv::size == 1 && bare_reduction && Lean) return typename rows_streamed<meta::at<rv, 0>>::lean{};
        else if constexpr (rv::size == 1 && bare_reduction) return typename rows_streamed<meta::at<rv, 0>>::type{};
        else return typename strips_over<rv>::type{};
      } else if constexpr (has_red) {                                             // a register tile
        return typename red_block_2d<last_other, meta::remove<others, last_other>, rv>::type{};
      } else if constexpr (pure::size == 1) {                                     // 1-D, elementwise
        return one_dimension{};
      } else if constexpr (transposed) {                                          // a 2-D tile
        using M = transposed_by;
        using ordered = decltype([]<class... O>(meta::list<O...>*) {
          return order<loop_vars, O..., M, L>{};
        }(static_cast<meta::remove<others, M>*>(nullptr)));
        using first = meta::at<meta::concat<meta::remove<others, M>, meta::list<outer_loop<M>>>, 0>;
        return join<ordered, schedule<tile<M{}, L{}, 16, 16>, vectorize<inner_loop<L>{}>, par<first>>>{};
      } else {                                                                    // rows of the output
        using ordered = decltype([]<class... O>(meta::list<O...>*) { return order<loop_vars, O..., L>{}; }(static_cast<others*>(nullptr)));
        return join<ordered, streamed<vectorize<L{}>, par<first_other>>>{};
      }
    }
    using type = decltype(pick());
  };

  static auto pick() {
    if constexpr (loop_vars::size == 0) {
      return schedule<>{};
    } else {
      using rows = lane_for<false>;
      using columns = lane_for<true>;
      if constexpr (!run_time_strides || std::is_same_v<rows, columns>)
        return typename with_lanes<rows, false, false>::type{};
      else  // one nest per candidate, chosen by the run's strides
        return specialize<lanes_prefer<rows{}, columns{}>, typename with_lanes<rows, false, true>::type,
                          typename with_lanes<columns, true, true>::type>{};
    }
  }
  using chosen = decltype(pick());
  static constexpr schedule_problem problem = problem_in<Def, chosen>::value;
  static_assert((check_default_schedule<problem>(), true));
  // (schedule<> after a failed check: the message above stays the only one)
  using type = std::conditional_t<problem == schedule_problem::none, chosen, schedule<>>;
};
}  // namespace detail

/// The schedule loom::run(def) uses for a definition type.
template <class Def>
using default_schedule_t = typename detail::default_schedule<std::remove_cvref_t<Def>>::type;

}  // namespace loom
