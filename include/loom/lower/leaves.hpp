// SPDX-License-Identifier: MIT
// loom/lower/leaves.hpp — what happens at the bottom of the nest: store a point, accumulate into
// the register block, finish the block (combine partials, apply the epilogue, store), or update
// the output when it is the accumulator.
#pragma once
#include <array>
#include <type_traits>

#include "../simd/prefetch.hpp"
#include "store_hint.hpp"
#include "emit.hpp"
#include "find_reduction.hpp"
#include "invariant.hpp"

namespace loom::lower {

template <class Plan>
struct leaves {
  using def = typename Plan::def;
  using T = typename Plan::T;
  using E = emitter<Plan>;
  using state = typename E::state;
  static constexpr bool accumulate_output = std::is_same_v<typename def::mode, assign_add>;

  /// prefetch<V, D>: every input that moves along V, D steps of V ahead (see directives.hpp).
  /// Whether a run reads ahead is chosen once per run (ahead_t::on: the bytes it touches against
  /// the directive's threshold, set by walk_nest with the run's other choices), as is the
  /// distance of each input whose stride along V is known only at run time (prefetch_ahead): D
  /// steps, or simd::prefetch_fallback_bytes when D steps land beyond
  /// simd::prefetch_reach_bytes(). The choice is a test per leaf in the one nest, not a second
  /// copy of the nest (each copy is compile time): one predictable branch per vector, or none
  /// where the loop already knows the answer (emitter::knowing_read_ahead).
  static constexpr std::size_t n_inputs = def::rhs_type::accesses::size;
  /// prefetch_stores<C>: where the consumer stores each point (lower/store_hint.hpp), set by
  /// walk_nest; nothing otherwise.
  struct no_store_hint {};
  using store_hint = std::conditional_t<Plan::prefetches_stores, held_access<store_hint_t<typename def::lhs_type>>, no_store_hint>;
  static store_hint unbound_store_hint() {
    if constexpr (Plan::prefetches_stores) return store_hint_of<typename def::lhs_type>::unbound();
    else return {};
  }
  struct ahead_t {
    std::array<index_t, n_inputs> steps{};
    bool on = false;
    [[no_unique_address]] store_hint writes = unbound_store_hint();
  };
  template <class A>
  static constexpr bool immediate_ahead = [] {
    constexpr index_t fixed = A::template static_stride_of<typename Plan::prefetch_var>;
    if constexpr (fixed == unknown_coef) {
      return false;
    } else {
      // A stride the type fixes (a row-major row) and a short distance: an immediate.
      index_t steps = 0, bytes = 0;
      const bool over = __builtin_mul_overflow(Plan::prefetch_distance, fixed, &steps) ||
                        __builtin_mul_overflow(steps, index_t(sizeof(typename A::element_type)), &bytes);
      return !over && bytes <= simd::prefetch_reach_floor && bytes >= -simd::prefetch_reach_floor;
    }
  }();
  /// The inputs a leaf reads ahead: those that move along V, except, in a vectorized nest, those
  /// the lanes do not move along (a row's m(i)): their element is the same for the whole row, and
  /// asking for it again at every vector took a load slot per vector for one line (softmax's
  /// exponentials' stage 1.00 -> 0.9x the time, docs/tuning.md#store-prefetch).
  template <class A>
  static constexpr bool reads_ahead = [] {
    if constexpr (!meta::contains<typename A::vars, typename Plan::prefetch_var>) return false;
    else if constexpr (Plan::vectorized) return meta::contains<typename A::vars, typename Plan::lane>;
    else return true;
  }();
  static ahead_t prefetch_ahead(const def& d) {
    ahead_t ahead{};
    if constexpr (Plan::prefetches) {
      const index_t reach = simd::prefetch_reach_bytes();
      std::size_t n = 0;
      d.rhs.for_each_access([&](const auto& a) {
        using A = std::remove_cvref_t<decltype(a)>;
        if constexpr (reads_ahead<A> && !immediate_ahead<A>) {
          constexpr index_t size = index_t(sizeof(typename A::element_type));
          // (Products checked: a distance or stride near 2^63 is as far as it gets.)
          const index_t stride = a.template stride_of<typename Plan::prefetch_var>();
          index_t steps = 0, bytes = 0;
          const bool over = __builtin_mul_overflow(Plan::prefetch_distance, stride, &steps) || __builtin_mul_overflow(steps, size, &bytes);
          const bool far = over || bytes > reach || bytes < -reach;
          const bool backwards = (Plan::prefetch_distance < 0) != (stride < 0);
          ahead.steps[n] = far ? (backwards ? -simd::prefetch_fallback_bytes : simd::prefetch_fallback_bytes) / size : steps;
        }
        ++n;
      });
    }
    return ahead;
  }
  /// Whether a leaf reads ahead: as its run chose (a test per vector, unless every run does), or
  /// known to the loop it is in (the emitter's interleaved and plain loops: see whole_vectors).
  enum class read_ahead { by_run, always, never };
  template <read_ahead RA = read_ahead::by_run, class C>
  static LOOM_INLINE void prefetch_inputs(const def& d, const C& s, [[maybe_unused]] const ahead_t& ahead) {
    if constexpr (Plan::prefetches && RA != read_ahead::never) {
      if (RA == read_ahead::by_run && Plan::prefetch_min_bytes != 0 && !ahead.on) return;
      using V = typename Plan::prefetch_var;
      std::size_t n = 0;
      d.rhs.for_each_access([&](const auto& a) LOOM_LAMBDA_INLINE {
        using A = std::remove_cvref_t<decltype(a)>;
        if constexpr (reads_ahead<A>) {
          if constexpr (immediate_ahead<A>) simd::prefetch_l2(a.address(s), Plan::prefetch_distance * A::template static_stride_of<V>);
          else simd::prefetch_l2(a.address_ahead(s, ahead.steps[n]));
        }
        ++n;
      });
    }
  }

  /// prefetch_stores<C>: asks for the line the consumer stores at this point, for writing.
  template <class C>
  static LOOM_INLINE void prefetch_stores(const C& s, [[maybe_unused]] const ahead_t& ahead) {
    if constexpr (Plan::prefetches_stores) simd::prefetch_for_write(ahead.writes.a.address_ahead(s, 0));
  }

  /// out = rhs (or out += rhs) at one point or one vector of points. Under Rebased (a list of
  /// variables), the accesses' bases hold those variables' terms (rebased, below), the points are
  /// evaluated as rebased_state, and the parts of the right side that read only those variables
  /// are computed once (lower/invariant.hpp): the strip's right side, `rhs`.
  template <read_ahead RA = read_ahead::by_run, class Rebased = meta::list<>>
  struct store {
    // The strip's right side, where it differs from d.rhs (something is computed once).
    static constexpr bool hoists = [] {
      if constexpr (Rebased::size == 0) return false;
      else return !std::is_same_v<strip_rhs_t<typename def::rhs_type, Rebased, state>, typename def::rhs_type>;
    }();
    using strip_rhs = std::conditional_t<hoists, strip_rhs_t<typename def::rhs_type, Rebased, state>, no_strip_rhs>;
    // A private copy, not a pointer: xsimd's stores may alias anything, so only fields of a local
    // whose address never escapes stay in registers across them.
    def d;
    index_t points;
    bool stream = false;  // stream_stores chose non-temporal stores for this run
    ahead_t ahead = prefetch_ahead(d);
    [[no_unique_address]] strip_rhs rhs{};
    static constexpr bool streams = Plan::streams;
    /// The same leaf in a loop that knows whether the run reads ahead.
    template <bool On>
    LOOM_INLINE store<On ? read_ahead::always : read_ahead::never, Rebased> knowing_read_ahead() const {
      return {d, points, stream, ahead, rhs};
    }
    /// This leaf for the points of a strip whose coordinates of Fixed are s's: the parts fixed
    /// along the strip computed (before the accesses move), then every access rebased (d.rhs's
    /// only for prefetch_inputs when the strip evaluates rhs).
    template <class Fixed>
    LOOM_INLINE store<RA, Fixed> rebased(const state& s) const {
      static_assert(Rebased::size == 0, "loom internal: a leaf is rebased once");
      using R = store<RA, Fixed>;
      R r = [&] {
        if constexpr (R::hoists) return R{d, points, stream, ahead, hoist_invariants<Fixed>::apply(d.rhs, s)};
        else return R{d, points, stream, ahead};
      }();
      r.d.lhs.template rebase<Fixed>(s);
      if constexpr (Plan::prefetches_stores) r.ahead.writes.a.template rebase<Fixed>(s);
      if constexpr (!R::hoists || Plan::prefetches) r.d.rhs.for_each_access([&](auto& a) LOOM_LAMBDA_INLINE { a.template rebase<Fixed>(s); });
      if constexpr (R::hoists) r.rhs.for_each_access([&](auto& a) LOOM_LAMBDA_INLINE { a.template rebase<Fixed>(s); });
      return r;
    }
    LOOM_INLINE const auto& right_side() const {
      if constexpr (!hoists) return d.rhs;
      else return rhs;
    }
    template <class Mode, index_t Blk, class S>
    LOOM_INLINE no_carry at(const S& s, no_carry) const {
      static_assert(std::is_same_v<loom::rebased_vars<S>, Rebased>, "loom internal: a rebased leaf runs on its rebased state");
      prefetch_inputs<RA>(d, s, ahead);
      prefetch_stores(s, ahead);
      if constexpr (is_vmode<Mode>) {
        auto v = right_side().template eval_v<Mode>(s);
        if constexpr (accumulate_output) v = d.lhs.template eval_v<Mode>(s) + v;
        if constexpr (streams && Mode::contiguous && !Mode::masked) {
          // Whole vectors at aligned addresses stream; a shifted last vector does not.
          auto* p = d.lhs.address(s);
          if (stream && simd::can_stream<decltype(v)>(p)) {
            simd::store_stream(p, v);
            return {};
          }
        }
        d.lhs.template store_v<Mode>(s, v);
      } else {
        T v = right_side().eval(s);
        if constexpr (accumulate_output) v = d.lhs.eval(s) + v;
        d.lhs.store(s, v);
      }
      return {};
    }
  };

  template <class R, bool Has = (R::reductions::size > 0)>
  struct op_of {
    using type = red::sum;
  };
  template <class R>
  struct op_of<R, true> {
    using type = typename std::remove_cvref_t<decltype(scheduled_reduction(std::declval<const R&>()))>::op_type;
  };
  using op = typename op_of<typename def::rhs_type>::type;

  template <class Mode, class V>
  static LOOM_INLINE V masked_identity(const state& s, V v) {
    // Lanes past the extent must not contribute when the lanes are the reduction variable.
    if constexpr (Mode::masked && Plan::lane_is_reduction)
      return simd::select(simd::first_lanes<V>(s.active), v, V(op::template identity<T>()));
    else
      return v;
  }

  template <class Acc>
  using block_t = std::array<Acc, Plan::block_size>;

  template <class Acc>
  struct accumulate {
    const def* d;
    index_t points;
    const ahead_t* ahead;
    template <class Mode, index_t Blk>
    LOOM_INLINE block_t<Acc> at(const state& s, block_t<Acc> acc) const {
      prefetch_inputs(*d, s, *ahead);
      const auto& body = scheduled_reduction(d->rhs).body;
      if constexpr (is_vmode<Mode>) {
        if constexpr (Mode::masked && Plan::lane_is_reduction)  // inactive lanes must add the identity
          std::get<Blk>(acc) = op::combine(std::get<Blk>(acc), masked_identity<Mode>(s, body.template eval_v<Mode>(s)));
        else
          std::get<Blk>(acc) = red::accumulate_v<op, Mode>(std::get<Blk>(acc), body, s);
      } else {
        std::get<Blk>(acc) = op::combine(std::get<Blk>(acc), body.eval(s));
      }
      return acc;
    }
  };

  template <class Acc>
  struct finish {
    const def* d;
    index_t points;
    template <class Mode, index_t Blk>
    LOOM_INLINE block_t<Acc> at(const state& s, block_t<Acc> acc) const {
      // Partial results of the unrolled reduction loops, combined in a fixed order.
      Acc v = std::get<Blk>(acc);
      [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
        ((v = op::combine(v, std::get<Blk + 1 + Q>(acc))), ...);
      }(std::make_integer_sequence<index_t, Plan::red_block - 1>{});
      if constexpr (Plan::lane_is_reduction) {
        epilogue<Mode>(s, red::horizontal<op>(v));
      } else {
        epilogue<Mode>(s, v);
      }
      return acc;
    }
    template <class Mode, class R>
    LOOM_INLINE void epilogue(const state& s, const R& r) const {
      with_reduction_value<state, R> c{s, r, s.active};
      if constexpr (is_vmode<Mode>) {
        auto v = d->rhs.template eval_v<Mode>(c);
        if constexpr (accumulate_output) v = d->lhs.template eval_v<Mode>(s) + v;
        d->lhs.template store_v<Mode>(s, v);
      } else {
        T v = d->rhs.eval(c);
        if constexpr (accumulate_output) v = d->lhs.eval(s) + v;
        d->lhs.store(s, v);
      }
    }
  };

  /// Runs the reduction loops for one point (or vector, or block of points) of the output.
  struct region {
    def d;
    index_t points;
    ahead_t ahead = prefetch_ahead(d);
    template <class Mode, index_t Blk>
    LOOM_INLINE no_carry at(const state& s, no_carry) const {
      constexpr bool vector_acc = is_vmode<Mode> || (Plan::vectorized && Plan::vec_pos >= Plan::red_pos);
      using Acc = std::conditional_t<vector_acc, simd::batch<T, Plan::width>, T>;
      block_t<Acc> acc;
      acc.fill(Acc(op::template identity<T>()));
      if constexpr (!E::fullness_varies) block<Mode, E::full_by_type>(s, acc);  // one copy when the types decide
      else if (E::block_is_full(s)) block<Mode, true>(s, acc);
      else if constexpr (E::one_point_split < E::splits::size) partial_by_points<Mode>(s, acc);
      else block<Mode, false>(s, acc);
      return {};
    }
    /// The partial block of the one split that makes blocks partial, a point of it at a time:
    /// one copy of the block's body, not a second copy of the whole block. At most one block a
    /// run: out of line, so that it leaves the registers of the hot loop alone.
    template <class Mode, class Acc>
    LOOM_COLD void partial_by_points(const state& s, block_t<Acc> acc) const {
      using Q = typename meta::at<typename E::splits, E::one_point_split>::parent;
      constexpr std::size_t slot = sched::split_slot<typename E::splits, Q>;
      state c = s;
      c.n[slot] = 1;
      for (index_t u = 0; u < s.n[slot]; ++u) {
        c.lo[slot] = s.lo[slot] + u;
        block<one_point<Mode, Q>, true>(c, acc);
      }
    }
    template <class Mode, bool Full, class Acc>
    LOOM_INLINE void block(const state& s, block_t<Acc> acc) const {
      acc = E::template walk<Mode, 0, Full>(E::template range_seq<Plan::red_pos, Plan::N>(), s, accumulate<Acc>{&d, points, &ahead}, acc);
      E::template walk<Mode, 0, Full>(E::pure_only(E::template range_seq<Plan::red_pos, Plan::N>()), s, finish<Acc>{&d, points}, acc);
    }
  };

  /// out = combine(out, body): the output is the accumulator.
  struct update {
    def d;
    index_t points;
    ahead_t ahead = prefetch_ahead(d);
    /// An unrolled reduction loop innermost under vector lanes of the output (colsum's rows):
    /// the emitter folds its values in registers and updates the output once (see emit.hpp),
    /// rather than loading and storing the output for each of them.
    template <class Mode>
    static constexpr bool folds_unrolled = is_vmode<Mode> && !Plan::lane_is_reduction;
    template <class Mode, class C>
    LOOM_INLINE auto partial(const C& s) const {
      prefetch_inputs(d, s, ahead);
      return d.rhs.body.template eval_v<Mode>(s);
    }
    template <class V>
    static LOOM_INLINE V fold(const V& a, const V& b) {
      return op::combine(a, b);
    }
    template <class Mode, class V>
    LOOM_INLINE void commit(const state& s, const V& v) const {
      d.lhs.template store_v<Mode>(s, op::combine(d.lhs.template eval_v<Mode>(s), v));
    }
    template <class Mode, index_t Blk>
    LOOM_INLINE no_carry at(const state& s, no_carry) const {
      prefetch_inputs(d, s, ahead);
      const auto& body = d.rhs.body;
      if constexpr (is_vmode<Mode> && Plan::lane_is_reduction) {
        const T r = red::horizontal<op>(masked_identity<Mode>(s, body.template eval_v<Mode>(s)));
        d.lhs.store(s, op::combine(d.lhs.eval(s), r));
      } else if constexpr (is_vmode<Mode>) {
        d.lhs.template store_v<Mode>(s, red::accumulate_v<op, Mode>(d.lhs.template eval_v<Mode>(s), body, s));
      } else {
        d.lhs.store(s, op::combine(d.lhs.eval(s), body.eval(s)));
      }
      return {};
    }
  };
};

}  // namespace loom::lower
