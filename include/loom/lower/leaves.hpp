// loom/lower/leaves.hpp — what happens at the bottom of the nest: store a point, accumulate into
// the register block, finish the block (combine partials, apply the epilogue, store), or update
// the output when it is the accumulator.
#pragma once
#include <type_traits>

#include "emit.hpp"
#include "find_reduction.hpp"

namespace loom::lower {

template <class Plan>
struct leaves {
  using def = typename Plan::def;
  using T = typename Plan::T;
  using E = emitter<Plan>;
  using state = typename E::state;
  static constexpr bool accumulate_output = std::is_same_v<typename def::mode, assign_add>;

  /// out = rhs (or out += rhs) at one point or one vector of points.
  struct store {
    const def* d;
    index_t points;
    template <class Mode, index_t Blk>
    LOOM_INLINE void at(state& s) {
      if constexpr (is_vmode<Mode>) {
        auto v = d->rhs.template eval_v<Mode>(s);
        if constexpr (accumulate_output) v = d->lhs.template eval_v<Mode>(s) + v;
        d->lhs.template store_v<Mode>(s, v);
      } else {
        T v = d->rhs.eval(s);
        if constexpr (accumulate_output) v = d->lhs.eval(s) + v;
        d->lhs.store(s, v);
      }
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
      return xsimd::select(simd::first_lanes<V>(s.active), v, V(op::template identity<T>()));
    else
      return v;
  }

  template <class Acc>
  struct accumulate {
    const def* d;
    Acc* acc;
    index_t points;
    template <class Mode, index_t Blk>
    LOOM_INLINE void at(state& s) {
      const auto& body = scheduled_reduction(d->rhs).body;
      if constexpr (is_vmode<Mode>) {
        acc[Blk] = op::combine(acc[Blk], masked_identity<Mode>(s, body.template eval_v<Mode>(s)));
      } else {
        acc[Blk] = op::combine(acc[Blk], body.eval(s));
      }
    }
  };

  template <class Acc>
  struct finish {
    const def* d;
    Acc* acc;
    index_t points;
    template <class Mode, index_t Blk>
    LOOM_INLINE void at(state& s) {
      Acc v = acc[Blk];
      for (index_t q = 1; q < Plan::red_block; ++q) v = op::combine(v, acc[Blk + q]);
      if constexpr (Plan::lane_is_reduction) {
        epilogue<Mode>(s, red::horizontal<op>(v));
      } else {
        epilogue<Mode>(s, v);
      }
    }
    template <class Mode, class R>
    LOOM_INLINE void epilogue(state& s, const R& r) {
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
    const def* d;
    index_t points;
    template <class Mode, index_t Blk>
    LOOM_INLINE void at(state& s) {
      constexpr bool vector_acc = is_vmode<Mode> || (Plan::vectorized && Plan::vec_pos >= Plan::red_pos);
      using Acc = std::conditional_t<vector_acc, simd::batch<T, Plan::width>, T>;
      Acc acc[Plan::block_size];
      for (auto& a : acc) a = Acc(op::template identity<T>());
      accumulate<Acc> add{d, acc, points};
      E::template walk<Mode, 0>(E::template range_seq<Plan::red_pos, Plan::N>(), s, add);
      finish<Acc> fin{d, acc, points};
      E::template walk<Mode, 0>(E::pure_only(E::template range_seq<Plan::red_pos, Plan::N>()), s, fin);
    }
  };

  /// out = combine(out, body): the output is the accumulator.
  struct update {
    const def* d;
    index_t points;
    template <class Mode, index_t Blk>
    LOOM_INLINE void at(state& s) {
      const auto& body = d->rhs.body;
      if constexpr (is_vmode<Mode> && Plan::lane_is_reduction) {
        const T r = red::horizontal<op>(masked_identity<Mode>(s, body.template eval_v<Mode>(s)));
        d->lhs.store(s, op::combine(d->lhs.eval(s), r));
      } else if constexpr (is_vmode<Mode>) {
        d->lhs.template store_v<Mode>(s, op::combine(d->lhs.template eval_v<Mode>(s), body.template eval_v<Mode>(s)));
      } else {
        d->lhs.store(s, op::combine(d->lhs.eval(s), body.eval(s)));
      }
    }
  };
};

}  // namespace loom::lower
