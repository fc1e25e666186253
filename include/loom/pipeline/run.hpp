// SPDX-License-Identifier: MIT
// loom/pipeline/run.hpp — loom::run on a pipeline. Before any loop: the region every stage must
// compute, from its readers' affine accesses over their own regions (bounds flow backwards from
// the output), and the bounds of every tensor read. Then the stages run in order: a root stage
// over its whole region into its buffer; a stage computed at a consumer's loop inside that
// consumer, whose outer loops (down to the deepest such loop) this driver runs itself, computing
// each producer over the region one iteration reads into the thread's own buffer, and handing the
// rest of the consumer's nest to the single-definition emitter over the iteration's box.
#pragma once
#include <algorithm>
#include <array>
#include <string>

#include "../core/scratch.hpp"
#include "../core/threads.hpp"
#include "../lower/run.hpp"
#include "lower.hpp"

namespace loom {

namespace detail {

inline constexpr std::size_t max_stage_rank = 8;

template <class Y>
inline constexpr bool is_outer_loop = false;
template <class Y>
inline constexpr bool is_outer_loop<outer_loop<Y>> = is_var<Y>;
template <class Y>
inline constexpr bool is_inner_loop = false;
template <class Y>
inline constexpr bool is_inner_loop<inner_loop<Y>> = is_var<Y>;

/// A box of an index space: [lo, lo + ext) per dimension.
struct box {
  std::array<index_t, max_stage_rank> lo{}, ext{};
  bool empty(std::size_t rank) const {
    for (std::size_t d = 0; d < rank; ++d)
      if (ext[d] <= 0) return true;
    return false;
  }
  index_t points(std::size_t rank) const {
    index_t n = 1;
    for (std::size_t d = 0; d < rank; ++d) n *= std::max<index_t>(ext[d], 0);
    return n;
  }
};

/// Grows `into` (rank R) to hold [lo, hi] in dimension d; `fresh` marks an empty box so far.
inline void widen(box& into, std::size_t d, index_t lo, index_t hi, bool fresh) {
  if (fresh) {
    into.lo[d] = lo;
    into.ext[d] = hi - lo + 1;
  } else {
    const index_t l = std::min(into.lo[d], lo), h = std::max(into.lo[d] + into.ext[d] - 1, hi);
    into.lo[d] = l;
    into.ext[d] = h - l + 1;
  }
}

/// The extents of a stage's run over box b: its pure variables from b, its reduction variables
/// from the tensors they index on their own (all must agree), which is where they are defined.
template <class Def>
checked_state<Def> stage_extents(const Def& d, const box& b) {
  using vars = typename Def::vars;
  checked_state<Def> s;
  using out_idx = typename Def::lhs_type::index_types;
  [&]<std::size_t... D>(std::index_sequence<D...>) {
    ((s.ext[meta::index_of<vars, meta::at<out_idx, D>>] = b.ext[D]), ...);
  }(std::make_index_sequence<Def::lhs_type::rank>{});
  using rv = typename Def::reduction_vars;
  meta::for_each_type<rv>([&]<class V>(V*) { s.ext[meta::index_of<vars, V>] = -1; });
  d.rhs.for_each_access([&](const auto& a) {
    using A = std::remove_cvref_t<decltype(a)>;
    if constexpr (!reads_stage<A>) {
      [&]<std::size_t... D>(std::index_sequence<D...>) {
        ([&] {
          using I = meta::at<typename A::index_types, D>;
          if constexpr (is_var<I> && meta::contains<rv, I>) {
            index_t& e = s.ext[meta::index_of<vars, I>];
            const index_t n = a.view.extent(D);
            if (e < 0) e = n;
            else if (e != n)
              throw shape_error(detail::cat("loom::shape_error: reduction variable ", I::name(), " has extent ", e,
                                            " and ", n, " (", to_string(a), " dimension ", D, ")"));
          }
        }(), ...);
      }(std::make_index_sequence<A::rank>{});
    }
  });
  meta::for_each_type<rv>([&]<class V>(V*) {
    if (s.ext[meta::index_of<vars, V>] < 0)
      throw shape_error(detail::cat("loom::shape_error: reduction variable ", V::name(),
                                    " indexes no tensor dimension on its own (only stages), so its extent is unknown"));
  });
  return s;
}

/// Widens `need` by the indices definition d (run over box b, extents s) reads from stage Id.
/// Returns false when it reads none (need unchanged).
template <class Id, class Def>
bool add_required(const Def& d, const checked_state<Def>& s, const box& b, box& need, bool fresh) {
  using vars = typename Def::vars;
  using pure = typename Def::pure_vars;
  using out_idx = typename Def::lhs_type::index_types;
  auto start = [&]<class V>() -> index_t {
    if constexpr (meta::contains<pure, V>) return b.lo[meta::index_of<out_idx, V>];
    else return 0;
  };
  bool any = false;
  d.rhs.for_each_access([&](const auto& a) {
    using A = std::remove_cvref_t<decltype(a)>;
    if constexpr (reads_stage<A>) {
      if constexpr (std::is_same_v<typename A::view_type::tag_type, Id>) {
        [&]<std::size_t... D>(std::index_sequence<D...>) {
          ([&] {
            const auto& e = std::get<D>(a.idx);
            index_t lo = e.offset(), hi = e.offset();
            meta::for_each_type<typename meta::at<typename A::index_types, D>::vars>([&]<class V>(V*) {
              const index_t k = e.template coef<V>();
              const index_t first = k * start.template operator()<V>();
              const index_t span = k * (s.ext[meta::index_of<vars, V>] - 1);
              lo += first + std::min<index_t>(span, 0);
              hi += first + std::max<index_t>(span, 0);
            });
            widen(need, D, lo, hi, fresh && !any);
          }(), ...);
        }(std::make_index_sequence<A::rank>{});
        any = true;
      }
    }
  });
  return any;
}

/// The schedule whose loops the driver runs: a specialize's first branch (its loops outside the
/// compute_at levels must be the same in every branch).
template <class S>
struct driver_schedule {
  using type = S;
};
template <class S>
  requires is_specialize<S>
struct driver_schedule<S> : driver_schedule<typename S::then_schedule> {};

/// One run of a pipeline: the lowered stages, their regions, the pipeline's buffers.
template <class Stages, class Defs, class Pipe>
struct pipeline_run {
  static constexpr std::size_t count = std::tuple_size_v<Defs>;
  template <std::size_t K>
  using info = stage_info<Stages, Defs, K>;

  Defs defs;
  std::array<box, count> total{};
  Pipe& pipe;

  /// The keys of the stages, in order.
  using keys = decltype([]<std::size_t... K>(std::index_sequence<K...>) {
    return meta::list<typename info<K>::key...>{};
  }(std::make_index_sequence<count>{}));

  template <class Id>
  static constexpr std::size_t index_of_stage = meta::index_of<keys, Id>;

  /// Does stage P compute at a loop of stage K? At which level of K's loops (else -1)?
  template <std::size_t P, std::size_t K>
  static constexpr int at_level = [] {
    using I = info<P>;
    if constexpr (I::where::where != placement::at) {
      return -1;
    } else {
      using A = meta::at<typename I::where::at_list, 0>;
      if constexpr (!std::is_same_v<stage_key<typename A::consumer>, typename info<K>::key>) {
        return -1;
      } else {
        using Plan = plan<typename info<K>::def, typename driver_schedule<typename info<K>::schedule_type>::type>;
        constexpr std::size_t pos = meta::index_of<sched::ids<typename Plan::loops>, typename A::loop>;
        return pos < Plan::loops::size ? int(pos) : -2;  // -2: not a loop of the consumer
      }
    }
  }();

  /// How many of K's outer loops the driver runs: one past the deepest compute_at level.
  template <std::size_t K>
  static constexpr int driven_depth = []<std::size_t... P>(std::index_sequence<P...>) {
    return std::max({0, (at_level<P, K> + 1)...});
  }(std::make_index_sequence<count>{});

  // ---- regions and checks ----

  void infer_regions() {
    [&]<std::size_t... K>(std::index_sequence<K...>) { (infer_region<count - 1 - K>(), ...); }(std::make_index_sequence<count>{});
  }
  template <std::size_t K>
  void infer_region() {
    using D = typename info<K>::def;
    constexpr std::size_t R = D::lhs_type::rank;
    static_assert(R <= max_stage_rank, "loom::pipeline: a stage has more than 8 dimensions");
    if constexpr (!info<K>::is_func) {
      const auto& v = std::get<K>(defs).lhs.view;
      for (std::size_t d = 0; d < R; ++d) {
        total[K].lo[d] = 0;
        total[K].ext[d] = v.extent(d);
      }
    } else {
      using Id = typename info<K>::key;
      bool fresh = true;
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        (([&] {
           if constexpr (J > K) {
             using DJ = typename info<J>::def;
             constexpr std::size_t RJ = DJ::lhs_type::rank;
             if (total[J].empty(RJ)) return;
             const auto& dj = std::get<J>(defs);
             const auto s = stage_extents(dj, total[J]);
             if (add_required<Id>(dj, s, total[J], total[K], fresh)) fresh = false;
           }
         }()),
         ...);
      }(std::make_index_sequence<count>{});
      if (fresh)  // read by nothing that runs: nothing to compute
        for (std::size_t d = 0; d < R; ++d) total[K].ext[d] = 0;
    }
  }

  /// Every tensor a stage reads, over the stage's whole region: a bounds_error before any loop.
  template <std::size_t K>
  void check_reads() {
    using D = typename info<K>::def;
    if (total[K].empty(D::lhs_type::rank)) return;
    D d = std::get<K>(defs);
    set_output_box<K>(d, total[K]);
    const auto s = stage_extents(d, total[K]);
    const auto st = starts_of(d);
    d.rhs.for_each_access([&](const auto& a) {
      if constexpr (!reads_stage<std::remove_cvref_t<decltype(a)>>) a.check_bounds(s, st);
    });
  }

  // ---- views ----

  /// A stage's values in a buffer holding box b (row-major).
  template <std::size_t K>
  auto stage_view(void* data, const box& b) const {
    using V = typename info<K>::def::lhs_type::view_type;
    constexpr std::size_t R = V::rank;
    shape_t<R> e{}, o{};
    for (std::size_t d = 0; d < R; ++d) {
      e[d] = b.ext[d];
      o[d] = b.lo[d];
    }
    using T = typename V::value_type;
    return V(typename V::base_view(static_cast<T*>(data), dims<R>(e), V::tag_type::name()), o);
  }

  /// Sets d's output to box b of stage K's storage (root stages and tensors; a stage computed at a
  /// loop gets its thread's buffer from the driver).
  template <std::size_t K, class D>
  void set_output_box(D& d, const box& b) {
    using V = typename D::lhs_type::view_type;
    constexpr std::size_t R = V::rank;
    shape_t<R> first{}, n{};
    for (std::size_t r = 0; r < R; ++r) {
      first[r] = b.lo[r];
      n[r] = b.ext[r];
    }
    if constexpr (info<K>::is_func) {
      if constexpr (info<K>::where::where == placement::root) d.lhs.view = stage_view<K>(pipe.buffer(K).get(0), total[K]).box(first, n);
    } else {
      d.lhs.view = std::get<K>(defs).lhs.view.box(first, n);
    }
  }

  /// Points d's reads of root stages at their buffers.
  template <class D>
  void attach_roots(D& d) {
    d.rhs.for_each_access([&](auto& a) {
      using A = std::remove_cvref_t<decltype(a)>;
      if constexpr (reads_stage<A>) {
        constexpr std::size_t P = index_of_stage<typename A::view_type::tag_type>;
        if constexpr (P < count && info<P>::where::where == placement::root)
          a.view = stage_view<P>(pipe.buffer(P).get(0), total[P]);
      }
    });
  }

  // ---- running ----

  /// Stage K over box b, its output view already in d (a copy the caller owns).
  template <std::size_t K, class D>
  void run_stage(D& d, const box& b, bool threads_free) {
    attach_roots(d);
    if constexpr (driven_depth<K> == 0) {
      run_box<K>(d, b);
    } else {
      const auto out = d.lhs.view;  // the driver narrows d's output per iteration
      drive<K, 0>(d, b, out, threads_free);
    }
  }

  /// The single-definition nest of stage K over box b (d's output is that box).
  template <std::size_t K, class D>
  void run_box(const D& d, const box& b) {
    constexpr std::size_t R = D::lhs_type::rank;
    if (b.empty(R)) return;
    const auto s = stage_extents(d, b);
    index_t points = b.points(R);
    meta::for_each_type<typename D::scheduled_rvars>([&]<class V>(V*) { points *= std::max<index_t>(s.template extent<V>(), 1); });
    run_leaf<typename info<K>::schedule_type>(d, s, points);
  }

  /// The driver: level L of stage K's loops, inside box cur; `out` is K's output over the box
  /// the driver started with.
  template <std::size_t K, int L, class D, class Out>
  void drive(D& d, const box& cur, const Out& out, bool threads_free) {
    using Def = typename info<K>::def;
    using out_idx = typename Def::lhs_type::index_types;
    constexpr std::size_t R = Def::lhs_type::rank;
    if constexpr (L == driven_depth<K>) {
      shape_t<R> first{}, n{};
      for (std::size_t r = 0; r < R; ++r) {
        first[r] = cur.lo[r];
        n[r] = cur.ext[r];
      }
      d.lhs.view = out.box(first, n);
      run_box<K>(d, cur);
    } else {
      using Plan = plan<Def, typename driver_schedule<typename info<K>::schedule_type>::type>;
      using Loop = meta::at<typename Plan::loops, std::size_t(L)>;
      using Id = typename Loop::id;
      constexpr bool whole = is_var<Id>;
      constexpr bool outer = is_outer_loop<Id>;
      constexpr bool inner = is_inner_loop<Id>;
      static_assert(whole || outer || inner,
                    "loom::compute_at: the consumer's loops outside the compute_at loop must be its variables, or the "
                    "outer<>/inner<> loops of their splits (not fused loops)");
      using V = root_var_t<Id>;
      static_assert(meta::contains<typename Def::pure_vars, V>,
                    "loom::compute_at: the consumer's loops down to the compute_at loop must be loops over its output's "
                    "variables (not reduction loops)");
      static_assert(Loop::kind == loop_kind::serial || Loop::kind == loop_kind::parallel,
                    "loom::compute_at: the consumer's loops down to the compute_at loop cannot be vectorized or unrolled");
      constexpr std::size_t dim = meta::index_of<out_idx, V>;
      const index_t lo = cur.lo[dim], hi = cur.lo[dim] + cur.ext[dim];
      index_t step = 1;
      if constexpr (outer) step = sched::split_of<typename Plan::splits, V>::factor;
      const index_t trips = step == 1 ? hi - lo : (hi - lo + step - 1) / step;
      auto iteration = [&](D& dd, index_t t) {
        box nb = cur;
        nb.lo[dim] = lo + t * step;
        nb.ext[dim] = std::min(step, hi - nb.lo[dim]);
        compute_producers_at<K, L>(dd, nb);
        drive<K, L + 1>(dd, nb, out, false);
      };
      if (Loop::kind == loop_kind::parallel && threads_free && trips > 1) {
        const team_claim claim(trips);
        [[maybe_unused]] const int team = claim.size();
        LOOM_PRAGMA(omp parallel for schedule(static) if (team > 1) num_threads(team))
        for (index_t t = 0; t < trips; ++t) {
          D dd = d;
          iteration(dd, t);
        }
      } else {
        for (index_t t = 0; t < trips; ++t) iteration(d, t);
      }
    }
  }

  /// Tag of the per-thread buffer of a stage computed at a loop.
  template <class Id>
  struct at_buffer {};

  /// Computes every stage that runs at level L of K's loops over the region box `nb` of K reads,
  /// into the thread's buffer, and points d's reads of it there.
  template <std::size_t K, int L, class D>
  void compute_producers_at(D& d, const box& nb) {
    [&]<std::size_t... P>(std::index_sequence<P...>) {
      (([&] {
         if constexpr (at_level<P, K> == L) {
           using DP = typename info<P>::def;
           using Id = typename info<P>::key;
           using T = typename DP::value_type;
           constexpr std::size_t RP = DP::lhs_type::rank;
           const auto s = stage_extents(d, nb);
           box need{};
           if (!add_required<Id>(d, s, nb, need, true)) return;
           T* buf = scratch<T, at_buffer<Id>>(std::size_t(need.points(RP)));
           const auto view = stage_view<P>(buf, need);
           DP dp = std::get<P>(defs);
           dp.lhs.view = view;
           run_stage<P>(dp, need, false);
           d.rhs.for_each_access([&](auto& a) {
             using A = std::remove_cvref_t<decltype(a)>;
             if constexpr (reads_stage<A>) {
               if constexpr (std::is_same_v<typename A::view_type::tag_type, Id>) a.view = view;
             }
           });
         }
       }()),
       ...);
    }(std::make_index_sequence<count>{});
  }

  void run_all() {
    infer_regions();
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (([&] {
         using I = info<K>;
         if constexpr (I::is_func && I::where::where == placement::root) {
           using D = typename I::def;
           pipe.buffer(K).get(std::max<std::size_t>(std::size_t(total[K].points(D::lhs_type::rank)), 1) * sizeof(typename D::value_type));
         }
       }()),
       ...);
      (check_reads<K>(), ...);
    }(std::make_index_sequence<count>{});
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (([&] {
         using I = info<K>;
         if constexpr (I::where::where != placement::at) {
           using D = typename I::def;
           constexpr std::size_t R = D::lhs_type::rank;
           if (total[K].empty(R)) return;
           D d = std::get<K>(defs);
           set_output_box<K>(d, total[K]);
           run_stage<K>(d, total[K], true);
         }
       }()),
       ...);
    }(std::make_index_sequence<count>{});
  }
};

}  // namespace detail

/// Runs a pipeline under a schedule of stage<Name, Directives...> (any stage not named gets its
/// default: inlined, or computed at root when it has a reduction; its loops the default
/// schedule's). Throws loom::error before anything is written.
template <class... Stages, class... Defs>
void run(Pipeline<Defs...>& p) {
  static_assert((detail::is_stage_directive<Stages> && ...),
                "loom::run on a pipeline: its schedule is a list of loom::stage<Name, Directives...>");
  using S = meta::list<Stages...>;
  auto lowered = detail::lower_pipeline<S>(p.definitions());
  detail::pipeline_run<S, decltype(lowered), Pipeline<Defs...>> r{lowered, {}, p};
  r.run_all();
}

}  // namespace loom
