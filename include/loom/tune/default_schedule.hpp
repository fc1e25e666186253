// SPDX-License-Identifier: MIT
// loom/tune/default_schedule.hpp — the schedule run(def) uses when none is given, chosen from
// the definition's structure: vectorize the variable that is unit-stride in row-major tensors,
// keep several accumulators when that variable is reduced, tile transposed 2-D traversals, and
// run the outermost loop in parallel when the nest has enough points to pay for threads.
#pragma once
#include "../expr/definition.hpp"
#include "../schedule/directives.hpp"
#include "../schedule/specialize.hpp"
#include "../simd/arch.hpp"
#include "../simd/prefetch.hpp"

namespace loom {

namespace detail {
/// The index of an access's last (row-major unit-stride) dimension, if it is a lone variable.
template <class A>
struct last_index {
  using type = void;
};
template <class V, class... I>
  requires(sizeof...(I) > 0)
struct last_index<access<V, I...>> {
  using L = meta::at<meta::list<I...>, sizeof...(I) - 1>;
  using type = std::conditional_t<is_var<L>, L, void>;
};

template <class Accs, class Var>
inline constexpr bool some_last_is = []<class... A>(meta::list<A...>*) {
  return (std::is_same_v<typename last_index<A>::type, Var> || ...);
}(static_cast<Accs*>(nullptr));

template <class L>
struct last_of {
  using type = void;
};
template <class... T>
  requires(sizeof...(T) > 0)
struct last_of<meta::list<T...>> {
  using type = meta::at<meta::list<T...>, sizeof...(T) - 1>;
};

inline constexpr index_t parallel_min_points = index_t{1} << 16;

template <class Def>
struct default_schedule {
  using pure = typename Def::pure_vars;
  using rv = typename Def::scheduled_rvars;
  using inputs = typename Def::rhs_type::accesses;
  using p_last = typename last_of<pure>::type;
  using r_last = typename last_of<rv>::type;
  static constexpr bool has_pure = pure::size > 0;
  static constexpr bool has_red = rv::size > 0;
  // Reduce along lanes when a reduction variable is some input's unit-stride index and the
  // output's last variable is nobody's.
  static constexpr bool reduce_lanes = has_red && some_last_is<inputs, r_last> && !(has_pure && some_last_is<inputs, p_last>);
  // A 2-D elementwise traversal where an input's unit-stride index is the output's other variable.
  static constexpr bool transposed = !has_red && pure::size == 2 && !std::is_same_v<p_last, void> &&
                                     some_last_is<inputs, meta::at<meta::concat<pure, meta::list<void, void>>, 0>>;

  // Reduction loops listed for reorder<>: they go between the output's outer loops and the
  // register block.
  template <index_t Vectors, class... R>
  struct red_block_1d {  // cs(j) = sum(i, X(i, j)): strips of `Vectors` vectors, rows streamed
    static constexpr index_t W = index_t(simd::native_width<typename Def::value_type>);
    using type = schedule<split<p_last{}, Vectors * W>, split<inner_loop<p_last>{}, W>, vectorize<inner_loop<inner_loop<p_last>>{}>,
                          reorder<outer_loop<p_last>{}, R{}..., outer_loop<inner_loop<p_last>>{}, inner_loop<inner_loop<p_last>>{}>,
                          parallel<outer_loop<p_last>{}, parallel_min_points>>;
  };
  template <class P0, class... R>
  struct red_block_2d {  // C(i, j) = sum(k, A(i, k) * B(k, j)): a 6 x 4W register tile
    static constexpr index_t W = index_t(simd::native_width<typename Def::value_type>);
    using type = schedule<split<P0{}, 6>, split<p_last{}, 4 * W>, split<inner_loop<p_last>{}, W>,
                          vectorize<inner_loop<inner_loop<p_last>>{}>,
                          reorder<outer_loop<P0>{}, outer_loop<p_last>{}, R{}..., inner_loop<P0>{},
                                  outer_loop<inner_loop<p_last>>{}, inner_loop<inner_loop<p_last>>{}>,
                          parallel<outer_loop<P0>{}, parallel_min_points>>;
  };
  // Reading ahead (prefetch<>) into L2, in nests that only run once the run outgrows the cache
  // (hence MinBytes 0): one core's reads alone keep too few misses in flight. The same element 8
  // rows further on, i.e. the next block of 8 rows, whose pages no hardware prefetcher has reached
  // yet; with rows so long that this lands beyond half of L2, the prefetch reads 2 KiB ahead along
  // the row instead (see prefetch<>). (Zen 4, 1 thread, 64 MiB, medians of 11 interleaved rounds,
  // % of a streaming copy, against 2 KiB along the row: 4096-wide rows 88 against 82 % (row sums)
  // and 84 against 80 % (column sums); 65536-wide rows 85 against 92 % the other way round.)
  static constexpr index_t elem_bytes = index_t(sizeof(typename Def::value_type));
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

  // cs(j) = sum(i, X(i, j)) with j unit-stride in X: the output is the accumulator and rows are
  // streamed whole, 8 at a time (folded in registers, then one update of the output vector), in
  // chunks of 256 rows that threads reduce into private partial rows combined in chunk order.
  // (8 row streams in flight rather than 4: 4096^2 on Zen 4, 40.1 against 31.6 GB/s at 2 threads,
  // 22.8 against 21.2 at 1, medians of an interleaved A/B; 16 at a time ran out of registers.)
  // Strips of columns with i inside would keep the sums in registers, but step to a new page every
  // row, which hardware prefetchers do not follow: measured at ~45 % of copy, this at ~90 %.
  // Out of cache, rows are read ahead where the target does (reading_next_rows: Zen 4, 66 -> 84 %
  // of copy at 4096^2; simd::default_read_ahead), and rows shorter
  // than 2 KiB go one at a time: 8 short rows at once are 8 streams too short for any prefetcher
  // to follow (65536 x 256 floats, 1 thread: 12 against 18-25 GB/s, copy 36-38).
  // Fewer than 512 rows: chunks of 64 rows, so that threads have chunks to share (256 x 65536, 2
  // threads: 65 -> 89 % of copy; in L3, 8 MiB: 75 -> 132 GB/s). Chunks of 64 cost 4-10 % on one
  // thread (a larger combine pass, a partial row started more often), and lost to 2 chunks of 256
  // at 512 rows and 2 threads (82 against 99 %).
  // Fewer than 64 rows are one chunk: one thread, and a partial row as long as the output that is
  // filled, updated and combined, 3 extra passes over the output's size. With fewer than 16 rows
  // (or fewer than 64 in cache) strips of columns across all rows, sums in registers, threads
  // over the strips, win instead: each row is one stream, and few streams are followed. Out of
  // cache the strips are one vector (a cache line of each row per step), in cache 4 vectors.
  // (Zen 4, % of a streaming copy, 60-64 MiB, 1 and 2 threads: 1 row 10 -> 35-37 and 8 -> 36-37 %;
  // 8 rows 55 -> 70-73 and 40 -> 65-87 %; 12 rows 58 -> 81-83 and 38 -> 57-90 %. 1 MiB, 2 threads,
  // 16 to 63 rows: 70-79 -> 124-174 GB/s. Strips of 4 vectors out of cache: 1 row 26-27 %, 8 rows
  // 51-85 % at 2 threads. Out of cache from 16 rows on, 16 pages at once are too many streams:
  // 71-82 against 30-50 % at 1 thread.)
  template <class R>
  struct rows_streamed {
    template <index_t Chunk>
    using folded = schedule<split<R{}, Chunk>, unroll<inner_loop<R>{}, 8>,
                            reorder<outer_loop<R>{}, outer_loop<inner_loop<R>>{}, p_last{}, inner_loop<inner_loop<R>>{}>,
                            vectorize<p_last{}>, parallel<outer_loop<R>{}, parallel_min_points>>;
    using one_at_a_time = schedule<split<R{}, 256>, reorder<outer_loop<R>{}, inner_loop<R>{}, p_last{}>,
                                   vectorize<p_last{}>, parallel<outer_loop<R>{}, parallel_min_points>>;
    using ahead = reading_next_rows<folded<256>, R>;
    using many_rows = specialize<touches_at_least<>,
                                 specialize<extent_at_least<p_last{}, index_t{2048} / elem_bytes>, ahead, one_at_a_time>, folded<256>>;
    // (few rows that outgrow the cache are long: read ahead along them)
    using few_rows = reading_ahead_with<folded<64>, prefetch<p_last{}, along_row_ahead>>;
    using strips = typename red_block_1d<4, R>::type;
    using strips_of_lines = typename red_block_1d<1, R>::type;
    using under_64_rows = specialize<touches_at_least<>, specialize<extent_at_least<R{}, 16>, few_rows, strips_of_lines>, strips>;
    using type = specialize<extent_at_least<R{}, 512>, many_rows, specialize<extent_at_least<R{}, 64>, few_rows, under_64_rows>>;
  };
  // rs(i) = sum(j, X(i, j)) on a matrix that outgrows the cache and has rows of 8 KiB or more: 8
  // rows at once, each with its own accumulator, read ahead where the target does
  // (reading_next_rows; Zen 3 without it: 66 % of copy one row at a time, 108 % 8 rows at once,
  // 4096^2, 1 thread): more misses in flight
  // than one row's stream keeps. In cache, or with shorter rows, one row at a time (4
  // accumulators): the L2 streamer follows one stream best, and 8 short rows are 8 streams too
  // short to follow. (Zen 4, 1 thread, % of a streaming copy: 4096^2 73 -> 88 %; 1024^2, in L3:
  // 88 against 69 GB/s the other way round; 65536 x 256: 27 against 67 % the other way round.)
  template <class P0>
  struct rows_ahead {
    using one_row = schedule<vectorize<r_last{}>, unroll<outer_loop<r_last>{}, 4>, parallel<P0{}, parallel_min_points>>;
    using base = schedule<split<P0{}, 8>, vectorize<r_last{}>,
                          reorder<outer_loop<P0>{}, outer_loop<r_last>{}, inner_loop<P0>{}, inner_loop<r_last>{}>,
                          parallel<outer_loop<P0>{}, parallel_min_points>>;
    using ahead = reading_next_rows<base, P0>;
    using type = specialize<touches_at_least<>,
                            specialize<extent_at_least<r_last{}, index_t{8192} / elem_bytes>, ahead, one_row>, one_row>;
  };
  // One output variable, one reduction, not along lanes: register strips, or rows streamed.
  static constexpr bool reduction_1d = has_red && !reduce_lanes && pure::size == 1 && Def::rhs_type::reductions::size == 1;
  // Rows streamed needs the output as the accumulator: `out(j) = sum(...)` with nothing around the
  // sum, over one variable, and j unit-stride in an input.
  static constexpr bool bare_reduction = requires { typename Def::rhs_type::op_type; } &&
                                         !std::is_same_v<typename Def::mode, assign_add>;
  static constexpr bool streams_rows = reduction_1d && rv::size == 1 && bare_reduction && some_last_is<inputs, p_last>;

  template <class L>
  struct expand_1d;
  template <class... R>
  struct expand_1d<meta::list<R...>> : red_block_1d<16, R...> {};
  template <class P0, class L>
  struct expand_2d;
  template <class P0, class... R>
  struct expand_2d<P0, meta::list<R...>> : red_block_2d<P0, R...> {};

  // `out = e` outputs stream their stores once a run outgrows the cache (`+=` reads its output).
  template <class... D>
  using streamed = std::conditional_t<std::is_same_v<typename Def::mode, assign_set>, schedule<D..., stream_stores<>>, schedule<D...>>;

  // out(i) = e: in cache, chunks of 8192 points per thread, one strip-mined vector loop each.
  // (Unrolling the vectors by 4 measured 0.7x in cache on Zen 5: the unrolled steps each keep
  // their own tail test, and the loop ran out of registers.)
  // Beyond the cache, blocks of 4 parts of 4113 cache lines each (257 KiB), the vector loop
  // walking the 4 parts at once (interleave<4>), every input read 2 KiB ahead, stores streamed.
  // A loop with real math in it (an exp, a division) holds too few vector steps in the core's
  // window to keep enough misses in flight on one stream; on 4 far-apart streams per array the
  // hardware prefetchers keep 4 times as many. (Zen 3, AVX2, 16M floats, `max(a x + b, 0)
  // sigmoid(c)`, % of a streaming copy, medians of interleaved rounds, 1 / 2 threads, four runs
  // on two days: 90 / 101, 100 / 94, 96 / 89, 88 / 99 against 92 / 96, 86 / 82, 84 / 80, 77 / 89
  // for one stream read 2 KiB ahead, which itself was 81-84 -> 95-98 % against no read-ahead.)
  // Parts of 64 KiB ran at 76 / 87 % and 8 parts at 69 / 49 %: too many streams. Blocks of
  // exactly 4 x 2^16 floats ran a little slower at 2 threads (94 / 85 against 100 / 94 in one
  // run): the threads' blocks then start a power of two apart, likely on the same DRAM banks.
  // In cache neither reading ahead nor interleaving pays (1 MiB, 2 threads: `x + c` 133 -> 110
  // GB/s with the read-ahead), and small runs need small chunks to share among threads.
  static constexpr index_t interleaved_part_bytes = index_t{4113} * 64;
  // One nest for both, its choices made per run (large_blocks<>, and the thresholds of prefetch<>
  // and interleave<>): a specialize<> would compile the loop body twice, which costs a fused
  // definition's program 0.2 s of its ~2.5 s compile (g++ -O2). stream_stores<> acts only beyond
  // twice the cache (simd::streaming_threshold_bytes).
  struct one_dimension {
    using type = streamed<split<p_last{}, 8192>, vectorize<inner_loop<p_last>{}>, parallel<outer_loop<p_last>{}, parallel_min_points>,
                          large_blocks<p_last{}, 4 * interleaved_part_bytes / elem_bytes>, prefetch<p_last{}, along_row_ahead>,
                          interleave<4, beyond_cache>>;
  };

  static auto pick() {
    if constexpr (streams_rows) {
      return typename rows_streamed<r_last>::type{};
    } else if constexpr (reduction_1d) {
      return typename expand_1d<rv>::type{};
    } else if constexpr (has_red && !reduce_lanes && pure::size == 2 && Def::rhs_type::reductions::size == 1) {
      return typename expand_2d<meta::at<pure, 0>, rv>::type{};
    } else if constexpr (reduce_lanes && pure::size == 1 && rv::size == 1) {
      return typename rows_ahead<meta::at<pure, 0>>::type{};
    } else if constexpr (reduce_lanes && has_pure) {
      using P0 = meta::at<pure, 0>;
      return schedule<vectorize<r_last{}>, unroll<outer_loop<r_last>{}, 4>, parallel<P0{}, parallel_min_points>>{};
    } else if constexpr (reduce_lanes) {
      return schedule<vectorize<r_last{}>, unroll<outer_loop<r_last>{}, 4>>{};
    } else if constexpr (!has_pure) {
      return schedule<>{};
    } else if constexpr (transposed) {
      using P0 = meta::at<pure, 0>;
      return schedule<tile<P0{}, p_last{}, 16, 16>, vectorize<inner_loop<p_last>{}>, parallel<outer_loop<P0>{}, parallel_min_points>>{};
    } else if constexpr (pure::size == 1) {
      return typename one_dimension::type{};
    } else {
      using P0 = meta::at<pure, 0>;
      return streamed<vectorize<p_last{}>, parallel<P0{}, parallel_min_points>>{};
    }
  }
  using type = decltype(pick());
};
}  // namespace detail

/// The schedule loom::run(def) uses for a definition type.
template <class Def>
using default_schedule_t = typename detail::default_schedule<std::remove_cvref_t<Def>>::type;

}  // namespace loom
