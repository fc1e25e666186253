// SPDX-License-Identifier: MIT
// loom/lower/emit.hpp — emits a plan's loop nest: recursive templates over the loop list, one
// `if constexpr` branch per loop kind, lanes as xsimd batches, parallel loops under OpenMP.
// Everything inlines into one function per (definition, schedule); nothing is interpreted.
#pragma once
#include <algorithm>
#include <utility>

#include "../core/threads.hpp"
#include "../expr/reduce.hpp"
#include "../simd/memory.hpp"
#include "../simd/stream.hpp"
#include "plan.hpp"
#include "state.hpp"

// See simd/arch.hpp: GCC 12's false -Wmaybe-uninitialized from its AVX-512 headers is reported
// along the inlining stack, so it is silenced where the nest inlines them too.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace loom::lower {

/// What a walk carries when it carries nothing.
struct no_carry {};

template <class Mode>
inline constexpr bool is_vmode = requires { Mode::width; };

/// A mode inside one of partition()'s blocks of Q: inner<Q> is known to run its whole trip (Whole)
/// or part of it, so that loop compiles only the copy of its body that runs there. Modes stack:
/// trip_known<trip_known<M, Q, true>, V, true> knows both loops (reduction_blocks' whole blocks).
template <class Mode, class Q, bool Whole>
struct trip_known : Mode {
  using trip_parent = Q;
  using trip_outer_mode = Mode;
  static constexpr bool trip_whole = Whole;
};
/// 1: Mode knows loop Y runs its whole trip; -1: part of it; 0: it does not know.
template <class Mode, class Y>
inline constexpr int trip_hint = [] {
  if constexpr (!requires { typename Mode::trip_parent; }) return 0;
  else if constexpr (std::is_same_v<inner_loop<typename Mode::trip_parent>, Y>) return Mode::trip_whole ? 1 : -1;
  else return trip_hint<typename Mode::trip_outer_mode, Y>;
}();
/// NewMode, keeping what Mode knows about a trip.
template <class Mode, class NewMode>
struct keeping_trip_of {
  using type = NewMode;
};
template <class Mode, class NewMode>
  requires requires { typename Mode::trip_parent; }
struct keeping_trip_of<Mode, NewMode> {
  using type = trip_known<NewMode, typename Mode::trip_parent, Mode::trip_whole>;
};
template <class Mode, class NewMode>
using keeping_trip = typename keeping_trip_of<Mode, NewMode>::type;

/// A mode in which the block loop inner<Q> runs one point: a reduction block's partial last block
/// of Q, one point at a time, compiles one copy of the loop's body instead of Q's factor copies.
template <class Mode, class Q>
struct one_point : Mode {
  using one_point_of = Q;
};
template <class Mode, class Y>
inline constexpr bool runs_one_point = [] {
  if constexpr (requires { typename Mode::one_point_of; }) return std::is_same_v<inner_loop<typename Mode::one_point_of>, Y>;
  else return false;
}();

template <class Plan>
struct emitter {
  using splits = typename Plan::splits;
  using T = typename Plan::T;
  using state = loop_state<typename Plan::def::vars, splits::size>;

  // ---- a loop's iteration domain [lo, lo + n) and what one iteration does ----
  template <class Y>
  struct ops;

  template <class Y>
  static LOOM_INLINE index_t dom_lo(const state& s) { return ops<Y>::lo(s); }
  template <class Y>
  static LOOM_INLINE index_t dom_n(const state& s) { return ops<Y>::n(s); }
  template <class Y>
  static LOOM_INLINE void act(state& s, index_t t) { ops<Y>::act(s, t); }

  template <char... C>
  struct ops<var<C...>> {  // a variable: iterating sets its value
    static LOOM_INLINE index_t lo(const state&) { return 0; }
    static LOOM_INLINE index_t n(const state& s) {
      if constexpr (Plan::template static_extent<var<C...>> != dyn) return Plan::template static_extent<var<C...>>;
      else return s.template extent<var<C...>>();
    }
    static LOOM_INLINE void act(state& s, index_t t) { s.template set<var<C...>>(t); }
  };
  /// P's block length: its split factor, or large_blocks<>'s when the run chose it.
  template <class P>
  static LOOM_INLINE index_t factor_of(const state& s) {
    if constexpr (std::is_same_v<P, typename Plan::large_loop>) return s.large_blocks ? Plan::large_blocks_factor : sched::split_of<splits, P>::factor;
    else return sched::split_of<splits, P>::factor;
  }

  template <class P>
  struct ops<outer_loop<P>> {  // blocks of P: iterating sets the range of inner<P>
    using S = sched::split_of<splits, P>;
    static constexpr std::size_t slot = sched::split_slot<splits, P>;
    static LOOM_INLINE index_t lo(const state&) { return 0; }
    static LOOM_INLINE index_t n(const state& s) {
      const index_t F = factor_of<P>(s);
      return loom::detail::ceil_div(dom_n<P>(s), F);
    }
    static LOOM_INLINE void act(state& s, index_t t) {
      const index_t F = factor_of<P>(s);
      const index_t pn = dom_n<P>(s);
      index_t start = t * F;
      index_t cnt = pn - start < F ? pn - start : F;
      if constexpr (std::is_same_v<typename S::tail_type, tail::shift_inwards>) {
        if (cnt < F && pn >= F) {  // the last block moves back and recomputes F - cnt points
          start = pn - F;
          cnt = F;
        }
      }
      s.lo[slot] = dom_lo<P>(s) + start;
      s.n[slot] = cnt;
    }
  };
  template <class P>
  struct ops<inner_loop<P>> {  // within a block: iterating is iterating P
    static constexpr std::size_t slot = sched::split_slot<splits, P>;
    static LOOM_INLINE index_t lo(const state& s) { return s.lo[slot]; }
    static LOOM_INLINE index_t n(const state& s) { return s.n[slot]; }
    static LOOM_INLINE void act(state& s, index_t t) { emitter::act<P>(s, t); }
  };
  template <class A, class B>
  struct ops<fused_loop<A, B>> {  // both loops in one: t = a * n_B + b
    static LOOM_INLINE index_t lo(const state&) { return 0; }
    static LOOM_INLINE index_t n(const state& s) { return dom_n<A>(s) * dom_n<B>(s); }
    static LOOM_INLINE void act(state& s, index_t t) {
      const index_t nb = dom_n<B>(s);
      emitter::act<A>(s, dom_lo<A>(s) + t / nb);
      emitter::act<B>(s, dom_lo<B>(s) + t % nb);
    }
  };

  template <class Y>
  using tail_of = typename sched::split_of<splits, typename sched::inner_parent<Y>::type>::tail_type;

  template <class Mode, bool Masked>
  using vector_mode = keeping_trip<Mode, vmode<typename Plan::lane, Plan::width, Mode::contiguous, Masked>>;

  // ---- the walk: loops at positions P..., then leaf.template at<Mode, Blk>(s, carry) ----
  // Values flow, nothing is shared: each level works on its own copy of the state, and the
  // accumulator block (the carry) goes in and comes back out by value. Small locals whose address
  // is never taken stay in registers; a shared mutable state or an accumulator array would be
  // stored to memory on every iteration, because vector loads and stores may alias anything.
  // Full: every constant-trip pure loop of the reduction block is known to run its whole trip,
  // so their tail checks are compiled out (decided once per block, outside the reduction loops).
  template <class Mode, index_t Blk, bool Full = false, class St, class Leaf, class Carry>
  static LOOM_INLINE Carry walk(std::index_sequence<>, const St& s, const Leaf& leaf, Carry carry) {
    return leaf.template at<Mode, Blk>(s, carry);
  }

  template <class Mode, index_t Blk, bool Full = false, class St, class Leaf, class Carry, std::size_t P, std::size_t... Rest>
  static LOOM_INLINE Carry walk(std::index_sequence<P, Rest...>, const St& s, const Leaf& leaf, Carry carry) {
    using D = meta::at<typename Plan::loops, P>;
    using Y = typename D::id;
    constexpr auto rest = std::index_sequence<Rest...>{};
    constexpr bool known_full = Full && Plan::template is_pure_at<P>;
    const index_t lo = dom_lo<Y>(s);
    const index_t n = dom_n<Y>(s);
    if constexpr (D::kind == loop_kind::vectorized) {                        // lanes
      constexpr index_t W = index_t(Plan::width);
      St c = s;
      act<Y>(c, lo);
      constexpr int hint = trip_hint<Mode, Y>;
      if constexpr (hint > 0) {
        carry = walk<vector_mode<Mode, false>, Blk, Full>(rest, c, leaf, carry);
      } else if (hint == 0 && (known_full || n == W)) {
        if constexpr (hint == 0) carry = walk<vector_mode<Mode, false>, Blk, Full>(rest, c, leaf, carry);
      } else if (n > 0) {
        if constexpr (std::is_same_v<tail_of<Y>, tail::guard>) {            //   scalar epilogue
          for (index_t t = 0; t < n; ++t) carry = walk<Mode, Blk, Full>(rest, stepped<Y>(s, lo + t), leaf, carry);
        } else {                                                             //   masked (or a shift with too few points)
          c.active = n;
          carry = walk<vector_mode<Mode, true>, Blk, Full>(rest, c, leaf, carry);
        }
      }
    } else if constexpr (strip_mined<P, Rest...>) {                          // outer<Q> + vector inner<Q>
      carry = strip<Mode, Blk, Full>(std::index_sequence<Rest...>{}, s, leaf, carry);
    } else if constexpr (D::kind == loop_kind::unrolled && sizeof...(Rest) == 0 && !Plan::template is_pure_at<P> &&
                         folds_unrolled<Leaf, Mode>) {                       // unrolled, folded
      // The innermost loop reduces into the output: fold its values in registers, then update the
      // output once. A whole block folds pairwise (a chain of log2 F adds instead of F - 1, so the
      // loads of the next step need not wait); a partial one (at most one per chunk of rows)
      // updates the output a point at a time, through one copy of the body rather than F guarded
      // ones.
      constexpr index_t F = Plan::template trip_of<P>;
      constexpr int hint = trip_hint<Mode, Y>;
      if (n <= 0) return carry;
      if (hint > 0 || (hint == 0 && (known_full || n == F))) {
        if constexpr (hint >= 0) {
          // Rows of one variable are read as block_rows of the first: one pointer per step (see
          // access::address).
          St first = s;
          act<Y>(first, lo);
          auto value_at = [&]<index_t U>(std::integral_constant<index_t, U>) LOOM_LAMBDA_INLINE {
            if constexpr (sched::sets_coordinate<Y>) {  // rows U of one variable
              return leaf.template partial<Mode>(block_row<St, meta::at<sched::roots_t<Y>, 0>, U>{first, s.active});
            } else {
              St c = s;
              act<Y>(c, lo + U);
              return leaf.template partial<Mode>(c);
            }
          };
          leaf.template commit<Mode>(s, pairwise<Leaf, 0, F>(value_at));
        }
      } else if constexpr (hint <= 0) {
        for (index_t u = 0; u < n; ++u) leaf.template commit<Mode>(s, leaf.template partial<Mode>(stepped<Y>(s, lo + u)));
      }
    } else if constexpr (D::kind == loop_kind::unrolled || Plan::template block_loop<P>) {  // unrolled
      constexpr index_t F = Plan::template trip_of<P>;
      constexpr index_t stride = Plan::template block_stride<P>;
      constexpr bool whole = known_full || trip_hint<Mode, Y> > 0;
      if constexpr (runs_one_point<Mode, Y>) {
        carry = walk<Mode, Blk, Full>(rest, stepped<Y>(s, lo), leaf, carry);  // n == 1
      } else {
        [&]<index_t... U>(std::integer_sequence<index_t, U...>) LOOM_LAMBDA_INLINE {
          ((carry = (whole || U < n) ? walk<Mode, Blk + U * stride, Full>(rest, stepped<Y>(s, lo + U), leaf, carry) : carry), ...);
        }(std::make_integer_sequence<index_t, F>{});
      }
    } else if constexpr (D::kind == loop_kind::parallel) {                   // OpenMP
      static_assert(std::is_empty_v<Carry>, "loom internal: nothing is carried across a parallel loop");
      const loom::detail::team_claim claim(n > 1 && leaf.points >= D::min_points ? n : 1);
      [[maybe_unused]] const int team = claim.size();
      // The loops inside are compiled once, in iterations(), which the team's threads (each its
      // static share) and the one-thread path both call: inlined into both, the whole subtree
      // would be compiled twice.
      if (team > 1) {
        LOOM_PRAGMA(omp parallel num_threads(team))
        {
          const loom::detail::range mine = loom::detail::thread_share(n);
          iterations<Y, Mode, Blk, Full>(rest, s, lo + mine.lo, lo + mine.hi, leaf);
          if constexpr (streams<Leaf>) {
            if (leaf.stream) simd::stream_fence();  // each thread orders its own streaming stores
          }
        }
      } else {
        // One thread: no parallel region at all (opening one costs ~1 us even for a team of one,
        // which a pipeline's per-row stage runs would pay thousands of times).
        iterations<Y, Mode, Blk, Full>(rest, s, lo, lo + n, leaf);
      }
    } else if constexpr (unrolled_reduction<P, Rest...>) {                  // serial outer<Q> + unrolled reduction inner<Q>
      carry = reduction_blocks<typename sched::outer_parent<Y>::type, Mode, Blk, Full>(rest, s, leaf, carry);
    } else if constexpr (partitioned<P, Rest...>) {                          // serial outer<Q>: whole blocks, then the rest
      carry = partition<typename sched::outer_parent<Y>::type, Mode, Blk, Full>(rest, s, leaf, carry);
    } else {                                                                 // serial
      for (index_t t = 0; t < n; ++t) carry = walk<Mode, Blk, Full>(rest, stepped<Y>(s, lo + t), leaf, carry);
    }
    return carry;
  }

  /// Iterations [first, last) of parallel loop Y on one thread, with the loops inside. The state
  /// and the leaf are this thread's own copies: their fields stay in registers.
  template <class Y, class Mode, index_t Blk, bool Full, class Rest, class St, class Leaf>
  static LOOM_NOINLINE void iterations(Rest rest, const St s, index_t first, index_t last, const Leaf leaf) {
    for (index_t t = first; t < last; ++t) walk<Mode, Blk, Full>(rest, stepped<Y>(s, t), leaf, no_carry{});
  }

  /// Leaf::fold over value_at(A), ..., value_at(B - 1), as a balanced tree.
  template <class Leaf, index_t A, index_t B, class F>
  static LOOM_INLINE auto pairwise(const F& value_at) {
    if constexpr (B - A == 1) {
      return value_at(std::integral_constant<index_t, A>{});
    } else {
      constexpr index_t M = A + (B - A) / 2;
      return Leaf::fold(pairwise<Leaf, A, M>(value_at), pairwise<Leaf, M, B>(value_at));
    }
  }

  template <class Leaf>
  static constexpr bool streams = [] {
    if constexpr (requires { Leaf::streams; }) return Leaf::streams;
    else return false;
  }();

  template <class Leaf, class Mode>
  static constexpr bool folds_unrolled = [] {
    if constexpr (requires { Leaf::template folds_unrolled<Mode>; }) return Leaf::template folds_unrolled<Mode>;
    else return false;
  }();

  /// The position of the loop right inside P when P is a serial outer<Q> (not a block loop) and
  /// that loop is its inner<Q>; Plan::N otherwise.
  template <std::size_t P, std::size_t... Rest>
  static constexpr std::size_t inner_right_inside = [] {
    using D = meta::at<typename Plan::loops, P>;
    if constexpr (sizeof...(Rest) == 0 || D::kind != loop_kind::serial || Plan::template block_loop<P>) {
      return Plan::N;
    } else if constexpr (!requires { typename sched::outer_parent<typename D::id>::type; }) {
      return Plan::N;
    } else {
      constexpr std::size_t next = meta::at<meta::list<std::integral_constant<std::size_t, Rest>...>, 0>::value;
      using Q = typename sched::outer_parent<typename D::id>::type;
      return std::is_same_v<typename meta::at<typename Plan::loops, next>::id, inner_loop<Q>> ? next : Plan::N;
    }
  }();

  /// A serial outer<Q> directly followed by the vectorized inner<Q>: one strip-mined loop over
  /// whole vectors and one tail after it, instead of a tail test in every iteration.
  template <std::size_t P, std::size_t... Rest>
  static constexpr bool strip_mined = [] {
    constexpr std::size_t q = inner_right_inside<P, Rest...>;
    if constexpr (q == Plan::N) return false;
    else return meta::at<typename Plan::loops, q>::kind == loop_kind::vectorized;
  }();

  /// The vectors of V when Q is outer<V> and inner<V> is the lane loop, with a tail that runs a
  /// partial last vector (masked or guarded); void otherwise.
  template <class Q>
  static constexpr auto vector_parent() {
    if constexpr (!Plan::vectorized || !requires { typename sched::outer_parent<Q>::type; }) {
      return std::type_identity<void>{};
    } else {
      using V = typename sched::outer_parent<Q>::type;
      if constexpr (std::is_same_v<typename meta::at<typename Plan::loops, Plan::vec_pos>::id, inner_loop<V>> &&
                    !std::is_same_v<tail_of<inner_loop<V>>, tail::shift_inwards>)
        return std::type_identity<V>{};
      else
        return std::type_identity<void>{};
    }
  }

  /// A serial outer<Q> right outside its unrolled inner<Q>, a loop of the reduction, Q the vectors
  /// of the lanes (a row sum's `unroll<outer<k>, 4>`, each unrolled step its own accumulator).
  /// (Not for scalar steps: g++ 12 at -O3 vectorizes the blocks loop of four int accumulators
  /// wrongly, an even number of blocks summing to less; the tests' int dot products caught it.)
  template <std::size_t P, std::size_t... Rest>
  static constexpr bool unrolled_reduction = [] {
    constexpr std::size_t q = inner_right_inside<P, Rest...>;
    if constexpr (q == Plan::N) {
      return false;
    } else {
      using Q = typename sched::outer_parent<typename meta::at<typename Plan::loops, P>::id>::type;
      return meta::at<typename Plan::loops, q>::kind == loop_kind::unrolled && !Plan::template is_pure_at<q> &&
             !std::is_void_v<typename decltype(vector_parent<Q>())::type>;
    }
  }();

  /// Whether some loop of the nest is an unrolled_reduction: only those read the run's from_memory.
  static constexpr bool reads_from_memory = []<std::size_t... P>(std::index_sequence<P...>) {
    return (unrolled_reduction<P, P + 1> || ... || false);
  }(std::make_index_sequence<(Plan::N > 0 ? Plan::N - 1 : 0)>{});

  /// unrolled_reduction, in cache: the blocks of F steps (inner<Q>'s factor) whose points are all
  /// whole vectors run the unrolled body with no tail test at any step or vector; the points after
  /// them (the last, partial block and the row's partial vector) run one at a time through the
  /// first step's copy, into its accumulator (a reduction's accumulators are combined at the end,
  /// so which one a point goes to changes only the order of the combination). A row sum in L2
  /// runs 1.5-2x as fast. A run from memory takes every point that way: there four accumulators'
  /// back-to-back misses read rows of 128-256 floats 1.5-2x slower than one's
  /// (docs/tuning.md#tight-reductions).
  template <class Q, class Mode, index_t Blk, bool Full, class St, class Leaf, class Carry, std::size_t... Rest>
  static LOOM_INLINE Carry reduction_blocks(std::index_sequence<Rest...> rest, const St& s, const Leaf& leaf, Carry carry) {
    const index_t F = factor_of<Q>(s);
    constexpr std::size_t slot = sched::split_slot<splits, Q>;
    const index_t lo = dom_lo<Q>(s), n = dom_n<Q>(s);
    using V = typename decltype(vector_parent<Q>())::type;
    const index_t full = dom_n<V>(s) / factor_of<V>(s);  // points of Q that are whole vectors
    using whole_mode = trip_known<trip_known<Mode, Q, true>, V, true>;
    const index_t whole = s.from_memory ? 0 : full / F;
    St c = s;
    c.n[slot] = F;
    for (index_t t = 0; t < whole; ++t) {
      c.lo[slot] = lo + t * F;
      carry = walk<whole_mode, Blk, Full>(rest, c, leaf, carry);
    }
    c.n[slot] = 1;
    for (index_t u = whole * F; u < n; ++u) {
      c.lo[slot] = lo + u;
      carry = walk<one_point<Mode, Q>, Blk, Full>(rest, c, leaf, carry);
    }
    return carry;
  }

  /// A serial outer<Q> whose inner<Q> is unrolled or vectorized further in (not right inside it:
  /// that is strip_mined, or a plain unrolled loop). Halide's loop partitioning: the whole blocks
  /// run a copy of the body in which inner<Q>'s trip is the constant factor, so every per-point
  /// tail test below folds away, and one more copy runs the last, partial block.
  template <std::size_t P, std::size_t... Rest>
  static constexpr bool partitioned = [] {
    using D = meta::at<typename Plan::loops, P>;
    if constexpr (sizeof...(Rest) < 2 || D::kind != loop_kind::serial || Plan::template block_loop<P>) {
      return false;
    } else if constexpr (!requires { typename sched::outer_parent<typename D::id>::type; }) {
      return false;
    } else {
      using Inner = inner_loop<typename sched::outer_parent<typename D::id>::type>;
      using ids = sched::ids<typename Plan::loops>;
      if constexpr (!meta::contains<ids, Inner>) {
        return false;
      } else {
        constexpr std::size_t q = meta::index_of<ids, Inner>;
        return q > P + 1 && (q == Plan::vec_pos || meta::at<typename Plan::loops, q>::kind == loop_kind::unrolled ||
                             Plan::template block_loop<q>);
      }
    }
  }();

  /// partitioned: blocks of F (Q's split factor) with the count F known to the compiler, then the
  /// partial block (without it, the vector loop of a row block, say, tests for a tail at every
  /// vector, and a masked copy of its body sits inside the hot loop).
  template <class Q, class Mode, index_t Blk, bool Full, class St, class Leaf, class Carry, std::size_t... Rest>
  static LOOM_INLINE Carry partition(std::index_sequence<Rest...> rest, const St& s, const Leaf& leaf, Carry carry) {
    const index_t F = factor_of<Q>(s);
    constexpr std::size_t slot = sched::split_slot<splits, Q>;
    constexpr bool shift = std::is_same_v<typename sched::split_of<splits, Q>::tail_type, tail::shift_inwards>;
    const index_t lo = dom_lo<Q>(s), n = dom_n<Q>(s);
    // Under shift_inwards every block is whole, the last one moved back to end at the extent (when
    // there is a whole one); otherwise the whole blocks, then the partial one.
    const index_t whole = shift && n >= F ? loom::detail::ceil_div(n, F) : n / F;
    // inner<Q> runs its whole trip in the whole blocks, part of it in the last one.
    using whole_mode = trip_known<Mode, Q, true>;
    using partial_mode = trip_known<Mode, Q, false>;
    St c = s;
    c.n[slot] = F;
    for (index_t t = 0; t < whole; ++t) {
      if constexpr (shift) c.lo[slot] = lo + t * F < lo + n - F ? lo + t * F : lo + n - F;
      else c.lo[slot] = lo + t * F;
      carry = walk<whole_mode, Blk, Full>(rest, c, leaf, carry);
    }
    if (whole * F < n) {
      c.lo[slot] = lo + whole * F;
      c.n[slot] = n - whole * F;
      carry = walk<partial_mode, Blk, Full>(rest, c, leaf, carry);
    }
    return carry;
  }

  /// Whether a loop at a position in [Begin, End) sets (or ranges over) variable X.
  template <class X, std::size_t Begin, std::size_t End>
  static constexpr bool looped_in = []<std::size_t... I>(std::index_sequence<I...>) {
    return (meta::contains<sched::roots_t<typename meta::at<typename Plan::loops, Begin + I>::id>, X> || ... || false);
  }(std::make_index_sequence<End - Begin>{});
  template <std::size_t P>
  struct fixed_from {
    template <class X>
    struct pred : std::bool_constant<looped_in<X, 0, P> && !looped_in<X, P, Plan::N>> {};
  };
  /// The variables that only loops outside position P set: fixed while the loops from P in run.
  template <std::size_t P>
  using fixed_outside = meta::filter<typename Plan::def::vars, fixed_from<P>::template pred>;

  /// A strip (the vector loop of a row): a leaf that can fold the row's fixed coordinates into its
  /// accesses' bases does so once per strip (access::rebase), so each vector addresses its inputs
  /// from one pointer apiece. Every point of the strip, tails included, runs the folded leaf.
  template <class Mode, index_t Blk, bool Full, class St, class Leaf, class Carry, std::size_t V, std::size_t... Rest>
  static LOOM_INLINE Carry strip(std::index_sequence<V, Rest...> seq, const St& s, const Leaf& leaf, Carry carry) {
    using Fixed = fixed_outside<V - 1>;
    if constexpr (std::is_same_v<St, state> && Fixed::size > 0 && requires { leaf.template rebased<Fixed>(s); })
      return strip_points<Mode, Blk, Full>(seq, rebased_state<state, Fixed>(s), leaf.template rebased<Fixed>(s), carry);
    else
      return strip_points<Mode, Blk, Full>(seq, s, leaf, carry);
  }

  template <class Mode, index_t Blk, bool Full, class St, class Leaf, class Carry, std::size_t V, std::size_t... Rest>
  static LOOM_INLINE Carry strip_points(std::index_sequence<V, Rest...>, const St& s, const Leaf& leaf, Carry carry) {
    using Y = typename meta::at<typename Plan::loops, V>::id;  // inner<Q>, the lanes
    using Q = typename sched::inner_parent<Y>::type;
    using Tail = tail_of<Y>;
    constexpr index_t W = index_t(Plan::width);
    constexpr std::size_t slot = sched::split_slot<splits, Q>;
    constexpr auto rest = std::index_sequence<Rest...>{};
    using full_mode = vector_mode<Mode, false>;
    const index_t lo = dom_lo<Q>(s), n = dom_n<Q>(s);
    const index_t whole = n / W;
    auto vector_at = [&](index_t start, index_t active) LOOM_LAMBDA_INLINE {
      St c = s;
      c.lo[slot] = start;
      c.n[slot] = active;
      c.active = active;
      act<Q>(c, start);
      return c;
    };
    const index_t left = n - whole * W;
    if constexpr (std::is_same_v<Tail, tail::shift_inwards>) {
      // Halide's ShiftInwards: whole vectors, then one more whole vector moved back to end at the
      // extent. (Clamping every vector's start instead is one loop and one copy of the body, but a
      // compare and a move per vector, which the fused chains measurably pay: docs/tuning.md#tails.)
      if (whole > 0) {
        carry = whole_vectors<full_mode, Blk, Full>(rest, lo, whole, s.interleaved, vector_at, leaf, carry);
        if (left > 0) carry = walk<full_mode, Blk, Full>(rest, vector_at(lo + n - W, W), leaf, carry);
        return carry;
      }
    } else {
      carry = whole_vectors<full_mode, Blk, Full>(rest, lo, whole, s.interleaved, vector_at, leaf, carry);
    }
    if (left > 0) {
      if constexpr (std::is_same_v<Tail, tail::guard>) {                    // scalar epilogue
        for (index_t u = 0; u < left; ++u) carry = walk<Mode, Blk, Full>(rest, stepped<Q>(s, lo + whole * W + u), leaf, carry);
      } else {                                                               // masked (or a shift with too few points)
        carry = walk<vector_mode<Mode, true>, Blk, Full>(rest, vector_at(lo + whole * W, left), leaf, carry);
      }
    }
    return carry;
  }

  /// A strip's whole vectors from lo: in order, or under interleave<K> (when the run chose it) K
  /// equal parts at once (a vector from each in turn; a run-time loop over the parts, one copy of
  /// the body), then the rest.
  template <class Mode, index_t Blk, bool Full, class Rest, class At, class Leaf, class Carry>
  static LOOM_INLINE Carry whole_vectors(Rest rest, index_t lo, index_t whole, [[maybe_unused]] bool interleaved, const At& vector_at,
                                         const Leaf& leaf, Carry carry) {
    constexpr index_t W = index_t(Plan::width);
    constexpr index_t K = Plan::interleave_parts;
    if constexpr (K > 1) {
      // Not interleaved, the vectors run in the plain loop below, a second copy of the body: the
      // passes below with one part and no parts ran in-cache loops at half speed
      // (docs/tuning.md#interleaved-streams).
      if (interleaved) {
        const auto& il_leaf = knowing_read_ahead<true>(leaf);
        // Parts an odd number of cache lines long, so no two start a power of two apart: parts
        // that do share their cache sets and run at a tenth of the speed.
        constexpr index_t per_line = std::max<index_t>(1, 64 / (W * index_t(sizeof(T))));  // vectors per line
        index_t lines = whole / K / per_line;
        if (lines % 2 == 0 && lines > 0) --lines;
        const index_t part = lines * per_line;
        // Two passes through one copy of the body (each copy is compile time): the K parts a
        // vector from each in turn, then what is left, as one part.
        index_t first = lo, steps = part, parts = K;
        for (int pass = 0; pass < 2; ++pass) {
          for (index_t t = 0; t < steps; ++t)
            for (index_t k = 0; k < parts; ++k) carry = walk<Mode, Blk, Full>(rest, vector_at(first + (k * part + t) * W, W), il_leaf, carry);
          first = lo + K * part * W;
          steps = whole - K * part;
          parts = 1;
        }
        return carry;
      }
    }
    const auto& plain_leaf = knowing_read_ahead<false>(leaf);
    for (index_t t = 0; t < whole; ++t) carry = walk<Mode, Blk, Full>(rest, vector_at(lo + t * W, W), plain_leaf, carry);
    return carry;
  }

  /// When prefetch<> and interleave<> choose by the same threshold, a run reads ahead exactly when
  /// it interleaves: the interleaved loop then reads ahead and the plain one does not, known at
  /// compile time, instead of a test per vector. (The test took two vector registers from the
  /// loop, whose constants were then reloaded every vector: docs/tuning.md#interleaved-streams.)
  /// Other leaves, and other thresholds, keep the test.
  template <bool On, class Leaf>
  static LOOM_INLINE decltype(auto) knowing_read_ahead(const Leaf& leaf) {
    if constexpr (Plan::prefetches && Plan::interleave_parts > 1 && Plan::prefetch_min_bytes == Plan::interleave_min_bytes &&
                  requires { leaf.template knowing_read_ahead<On>(); })
      return leaf.template knowing_read_ahead<On>();
    else
      return (leaf);
  }

  /// The state of one iteration t of loop Y: a copy of s with Y's iteration applied. (A function
  /// of the state alone, not of the rest of the walk: a function that also walked the loops inside
  /// would be one more instantiation holding the whole subtree, for the compiler to optimize again
  /// at every level.)
  template <class Y, class St>
  static LOOM_INLINE St stepped(const St& s, index_t t) {
    St c = s;
    act<Y>(c, t);
    return c;
  }

  /// Calls f.template operator()<S, InnerPos, OuterPos>() for each split S whose inner loop is a
  /// pure loop inside the reduction block: the splits that decide whether a block is full.
  template <class F>
  static constexpr void for_each_block_split(F&& f) {
    meta::for_each_type<splits>([&]<class S>(S*) {
      using P = typename S::parent;
      constexpr std::size_t inner_pos = Plan::template pos_of_descendant<inner_loop<P>>;
      constexpr std::size_t outer_pos = Plan::template pos_of_descendant<outer_loop<P>>;
      if constexpr (inner_pos >= Plan::red_pos && inner_pos < Plan::N && Plan::template is_pure_at<inner_pos>)
        f.template operator()<S, inner_pos, outer_pos>();
    });
  }

  /// block_is_full's answer when the types alone give it (no block's range comes from an
  /// enclosing loop): the reduction block is then compiled once, not twice.
  static constexpr bool fullness_varies = [] {
    bool varies = false;
    for_each_block_split([&]<class S, std::size_t I, std::size_t O>() { varies = varies || O < Plan::red_pos; });
    return varies;
  }();
  static constexpr bool full_by_type = [] {
    bool full = true;
    for_each_block_split([&]<class S, std::size_t I, std::size_t O>() {
      if constexpr (O >= Plan::red_pos) full = full && Plan::template const_trip<typename S::parent> % S::factor == 0;
    });
    return full;
  }();
  /// When one split alone makes a block partial (its outer loop outside the reduction, its inner
  /// loop a block loop of the reduction outside the lanes, every other split full by type): its
  /// position in splits, else splits::size. Its partial block then runs one point at a time.
  static constexpr std::size_t one_point_split = [] {
    std::size_t found = splits::size, count = 0;
    bool block_loop_outside_lanes = false;
    for_each_block_split([&]<class S, std::size_t I, std::size_t O>() {
      if constexpr (O < Plan::red_pos) {
        ++count;
        found = meta::index_of<splits, S>;
        block_loop_outside_lanes = std::is_same_v<typename meta::at<typename Plan::loops, I>::id, inner_loop<typename S::parent>> &&
                                   Plan::template block_loop<I> && (!Plan::vectorized || I < Plan::vec_pos);
      }
    });
    return count == 1 && block_loop_outside_lanes && full_by_type ? found : splits::size;
  }();
  /// At the entry of the reduction block: will every constant-trip pure loop inside it run its
  /// whole trip? True when each split whose inner loop is inside the block either got a full
  /// range from an enclosing loop or divides a constant trip.
  static LOOM_INLINE bool block_is_full(const state& s) {
    bool full = true;
    for_each_block_split([&]<class S, std::size_t I, std::size_t O>() {
      using P = typename S::parent;
      if constexpr (O < Plan::red_pos) full = full && s.n[sched::split_slot<splits, P>] == factor_of<P>(s);
      else full = full && Plan::template const_trip<P> % S::factor == 0;
    });
    return full;
  }

  // ---- position lists ----
  template <std::size_t Begin, std::size_t End>
  static constexpr auto range_seq() {
    return []<std::size_t... I>(std::index_sequence<I...>) { return std::index_sequence<(Begin + I)...>{}; }(
        std::make_index_sequence<End - Begin>{});
  }
  template <std::size_t... P>
  static constexpr auto pure_only(std::index_sequence<P...>) {
    constexpr std::size_t n = ((Plan::template is_pure_at<P> ? 1 : 0) + ... + 0);
    constexpr auto arr = [] {
      std::array<std::size_t, n + 1> a{};
      std::size_t k = 0;
      ((Plan::template is_pure_at<P> ? (void)(a[k++] = P) : void()), ...);
      return a;
    }();
    return [&]<std::size_t... I>(std::index_sequence<I...>) { return std::index_sequence<arr[I]...>{}; }(
        std::make_index_sequence<n>{});
  }
};

}  // namespace loom::lower

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
