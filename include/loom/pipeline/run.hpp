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
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "../core/scratch.hpp"
#include "../core/threads.hpp"
#include "../expr/boundary.hpp"
#include "../lower/check.hpp"
#include "../lower/run.hpp"
#include "arena.hpp"
#include "body_stage.hpp"
#include "hoist.hpp"
#include "repeated.hpp"
#include "lower.hpp"

namespace loom {

template <class... Stages, class... Defs>
void run(Pipeline<Defs...>& p);

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
  /// Its points; a box whose count overflows 64 bits is refused (add_required keeps each extent
  /// in range, but not their product).
  index_t points(std::size_t rank) const {
    index_t n = 1;
    for (std::size_t d = 0; d < rank; ++d)
      if (__builtin_mul_overflow(n, std::max<index_t>(ext[d], 0), &n))
        throw shape_error("loom::shape_error: a stage's region has more points than 64 bits count");
    return n;
  }
};

/// Grows `into` (rank R) to hold [lo, hi] in dimension d; `fresh` marks an empty box so far.
/// False when the extent overflows 64 bits (into is then unchanged).
inline bool widen(box& into, std::size_t d, index_t lo, index_t hi, bool fresh) {
  const index_t l = fresh ? lo : std::min(into.lo[d], lo);
  index_t h = hi, e = 0;
  if (!fresh && __builtin_add_overflow(into.lo[d], into.ext[d] - 1, &h)) return false;
  h = fresh ? hi : std::max(h, hi);
  if (__builtin_sub_overflow(h, l, &e) || __builtin_add_overflow(e, index_t{1}, &e)) return false;
  into.lo[d] = l;
  into.ext[d] = e;
  return true;
}

/// The extents of a stage's run over box b: its pure variables from b, its reduction variables
/// from the tensors they index on their own (all must agree), which is where they are defined.
/// A reduction variable that indexes only stages gets the extent `from_stage(access, dimension)`
/// gives (the pipeline's natural extent of that stage dimension; -1 if none).
struct no_stage_extents {
  template <class A>
  index_t operator()(const A&, std::size_t) const { return -1; }
};

template <class Def, class FromStage = no_stage_extents>
checked_state<Def> stage_extents(const Def& d, const box& b, const FromStage& from_stage = {}) {
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
  // Variables only stages give an extent: the extent of that stage's dimension where the stage
  // is defined (the tensors its definition reads along it).
  if constexpr (rv::size > 0) {
    d.rhs.for_each_access([&](const auto& a) {
      using A = std::remove_cvref_t<decltype(a)>;
      if constexpr (reads_stage<A>) {
        [&]<std::size_t... D>(std::index_sequence<D...>) {
          ([&] {
            using I = meta::at<typename A::index_types, D>;
            if constexpr (is_var<I> && meta::contains<rv, I>) {
              index_t& e = s.ext[meta::index_of<vars, I>];
              if (e < 0) e = from_stage(a, D);
            }
          }(), ...);
        }(std::make_index_sequence<A::rank>{});
      }
    });
  }
  meta::for_each_type<rv>([&]<class V>(V*) {
    if (s.ext[meta::index_of<vars, V>] < 0)
      throw shape_error(detail::cat("loom::shape_error: reduction variable ", V::name(),
                                    " indexes no tensor dimension on its own, and no stage it indexes has a known extent there"));
  });
  return s;
}

/// Widens `need` by the indices definition d (run over box b, extents s) reads from stage Id.
/// Returns false when it reads none (need unchanged).
template <class Id, class Def>
bool add_required(const Def& d, const checked_state<Def>& s, const box& b, box& need, bool fresh) {
  using out_idx = typename Def::lhs_type::index_types;
  var_starts<typename Def::vars> starts;  // the pure variables start at the box, the others at 0
  [&]<std::size_t... D>(std::index_sequence<D...>) {
    ((starts.first[meta::index_of<typename Def::vars, meta::at<out_idx, D>>] = b.lo[D]), ...);
  }(std::make_index_sequence<Def::lhs_type::rank>{});
  bool any = false;
  d.rhs.for_each_access([&](const auto& a) {
    using A = std::remove_cvref_t<decltype(a)>;
    if constexpr (reads_stage<A>) {
      if constexpr (std::is_same_v<typename A::view_type::tag_type, Id>) {
        if (A::never_evaluated(s)) return;  // it needs no point of the stage
        [&]<std::size_t... D>(std::index_sequence<D...>) {
          ([&] {
            const auto [lo, hi] = a.template index_range<D>(s, starts);
            if (!widen(need, D, lo, hi, fresh && !any))
              throw bounds_error(detail::cat("loom::bounds_error: ", to_string(a), ": dimension ", D,
                                             " of the region of the stage it reads overflows 64-bit indices"));
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

/// A sliding window's step: `done` is the box computed so far, `need` the box an iteration
/// reads. Returns false when `need` lies inside `done`; otherwise narrows `need` to the part to
/// compute and grows `done` to cover it: the slab past `done`'s end when `need` leaves `done`
/// along one dimension only and continues it there (the usual case: consecutive rows), else all
/// of `need` (done becomes need). The slab spans `done`'s whole range along the other
/// dimensions, which `need` may only partly cover (loops between store and compute that walk a
/// second dimension): `done` then stays a box of computed points.
inline bool slide(box& done, box& need, std::size_t rank) {
  int moved = -1;
  bool inside = true;
  for (std::size_t d = 0; d < rank; ++d) {
    const index_t dlo = done.lo[d], dhi = done.lo[d] + done.ext[d], nlo = need.lo[d], nhi = need.lo[d] + need.ext[d];
    if (nlo >= dlo && nhi <= dhi) continue;
    inside = false;
    const bool continues = nlo >= dlo && nlo <= dhi && nhi > dhi;
    moved = (moved == -1 && continues) ? int(d) : -2;
  }
  if (inside) return false;
  if (moved >= 0) {
    const std::size_t d = std::size_t(moved);
    const index_t dhi = done.lo[d] + done.ext[d], nhi = need.lo[d] + need.ext[d];
    for (std::size_t e = 0; e < rank; ++e) {
      need.lo[e] = e == d ? dhi : done.lo[e];
      need.ext[e] = e == d ? nhi - dhi : done.ext[e];
    }
    done.ext[d] = nhi - done.lo[d];
  } else {
    done = need;
  }
  return true;
}

/// How a sliding window's storage is folded: along dimension `dim`, `rows` rows (0: not folded,
/// the storage holds everything the store loop's iteration reads).
struct storage_fold {
  std::size_t dim = 0;
  index_t rows = 0;
};

/// Rows a folded window keeps per row its iterations read: room for three more windows' worth of
/// new rows before the live rows move to the front (a move per three windows, against storage
/// for the whole strip).
inline constexpr index_t fold_windows = 4;

/// The fold of a sliding window whose store loop's iteration reads `stored` and whose first
/// compute iteration reads `first`: along the one dimension where `first` is shorter (the loops
/// walk it), fold_windows times the window (at least 4 rows more than it), when that is shorter
/// than `stored`; else none. Every later iteration reads a window of that size (the same
/// stencil, one step further), and the storage keeps at least one.
inline storage_fold fold_storage(const box& stored, const box& first, std::size_t rank) {
  storage_fold f;
  int dims = 0;
  for (std::size_t d = 0; d < rank; ++d)
    if (first.ext[d] < stored.ext[d]) {
      ++dims;
      f.dim = d;
    } else if (first.lo[d] != stored.lo[d] || first.ext[d] != stored.ext[d]) {
      return {};
    }
  if (dims != 1) return {};
  const index_t w = first.ext[f.dim];
  const index_t rows = std::max(fold_windows * w, w + 4);
  if (rows >= stored.ext[f.dim]) return {};
  f.rows = rows;
  return f;
}

/// The first thing wrong with where a pipeline's schedule puts its stages.
enum class placement_problem {
  none,
  two_placements,
  placement_of_output,
  at_unknown_consumer,
  at_unknown_loop,
  at_reader_outside,
  unknown_stage,
  store_without_compute_at,
  store_other_consumer,
  store_unknown_loop,
  store_inside_compute,
  prefetch_stores_not_at,
  prefetch_stores_consumer_not_tensor,
  prefetch_stores_not_pointwise,
  prefetch_stores_reduction,
  prefetch_stores_twice,
  stage_named_twice,
  at_itself,
};

template <placement_problem P>
constexpr void report_placement() {
  using enum placement_problem;
  static_assert(P != two_placements, "loom::stage: give a stage at most one of compute_inline, compute_root, compute_at");
  static_assert(P != placement_of_output,
                "loom::stage: a tensor output is computed where it is defined; compute_inline/compute_root/compute_at/"
                "store_at apply to Funcs");
  static_assert(P != at_unknown_consumer,
                "loom::compute_at<Consumer, Loop>: Consumer is not a stage of this pipeline that runs (a Func computed at "
                "root or at a loop, or loom::output)");
  static_assert(P != at_unknown_loop, "loom::compute_at<Consumer, Loop>: Loop is not a loop of Consumer's nest (after its schedule's splits)");
  static_assert(P != at_reader_outside,
                "loom::compute_at: a stage computed inside a consumer's loop is read by a stage that runs outside that "
                "loop; compute every reader at the same loop (or the producer at root)");
  static_assert(P != unknown_stage, "loom::stage<Name, ...>: Name is not a stage of this pipeline (a Func it defines, or loom::output)");
  static_assert(P != store_without_compute_at, "loom::store_at needs a compute_at at a loop inside the store_at loop");
  static_assert(P != store_other_consumer, "loom::store_at<Consumer, Loop>: store a stage at a loop of the consumer it is computed at");
  static_assert(P != store_unknown_loop, "loom::store_at<Consumer, Loop>: Loop is not a loop of Consumer's nest (after its schedule's splits)");
  static_assert(P != prefetch_stores_not_at,
                "loom::prefetch_stores<C>: the stage must be computed at a loop of C (compute_at<C, Loop>)");
  static_assert(P != prefetch_stores_consumer_not_tensor,
                "loom::prefetch_stores<C>: C must write a tensor (loom::output, or another tensor the pipeline defines)");
  static_assert(P != prefetch_stores_twice, "loom::prefetch_stores: the stage names prefetch_stores twice (one consumer per stage)");
  static_assert(P != prefetch_stores_reduction,
                "loom::prefetch_stores<C>: this stage has a reduction; ask for the consumer's lines in a stage without "
                "one (a reduction writes each point once, after its loop)");
  static_assert(P != prefetch_stores_not_pointwise,
                "loom::prefetch_stores<C>: C must read the stage only at its own point (out(i, j) = f(e(i, j), ...)), "
                "so that each point of the stage is a point C stores");
  static_assert(P != at_itself,
                "loom::compute_at<Consumer, Loop>: Consumer is the stage itself; a stage is computed at a loop of a "
                "stage that reads it");
  static_assert(P != stage_named_twice,
                "loom::run on a pipeline: a stage is named by two stage<Name, ...> entries; give each stage one entry "
                "with all of its directives");
  static_assert(P != store_inside_compute,
                "loom::store_at<Consumer, Loop>: the storage must live at a loop outside the compute_at loop (store_at<C, "
                "outer<y>> with compute_at<C, inner<y>>)");
}

/// The problems a schedule's stage<...> list has before any stage is inlined: a stage it names
/// that the pipeline does not have, two placements, store_at without compute_at.
template <class Stages, class Written, class St>
consteval placement_problem directive_problem() {
  using Key = typename stage_key_of<typename St::key>::type;
  if constexpr (!std::is_same_v<Key, output_stage> && !meta::contains<Written, Key> && !is_hoisted_key<Key>) {
    return placement_problem::unknown_stage;
  } else {
    using W = stage_placement<typename directives_of<Key, Stages>::type, true, false>;
    constexpr std::size_t entries = []<class... E>(meta::list<E...>*) {
      return (std::size_t(std::is_same_v<typename stage_key_of<typename E::key>::type, Key>) + ... + 0);
    }(static_cast<Stages*>(nullptr));
    if constexpr (entries > 1) return placement_problem::stage_named_twice;
    else if constexpr (W::placements > 1) return placement_problem::two_placements;
    else if constexpr (W::store_list::size > 0 && W::at_list::size == 0) return placement_problem::store_without_compute_at;
    else return placement_problem::none;
  }
}
template <class Stages, class Written, class... St>
consteval placement_problem first_directive_problem_of(meta::list<St...>*) {
  placement_problem first = placement_problem::none;
  ((first = first != placement_problem::none ? first : directive_problem<Stages, Written, St>()), ...);
  return first;
}
template <class Stages, class... Defs>
consteval placement_problem first_directive_problem() {
  return first_directive_problem_of<Stages, meta::list<written_stage_t<Defs>...>>(static_cast<Stages*>(nullptr));
}

/// One run of a pipeline: the lowered stages, their regions, the pipeline's buffers.
/// The definitions of a Pipeline type, as a meta::list.
template <class P>
struct pipeline_defs;
template <class... D>
struct pipeline_defs<Pipeline<D...>> {
  using type = meta::list<D...>;
};

template <class Stages, class Defs, class Pipe>
struct pipeline_run {
  using defs_type = Defs;
  pipeline_run(const Defs& d, Pipe& p) : defs(d), pipe(p) {}
  static constexpr std::size_t count = std::tuple_size_v<Defs>;
  template <std::size_t K>
  using info = stage_info<Stages, Defs, K, typename pipeline_defs<Pipe>::type>;

  Defs defs;
  std::array<box, count> total{};
  Pipe& pipe;

  /// The keys of the stages, in order.
  using keys = decltype([]<std::size_t... K>(std::index_sequence<K...>) {
    return meta::list<typename info<K>::key...>{};
  }(std::make_index_sequence<count>{}));

  template <class Id>
  static constexpr std::size_t index_of_stage = meta::index_of<keys, Id>;
  /// The stage whose stores stage P asks for (prefetch_stores<C>), or void.
  template <std::size_t P>
  using stores_consumer = typename prefetch_stores_consumer<typename info<P>::dirs>::type;

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

  /// The level of K's loops where stage P's storage lives (store_at), else -1; -2: not a loop
  /// of K.
  template <std::size_t P, std::size_t K>
  static constexpr int store_level = [] {
    using I = info<P>;
    if constexpr (I::where::store_list::size == 0 || at_level<P, K> < 0) {
      return -1;
    } else {
      using A = meta::at<typename I::where::store_list, 0>;
      if constexpr (!std::is_same_v<stage_key<typename A::consumer>, typename info<K>::key>) {
        return -3;  // stored at another consumer than the one it is computed at
      } else {
        using Plan = plan<typename info<K>::def, typename driver_schedule<typename info<K>::schedule_type>::type>;
        constexpr std::size_t pos = meta::index_of<sched::ids<typename Plan::loops>, typename A::loop>;
        return pos < Plan::loops::size ? int(pos) : -2;
      }
    }
  }();

  /// How many of K's outer loops the driver runs: one past the deepest compute_at level.
  template <std::size_t K>
  static constexpr int driven_depth = []<std::size_t... P>(std::index_sequence<P...>) {
    return std::max({0, (at_level<P, K> + 1)...});
  }(std::make_index_sequence<count>{});

  // ---- regions and checks ----

  /// The extent of dimension `dim` of stage Id where its definition is defined: the extent of a
  /// tensor dimension its definition reads with that dimension's variable alone (through other
  /// stages if need be); -1 when none does.
  template <class Id>
  index_t natural_extent(std::size_t dim, int depth = 0) const {
    constexpr std::size_t P = index_of_stage<Id>;
    index_t found = -1;
    if constexpr (P < count) {
      using D = typename info<P>::def;
      using out_idx = typename D::lhs_type::index_types;
      const D& d = std::get<P>(defs);
      [&]<std::size_t... Dm>(std::index_sequence<Dm...>) {
        (([&] {
           if (Dm != dim) return;
           using V = meta::at<out_idx, Dm>;
           d.rhs.for_each_access([&](const auto& a) {
             using A = std::remove_cvref_t<decltype(a)>;
             [&]<std::size_t... D2>(std::index_sequence<D2...>) {
               (([&] {
                  if (found >= 0 || !std::is_same_v<meta::at<typename A::index_types, D2>, V>) return;
                  if constexpr (reads_stage<A>) {
                    if (depth < 16) found = natural_extent<typename A::view_type::tag_type>(D2, depth + 1);
                  } else {
                    found = a.view.extent(D2);
                  }
                }()),
                ...);
             }(std::make_index_sequence<A::rank>{});
           });
         }()),
         ...);
      }(std::make_index_sequence<D::lhs_type::rank>{});
    }
    return found;
  }
  /// stage_extents' source of extents for reduction variables that index only stages.
  auto natural() const {
    return [this]<class A>(const A&, std::size_t dim) { return this->template natural_extent<typename A::view_type::tag_type>(dim); };
  }

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
        total[K].lo[d] = v.origin(d);
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
             const auto s = stage_extents(dj, total[J], natural());
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
    const auto s = stage_extents(d, total[K], natural());
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
      if constexpr (info<K>::where::where == placement::root) d.lhs.view = stage_view<K>(arena_base + offset[K], total[K]).box(first, n);
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
          a.view = stage_view<P>(arena_base + offset[P], total[P]);
      }
    });
  }

  // ---- running ----

  /// Where the stages computed at a driver's loops are now: one view per stage of the pipeline,
  /// set once the stage has been computed for the current iteration.
  struct at_views {
    using views = decltype([]<std::size_t... P>(std::index_sequence<P...>) {
      return std::tuple<typename info<P>::def::lhs_type::view_type...>{};
    }(std::make_index_sequence<count>{}));
    views v{};
    std::array<bool, count> set{};
    // store_at stages: the box their readers read over the store loop's iteration (`stored`),
    // the box their storage holds now (`room`: all of `stored`, or a fold of it), how it is
    // folded, and the box computed into it so far.
    std::array<box, count> stored{};
    std::array<box, count> room{};
    std::array<storage_fold, count> fold{};
    std::array<box, count> computed{};
    std::array<bool, count> any_computed{};
  };

  /// Keeps a folded window's live rows: when this iteration's new rows (`todo`) do not fit after
  /// the rows the storage holds, the rows it still reads (from need's first row to todo's) move
  /// to the front of the storage, which then starts at need's first row. Rows before it are no
  /// longer read: the loops walk the window forwards. A window that does not fit the fold (a
  /// longer one, or one elsewhere along another dimension) unfolds the storage: all of
  /// `stored`, this iteration's window computed afresh.
  template <std::size_t P>
  void keep_live_rows(at_views& vs, const box& need, box& todo, std::size_t rank) const {
    using T = typename info<P>::def::value_type;
    const std::size_t d = vs.fold[P].dim;
    box& room = vs.room[P];
    box& done = vs.computed[P];
    auto& view = std::get<P>(vs.v);
    bool fits = need.ext[d] <= room.ext[d];
    for (std::size_t r = 0; r < rank; ++r)
      if (r != d) fits = fits && need.lo[r] >= room.lo[r] && need.lo[r] + need.ext[r] <= room.lo[r] + room.ext[r];
    if (!fits) {
      vs.fold[P] = {};
      room = vs.stored[P];
      done = need;
      todo = need;
      view = at_storage<P>(room);
      return;
    }
    if (todo.lo[d] >= room.lo[d] && todo.lo[d] + todo.ext[d] <= room.lo[d] + room.ext[d]) return;  // it fits
    T* data = view.data();
    // Row-major: the storage is outer_runs runs of ext[d] rows of `inner` elements each.
    index_t inner = 1, outer_runs = 1;
    for (std::size_t r = d + 1; r < rank; ++r) inner *= room.ext[r];
    for (std::size_t r = 0; r < d; ++r) outer_runs *= room.ext[r];
    const index_t keep_from = need.lo[d], keep = std::max<index_t>(todo.lo[d] - keep_from, 0);
    const index_t shift = keep_from - room.lo[d];
    if (keep > 0 && shift > 0)
      for (index_t o = 0; o < outer_runs; ++o) {
        T* run = data + o * room.ext[d] * inner;
        std::memmove(run, run + shift * inner, std::size_t(keep * inner) * sizeof(T));
      }
    room.lo[d] = keep_from;
    done.lo[d] = keep_from;
    done.ext[d] = todo.lo[d] + todo.ext[d] - keep_from;
    view = stage_view<P>(data, room);
  }

  /// Points def's reads of every stage set in vs at its current view.
  template <class D>
  static void point_reads(D& def, const at_views& vs) {
    def.rhs.for_each_access([&](auto& a) {
      using A = std::remove_cvref_t<decltype(a)>;
      if constexpr (reads_stage<A>) {
        constexpr std::size_t P = index_of_stage<typename A::view_type::tag_type>;
        if constexpr (P < count) {
          if (vs.set[P]) a.view = std::get<P>(vs.v);
        }
      }
    });
  }


  /// Stage K over box b, its output view already in d (a copy the caller owns).
  template <std::size_t K, class D>
  void run_stage(D& d, const box& b, bool threads_free) {
    attach_roots(d);
    if constexpr (driven_depth<K> == 0) {
      run_box<K>(d, b);
    } else {
      const auto out = d.lhs.view;  // the driver narrows d's output per iteration
      at_views vs;
      drive<K, 0>(d, b, out, threads_free, vs);
    }
  }

  /// The single-definition nest of stage K over box b (d's output is that box).
  template <std::size_t K, class D>
  void run_box(const D& d, const box& b) {
    constexpr std::size_t R = D::lhs_type::rank;
    if (b.empty(R)) return;
    if constexpr (has_boundary<typename D::rhs_type>) {
      run_partitioned<K>(d, b);
    } else {
      run_nest<K>(d, b);
    }
  }

  /// The nest of stage K's schedule over box b (d's output is that box).
  template <std::size_t K, class D>
  void run_nest(const D& d, const box& b) {
    constexpr std::size_t R = D::lhs_type::rank;
    const auto s = stage_extents(d, b, natural());
    index_t points = b.points(R);
    meta::for_each_type<typename D::scheduled_rvars>([&]<class V>(V*) { points *= std::max<index_t>(s.template extent<V>(), 1); });
    run_leaf<typename info<K>::schedule_type>(d, s, points);
  }

  /// A stage that reads through boundary conditions, over box b: the interior (where every
  /// boundary read is inside its tensor, found by interval arithmetic) runs the plain accesses
  /// at full speed; only the border slabs, at most two per dimension, evaluate the conditions
  /// (Halide partitions its loops the same way).
  template <std::size_t K, class D>
  void run_partitioned(const D& d, const box& b) {
    using out_idx = typename D::lhs_type::index_types;
    constexpr std::size_t R = D::lhs_type::rank;
    const auto s = stage_extents(d, b, natural());
    const auto inner_box = interior_of<typename D::pure_vars, typename D::vars>(d.rhs, s, starts_of(d));
    const auto full = d.lhs.view;
    auto over = [&](auto def, const box& part) {
      if (part.empty(R)) return;
      shape_t<R> first{}, n{};
      for (std::size_t r = 0; r < R; ++r) {
        first[r] = part.lo[r];
        n[r] = part.ext[r];
      }
      def.lhs.view = full.box(first, n);
      run_nest<K>(def, part);
    };
    if (inner_box.empty()) {
      over(d, b);
      return;
    }
    box in = b;
    [&]<std::size_t... r>(std::index_sequence<r...>) {
      ((in.lo[r] = inner_box.template first<meta::at<out_idx, r>>(),
        in.ext[r] = inner_box.template end<meta::at<out_idx, r>>() - in.lo[r]),
       ...);
    }(std::make_index_sequence<R>{});
    const auto plain = strip_boundaries(d.rhs);
    over(definition<typename D::lhs_type, std::remove_cvref_t<decltype(plain)>, typename D::mode>(d.lhs, plain), in);
    // The border: below and above the interior along each dimension in turn, the dimensions
    // before it already narrowed to the interior.
    box rest = b;
    for (std::size_t r = 0; r < R; ++r) {
      box below = rest, above = rest;
      below.ext[r] = in.lo[r] - rest.lo[r];
      above.lo[r] = in.lo[r] + in.ext[r];
      above.ext[r] = rest.lo[r] + rest.ext[r] - above.lo[r];
      over(d, below);
      over(d, above);
      rest.lo[r] = in.lo[r];
      rest.ext[r] = in.ext[r];
    }
  }

  /// The driver: level L of stage K's loops, inside box cur; `out` is K's output over the box
  /// the driver started with.
  template <std::size_t K, int L, class D, class Out>
  void drive(D& d, const box& cur, const Out& out, bool threads_free, at_views& vs) {
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
      auto iteration = [&](D& dd, at_views& vv, index_t t) {
        box nb = cur;
        nb.lo[dim] = lo + t * step;
        nb.ext[dim] = std::min(step, hi - nb.lo[dim]);
        compute_producers_at<K, L>(dd, nb, vv);
        drive<K, L + 1>(dd, nb, out, false, vv);
      };
      const team_claim claim(Loop::kind == loop_kind::parallel && threads_free ? trips : 1);
      [[maybe_unused]] const int team = claim.size();
      if (team > 1) {
        LOOM_PRAGMA(omp parallel for schedule(static) num_threads(team))
        for (index_t t = 0; t < trips; ++t) {
          D dd = d;
          at_views vv = vs;
          iteration(dd, vv, t);
        }
      } else {
        for (index_t t = 0; t < trips; ++t) iteration(d, vs, t);
      }
    }
  }

  /// Tag of the per-thread buffer of a stage computed at a loop.
  template <class Id>
  struct at_buffer {};

  /// Stage P's view of box b in the running thread's buffer for P (its previous contents are
  /// not kept when it grows).
  template <std::size_t P>
  auto at_storage(const box& b) const {
    using T = typename info<P>::def::value_type;
    const std::size_t points = std::size_t(b.points(info<P>::def::lhs_type::rank));
    return stage_view<P>(scratch<T, at_buffer<typename info<P>::key>>(std::max<std::size_t>(points, 1)), b);
  }

  /// prefetch_stores<C>: for each stage P that asks, C's output seen at P's points, made once per
  /// run (after an aliased output has moved to its temporary) and read by every thread.
  struct no_hint {};
  template <std::size_t P>
  using hint_slot = std::conditional_t<std::is_void_v<stores_consumer<P>>, no_hint,
                                       std::optional<lower::held_access<lower::store_hint_t<typename info<P>::def::lhs_type>>>>;
  using hint_slots = decltype([]<std::size_t... P>(std::index_sequence<P...>) {
    return std::tuple<hint_slot<P>...>{};
  }(std::make_index_sequence<count>{}));
  hint_slots hints{};
  void make_store_hints() {
    [&]<std::size_t... P>(std::index_sequence<P...>) {
      (([&] {
         if constexpr (!std::is_void_v<stores_consumer<P>>) {
           constexpr std::size_t C = index_of_stage<stores_consumer<P>>;
           std::get<P>(hints).emplace(lower::make_store_hint(std::get<P>(defs).lhs, std::get<C>(defs).lhs.view));
         }
       }()),
       ...);
    }(std::make_index_sequence<count>{});
  }

  /// Runs `body` (stage P's run inside consumer K's loop) with the running thread's hint set to
  /// K's output when P asks for K's stores (prefetch_stores<K>).
  template <std::size_t P, std::size_t K, class DP, class Body>
  void with_store_hint(const DP&, Body&& body) const {
    if constexpr (std::is_same_v<stores_consumer<P>, typename info<K>::key>) {
      const lower::scoped_store_hint<typename DP::lhs_type> hint(&std::get<P>(hints)->a);
      body();
    } else {
      body();
    }
  }

  /// The stages computed at level L of K's loops, as integral_constants of their positions.
  template <std::size_t K, int L, class Seq>
  struct producers_at;
  template <std::size_t K, int L, std::size_t... P>
  struct producers_at<K, L, std::index_sequence<P...>> {
    using type = meta::concat<meta::list<>, std::conditional_t<(at_level<P, K> >= L || store_level<P, K> == L), meta::list<std::integral_constant<std::size_t, P>>, meta::list<>>...>;
  };

  /// Computes every stage that runs at level L of K's loops, each over the region that K's box
  /// `nb` and the stages computed at that level or deeper read of it (found from the last such
  /// stage back to the first; a deeper stage's part is what it reads over all of nb), into the
  /// thread's buffer; points d's reads (and theirs) at it.
  template <std::size_t K, int L, class D>
  void compute_producers_at(D& d, const box& nb, at_views& vs) {
    using here = typename producers_at<K, L, std::make_index_sequence<count>>::type;
    constexpr std::size_t n = here::size;
    if constexpr (n > 0) {
      std::array<box, n> need{};
      std::array<bool, n> needed{};
      const auto sk = stage_extents(d, nb, natural());
      // Regions, backwards: K's needs, then each later producer's over its own region.
      [&]<std::size_t... Q>(std::index_sequence<Q...>) {
        (([&] {
           constexpr std::size_t q = n - 1 - Q;
           constexpr std::size_t P = meta::at<here, q>::value;
           using Id = typename info<P>::key;
           bool any = add_required<Id>(d, sk, nb, need[q], true);
           [&]<std::size_t... Q2>(std::index_sequence<Q2...>) {
             (([&] {
                constexpr std::size_t r = q + 1 + Q2;
                if (!needed[r]) return;
                constexpr std::size_t PR = meta::at<here, r>::value;
                const auto& dr = std::get<PR>(defs);
                const auto sr = stage_extents(dr, need[r], natural());
                if (add_required<Id>(dr, sr, need[r], need[q], !any)) any = true;
              }()),
              ...);
           }(std::make_index_sequence<n - 1 - q>{});
           needed[q] = any;
         }()),
         ...);
      }(std::make_index_sequence<n>{});
      // Then forwards: each into its buffer, read by K and by the later ones.
      [&]<std::size_t... Q>(std::index_sequence<Q...>) {
        (([&] {
           constexpr std::size_t P = meta::at<here, Q>::value;
           using DP = typename info<P>::def;
           constexpr std::size_t RP = DP::lhs_type::rank;
           if constexpr (store_level<P, K> == L) {
             // The storage of a sliding window: what every iteration below will read, nothing
             // computed into it yet. It is allocated by the first iteration, which knows how much
             // of it one iteration reads (the window, folded below).
             vs.set[P] = needed[Q];
             vs.any_computed[P] = false;
             vs.stored[P] = need[Q];
           } else if constexpr (at_level<P, K> == L && store_level<P, K> >= 0) {
             // Computed into storage that lives further out: only the part of this iteration's
             // region that earlier iterations did not compute (Halide's sliding window).
             if (!needed[Q] || !vs.set[P]) return;
             box todo = need[Q];
             box& done = vs.computed[P];
             if (vs.any_computed[P] && !slide(done, todo, RP)) return;  // all of it is there
             if (!vs.any_computed[P]) {
               done = need[Q];
               vs.fold[P] = fold_storage(vs.stored[P], need[Q], RP);
               vs.room[P] = vs.stored[P];
               if (vs.fold[P].rows > 0) {
                 vs.room[P].lo[vs.fold[P].dim] = need[Q].lo[vs.fold[P].dim];
                 vs.room[P].ext[vs.fold[P].dim] = vs.fold[P].rows;
               }
               std::get<P>(vs.v) = at_storage<P>(vs.room[P]);
             } else if (vs.fold[P].rows > 0) {
               keep_live_rows<P>(vs, need[Q], todo, RP);
             }
             vs.any_computed[P] = true;
             shape_t<RP> first{}, n{};
             for (std::size_t r = 0; r < RP; ++r) {
               first[r] = todo.lo[r];
               n[r] = todo.ext[r];
             }
             DP dp = std::get<P>(defs);
             dp.lhs.view = std::get<P>(vs.v).box(first, n);
             point_reads(dp, vs);
             with_store_hint<P, K>(dp, [&] { run_stage<P>(dp, todo, false); });
           } else if constexpr (at_level<P, K> == L) {
             if (!needed[Q]) {
               vs.set[P] = false;
               return;
             }
             std::get<P>(vs.v) = at_storage<P>(need[Q]);
             DP dp = std::get<P>(defs);
             dp.lhs.view = std::get<P>(vs.v);
             point_reads(dp, vs);
             with_store_hint<P, K>(dp, [&] { run_stage<P>(dp, need[Q], false); });
             vs.set[P] = true;
           }
         }()),
         ...);
      }(std::make_index_sequence<n>{});
      point_reads(d, vs);
    }
  }

  /// The first problem of the stages' placements, in stage order (none: every one is legal).
  static constexpr placement_problem first_placement_problem() {
    return []<std::size_t... K>(std::index_sequence<K...>) {
      placement_problem first = placement_problem::none;
      ((first = first != placement_problem::none ? first : placement_of<K>()), ...);
      return first;
    }(std::make_index_sequence<count>{});
  }
  /// The first problem of the stages' loop schedules once the placements are legal (none where a
  /// stage's definition has reported its own).
  static constexpr schedule_problem first_schedule_problem() {
    if constexpr (first_placement_problem() != placement_problem::none) {
      return schedule_problem::none;
    } else {
      return []<std::size_t... K>(std::index_sequence<K...>) {
        schedule_problem first = schedule_problem::none;
        ((first = first != schedule_problem::none ? first : stage_schedule_problem<K>()), ...);
        return first;
      }(std::make_index_sequence<count>{});
    }
  }
  template <std::size_t K>
  static constexpr schedule_problem stage_schedule_problem() {
    using D = typename info<K>::def;
    if constexpr (!well_formed<D>) return schedule_problem::none;
    else return first_problem<D, typename info<K>::schedule_type>();
  }
  /// Whether every stage's definition passed its own checks (expr/definition.hpp's reported the
  /// others).
  static constexpr bool stages_well_formed = []<std::size_t... K>(std::index_sequence<K...>) {
    return (well_formed<typename info<K>::def> && ...);
  }(std::make_index_sequence<count>{});
  /// Whether the schedule can run: no problem above. The entry points (loom::run, print_loop_nest,
  /// plan_memory) report the problems themselves, so that loom's message is a few lines from the
  /// user's call, not behind this class's frames.
  static constexpr bool runnable =
      first_placement_problem() == placement_problem::none && first_schedule_problem() == schedule_problem::none && stages_well_formed;

  /// Whether stage R reads stage P.
  template <std::size_t R, std::size_t P>
  static constexpr bool reads = meta::contains<read_stages_t<typename info<R>::def>, typename info<P>::key>;

  /// prefetch_stores<C> on stage K: computed at C, C a tensor that reads K at its own points.
  template <std::size_t K>
  static constexpr placement_problem store_prefetch_problem() {
    using C = stores_consumer<K>;
    if constexpr (std::is_void_v<C>) {
      return placement_problem::none;
    } else if constexpr (meta::filter<typename info<K>::dirs, is_prefetch_stores_t>::size > 1) {
      return placement_problem::prefetch_stores_twice;
    } else {
      using W = typename info<K>::where;
      constexpr std::size_t CI = index_of_stage<C>;
      if constexpr (W::where != placement::at || CI >= count) {
        return placement_problem::prefetch_stores_not_at;
      } else if constexpr (!std::is_same_v<stage_key<typename meta::at<typename W::at_list, 0>::consumer>, C>) {
        return placement_problem::prefetch_stores_not_at;
      } else if constexpr (info<CI>::is_func) {
        return placement_problem::prefetch_stores_consumer_not_tensor;
      } else if constexpr (info<K>::def::reductions::size > 0) {
        return placement_problem::prefetch_stores_reduction;
      } else {
        using CD = typename info<CI>::def;
        using reads = typename reads_of<typename info<K>::key, typename CD::rhs_type::accesses>::type;
        constexpr bool pointwise = []<class... A>(meta::list<A...>*) {
          return (identity_read<A, typename CD::lhs_type::index_types> && ...);
        }(static_cast<reads*>(nullptr));
        if constexpr (!pointwise) return placement_problem::prefetch_stores_not_pointwise;
        else return placement_problem::none;
      }
    }
  }

  template <std::size_t K>
  static constexpr placement_problem placement_of() {
    using I = info<K>;
    using W = typename I::where;
    if constexpr (store_prefetch_problem<K>() != placement_problem::none) {
      return store_prefetch_problem<K>();
    } else if constexpr (W::placements > 1) {
      return placement_problem::two_placements;
    } else if constexpr (!I::is_func && (W::placements > 0 || W::store_list::size > 0)) {
      return placement_problem::placement_of_output;
    } else if constexpr (W::where == placement::at) {
      using A = meta::at<typename W::at_list, 0>;
      constexpr std::size_t C = index_of_stage<stage_key<typename A::consumer>>;
      if constexpr (C >= count) {
        return placement_problem::at_unknown_consumer;
      } else if constexpr (C == K) {
        return placement_problem::at_itself;
      } else if constexpr (at_level<K, C> == -2) {
        return placement_problem::at_unknown_loop;
      } else {
        // Every reader of K must be C or a stage computed inside the same loop of C.
        constexpr bool readers_inside = []<std::size_t... R>(std::index_sequence<R...>) {
          return ((!reads<R, K> || R == C || at_level<R, C> >= at_level<K, C>) && ...);
        }(std::make_index_sequence<count>{});
        if constexpr (!readers_inside) return placement_problem::at_reader_outside;
        else if constexpr (W::store_list::size > 1) return placement_problem::two_placements;
        else if constexpr (store_level<K, C> == -3) return placement_problem::store_other_consumer;
        else if constexpr (store_level<K, C> == -2) return placement_problem::store_unknown_loop;
        else if constexpr (W::store_list::size > 0 && store_level<K, C> >= at_level<K, C>) return placement_problem::store_inside_compute;
        else return placement_problem::none;
      }
    } else if constexpr (W::store_list::size > 0) {
      return placement_problem::store_without_compute_at;
    } else if constexpr (W::where == placement::root) {
      // A root stage runs before its readers: none of the stages it reads may be computed inside
      // another stage's loops.
      constexpr bool reads_at = []<std::size_t... P>(std::index_sequence<P...>) {
        return ((reads<K, P> && info<P>::where::where == placement::at && at_level<P, K> < 0) || ...);
      }(std::make_index_sequence<count>{});
      if constexpr (reads_at) return placement_problem::at_reader_outside;
      else return placement_problem::none;
    } else {
      return placement_problem::none;
    }
  }
  // ---- the arena: stages computed at root, in an order that keeps it small ----

  /// The stage that runs at root and computes stage Q inside its loops (Q itself if Q runs at root).
  template <std::size_t Q, bool At = info<Q>::where::where == placement::at>
  struct host_of {
    static constexpr std::size_t value = Q;
  };
  template <std::size_t Q>
  struct host_of<Q, true> {
    static constexpr std::size_t C = index_of_stage<stage_key<typename meta::at<typename info<Q>::where::at_list, 0>::consumer>>;
    static constexpr std::size_t value = [] {
      if constexpr (C >= count || C == Q) return Q;  // reported by placement_of
      else return host_of<C>::value;
    }();
  };
  template <std::size_t Q>
  static constexpr std::size_t host = host_of<Q>::value;
  /// Whether root stage R reads stage P itself or through a stage computed inside its loops.
  template <std::size_t R, std::size_t P>
  static constexpr bool reads_via = []<std::size_t... Q>(std::index_sequence<Q...>) {
    return ((host<Q> == R && reads<Q, P>) || ...);
  }(std::make_index_sequence<count>{});

  /// The positions of the stages that run at root.
  template <class Seq>
  struct root_list;
  template <std::size_t... K>
  struct root_list<std::index_sequence<K...>> {
    using type = meta::concat<meta::list<>, std::conditional_t<info<K>::where::where != placement::at,
                                                               meta::list<std::integral_constant<std::size_t, K>>, meta::list<>>...>;
  };
  using roots = typename root_list<std::make_index_sequence<count>>::type;

  /// Which root stages (by position in roots) root stage K reads.
  template <std::size_t K, std::size_t... Pq>
  static constexpr std::array<bool, sizeof...(Pq)> root_inputs(std::index_sequence<Pq...>) {
    return {reads_via<K, meta::at<roots, Pq>::value>...};
  }

  std::array<std::size_t, count> offset{};
  std::byte* arena_base = nullptr;
  std::vector<int> order;

  /// Plans the arena (only when the stages' sizes changed since the last run) and sets each root
  /// stage's place in it and the order of the root stages; with `allocate`, makes the arena that
  /// large.
  void plan_arena(bool allocate = true) {
    constexpr std::size_t n = roots::size;
    std::vector<std::size_t> bytes(n);
    std::vector<stage_node> dag(n);
    std::vector<int> outputs;
    [&]<std::size_t... Rq>(std::index_sequence<Rq...>) {
      (([&] {
         constexpr std::size_t K = meta::at<roots, Rq>::value;
         using D = typename info<K>::def;
         if constexpr (info<K>::is_func)
           bytes[Rq] = std::size_t(total[K].points(D::lhs_type::rank)) * sizeof(typename D::value_type);
         else
           outputs.push_back(int(Rq));
         dag[Rq].out_bytes = bytes[Rq];
         constexpr auto inputs = root_inputs<K>(std::make_index_sequence<n>{});
         for (std::size_t q = 0; q < n; ++q)
           if (inputs[q]) dag[Rq].inputs.push_back(int(q));
       }()),
       ...);
    }(std::make_index_sequence<n>{});
    const auto& plan = pipe.plan_for(bytes, dag, outputs);
    arena_base = allocate ? pipe.arena(plan.plan.memory.arena_bytes) : nullptr;
    [&]<std::size_t... Rq>(std::index_sequence<Rq...>) {
      ((offset[meta::at<roots, Rq>::value] = plan.plan.memory.offsets[Rq]), ...);
    }(std::make_index_sequence<n>{});
    order = plan.plan.order;
  }

  /// Root stage at position r of the plan's order.
  void run_root(int r) {
    [&]<std::size_t... Rq>(std::index_sequence<Rq...>) {
      (([&] {
         if (int(Rq) != r) return;
         constexpr std::size_t K = meta::at<roots, Rq>::value;
         using D = typename info<K>::def;
         if (total[K].empty(D::lhs_type::rank)) return;
         D d = std::get<K>(defs);
         set_output_box<K>(d, total[K]);
         run_stage<K>(d, total[K], true);
       }()),
       ...);
    }(std::make_index_sequence<roots::size>{});
  }

  /// Calls f(a) for each access of definition d that reads a tensor (not a stage).
  template <class D, class F>
  static void for_each_tensor_read(const D& d, F&& f) {
    d.rhs.for_each_access([&](const auto& a) {
      if constexpr (!reads_stage<std::remove_cvref_t<decltype(a)>>) f(a);
    });
  }

  /// Whether tensor output K shares a byte with any tensor a definition reads: the stages run in
  /// pieces (boxes, rows, border slabs), so a later piece could read what an earlier one wrote.
  template <std::size_t K>
  bool output_overlaps_a_read() const {
    const auto& out = std::get<K>(defs).lhs.view;
    bool overlaps = false;
    std::apply([&](const auto&... d) { (for_each_tensor_read(d, [&](const auto& a) { overlaps = overlaps || views_overlap(out, a.view); }), ...); },
               defs);
    return overlaps;
  }

  /// Throws alias_error where a definition reads or writes a tensor that an earlier definition
  /// writes. Every read sees the tensors as they were before the run (outputs that overlap an
  /// input are computed into temporaries and copied back at the end), and the stages run in the
  /// order the arena plan picks: a later definition would see the old values, or the new ones,
  /// depending on the schedule.
  void check_tensor_order() const {
    [&]<std::size_t... K>(std::index_sequence<K...>) { (check_written_once_then_unread<K>(), ...); }(std::make_index_sequence<count>{});
  }
  template <std::size_t K>
  void check_written_once_then_unread() const {
    if constexpr (!info<K>::is_func) {
      const auto& out = std::get<K>(defs).lhs.view;
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        ([&] {
           constexpr std::size_t L = K + 1 + J;
           const auto& d = std::get<L>(defs);
           if constexpr (!info<L>::is_func) {
             if (views_overlap(out, d.lhs.view))
               throw alias_error(detail::cat("loom::alias_error: two definitions of a pipeline write '", out.name(),
                                             "': a pipeline's tensor outputs are written once each (run the definitions as "
                                             "separate pipelines)"));
           }
           for_each_tensor_read(d, [&](const auto& a) {
             if (views_overlap(out, a.view))
               throw alias_error(detail::cat("loom::alias_error: a pipeline definition reads '", a.view.name(),
                                             "', which an earlier definition writes: every definition of a pipeline reads the "
                                             "tensors as they were before the run (only stages, loom::Func, carry values from one "
                                             "definition to the next): make '", out.name(),
                                             "' a stage, or run the definitions as separate pipelines"));
           });
         }(),
         ...);
      }(std::make_index_sequence<count - 1 - K>{});
    }
  }

  void run_all() {
    [&]<std::size_t... Rq>(std::index_sequence<Rq...>) {
      (check_distinct_elements(std::get<meta::at<roots, Rq>::value>(defs).lhs.view, "loom::alias_error"), ...);
    }(std::make_index_sequence<roots::size>{});
    check_tensor_order();
    infer_regions();
    plan_arena();
    [&]<std::size_t... K>(std::index_sequence<K...>) { (check_reads<K>(), ...); }(std::make_index_sequence<count>{});
    // An output that overlaps an input is computed into a temporary holding its values (read by
    // `+=`) and copied back at the end, so every read sees the inputs as they were.
    auto temporaries = [&]<std::size_t... Rq>(std::index_sequence<Rq...>) {
      return std::make_tuple([&] {
        constexpr std::size_t K = meta::at<roots, Rq>::value;
        using V = typename info<K>::def::lhs_type::view_type;
        using T = typename V::value_type;
        std::optional<Tensor<T, V::rank>> tmp;
        if constexpr (!info<K>::is_func) {
          if (output_overlaps_a_read<K>()) {
            auto& out = std::get<K>(defs).lhs.view;
            tmp.emplace(out.extents().values(), out.name());
            copy_view(tmp->view(), out);
            const V original = out;
            out = V(typename V::base_view(tmp->view()), original.origins());
            return std::make_pair(std::move(tmp), original);
          }
        }
        return std::make_pair(std::move(tmp), V{});
      }()...);
    }(std::make_index_sequence<roots::size>{});
    make_store_hints();
    for (int r : order) run_root(r);
    [&]<std::size_t... Rq>(std::index_sequence<Rq...>) {
      (([&] {
         auto& [tmp, original] = std::get<Rq>(temporaries);
         if (tmp) copy_view(original, tmp->view());
       }()),
       ...);
    }(std::make_index_sequence<roots::size>{});
  }
};

/// The loop of Def's nest under S (its driver schedule) at which stages reading only the variables
/// Used can be computed: the shortest run of outer loops the driver can run (variables and the
/// outer/inner loops of their splits, serial or parallel, over the output's variables) that
/// covers every variable of Used; -1 if there is none (compute them at root).
template <class Def, class S, class Used>
consteval int hoist_level() {
  if constexpr (Used::size == 0) {
    return -1;
  } else {
    using Plan = plan<Def, typename driver_schedule<S>::type>;
    using loops = typename Plan::loops;
    return []<std::size_t... P>(std::index_sequence<P...>) {
      int found = -1;
      bool drivable = true;
      bool covered[Used::size] = {};
      (([&] {
         using Loop = meta::at<loops, P>;
         using Id = typename Loop::id;
         if (!drivable || found >= 0) return;
         if constexpr (!(is_var<Id> || is_outer_loop<Id> || is_inner_loop<Id>)) {
           drivable = false;
         } else {
           using V = root_var_t<Id>;
           if (!meta::contains<typename Def::pure_vars, V> || !(Loop::kind == loop_kind::serial || Loop::kind == loop_kind::parallel)) {
             drivable = false;
             return;
           }
           if constexpr (meta::contains<Used, V>) covered[meta::index_of<Used, V>] = true;
           bool all = true;
           for (bool c : covered) all = all && c;
           if (all) found = int(P);
         }
       }()),
       ...);
      return found;
    }(std::make_index_sequence<loops::size>{});
  }
}

/// The rows of a strip of a hoisted definition's default schedule: its implicit stages (a row's
/// maximum and sum) are computed once per strip, so a strip's rows share one run of each stage
/// (a few hundred nanoseconds of setting up), and a strip of 4096-float rows (128 KiB) stays in
/// the L2 cache between the stages that read it.
inline constexpr index_t hoisted_strip_rows = 8;

/// The default schedule of a definition whose reductions are hoisted: its own default, unless it
/// puts the lanes along its last variable (row-major rows) with two variables or more; then
/// strips of hoisted_strip_rows rows of its first variable, in parallel, lanes along the last,
/// and (for `=`, unless a stage asks for its lines: AsksStores) stores streamed once the run
/// outgrows the cache.
template <class Main, bool AsksStores = false>
struct hoisted_default {
  using base = default_schedule_t<Main>;
  using pure = typename Main::pure_vars;
  using type = decltype([] {
    if constexpr (pure::size < 2) {
      return base{};
    } else {
      using V0 = meta::at<pure, 0>;
      using VL = meta::at<pure, pure::size - 1>;
      using P = plan<Main, typename driver_schedule<base>::type>;
      if constexpr (!P::vectorized || !std::is_same_v<root_var_t<typename P::lane>, VL>) return base{};
      else if constexpr (!std::is_same_v<typename Main::mode, assign_set> || AsksStores)
        return schedule<split<V0{}, hoisted_strip_rows>, parallel<outer_loop<V0>{}>, vectorize<VL{}>>{};
      else  // the output is written once: past the cache, without reading its lines first
        return schedule<split<V0{}, hoisted_strip_rows>, parallel<outer_loop<V0>{}>, vectorize<VL{}>, stream_stores<>>{};
    }
  }());
  /// Whether it runs strips of hoisted_strip_rows rows of the first variable.
  static constexpr bool strips = !std::is_same_v<type, base>;
};
template <class Main, bool AsksStores = false>
using hoisted_default_t = typename hoisted_default<Main, AsksStores>::type;

/// The stage<...> of implicit stage Key (definition D) placed at Place. A reduction body's stage
/// (body_stage.hpp) that the definition reads at its own points, computed inside its loops, asks
/// for the lines the definition stores there (prefetch_stores), and, computed per strip of
/// StripRows rows of V0 (0: not in strips), for the next strip's inputs: it computes the most, so
/// those reads hide behind its arithmetic and the first reduction's pass finds them in cache.
template <class Key, class D, class Place, bool AsksStores, class V0, index_t StripRows>
struct implicit_stage {
  using type = stage<Key{}, Place>;
};
/// A reduction along K whose rows are in cache: a row at a time, four accumulators
/// (docs/tuning.md#tight-reductions).
template <class K>
using in_cache_reduction = schedule<vectorize<K{}>, unroll<outer_loop<K>{}, 4>>;

/// A reduction's stage beside a body's stage that reads the next strip ahead (InCache): its input
/// is in cache by then, so a row at a time with four accumulators (the in-cache nest of
/// docs/tuning.md#tight-reductions) rather than the default's rows read from memory together.
template <class Key, class D, class Place, class V0>
struct implicit_stage<Key, D, Place, false, V0, -1> {
  static auto pick() {
    if constexpr (!single_reduction<typename D::rhs_type>::one_variable) {
      return stage<Key{}, Place>{};
    } else {
      using K = typename single_reduction<typename D::rhs_type>::var;
      using P = plan<D, typename driver_schedule<default_schedule_t<D>>::type>;
      if constexpr (!P::vectorized || !std::is_same_v<root_var_t<typename P::lane>, K>) return stage<Key{}, Place>{};
      else return stage<Key{}, Place, in_cache_reduction<K>>{};
    }
  }
  using type = decltype(pick());
};
template <class Key, class D, class Place, class V0, index_t StripRows>
struct implicit_stage<Key, D, Place, true, V0, StripRows> {
  // Its values are read again from cache (by the reduction and the definition): never streamed,
  // however large the tensors it reads (stream_stores counts their whole views).
  using own = typename without_streaming<default_schedule_t<D>>::type;
  using ahead = std::conditional_t<StripRows == 0 || !meta::contains<typename D::pure_vars, V0>, own,
                                   typename with_directive<own, prefetch<V0{}, std::max<index_t>(StripRows, 1), 0>>::type>;
  using type = stage<Key{}, Place, ahead, prefetch_stores<output>>;
};

/// The stage<...> of implicit stage Key (definition D) in the form a run takes when look-alike
/// operands read different values (with_hoisted): vectorized along the default's lanes, one nest,
/// nothing chosen per run, rows in parallel when computed at root. That form is rare (merged
/// reductions or a shared body whose reads turn out to differ), and with the defaults' nests it
/// was more than half of what a softmax in one definition compiles. Correct, not tuned.
template <class Key, class D, class Place>
struct lean_stage {
  static auto pick() {
    using P = plan<D, typename driver_schedule<default_schedule_t<D>>::type>;
    if constexpr (!P::vectorized) {
      return stage<Key{}, Place, schedule<>>{};
    } else {
      using L = root_var_t<typename P::lane>;
      using vars = typename D::loop_vars;
      using others = meta::remove<vars, L>;
      // A reduction along the lanes: the in-cache nest the shared form's reductions run (four
      // accumulators), so that both forms add in the same order and give the same bits.
      using lanes = std::conditional_t<meta::contains<typename D::scheduled_rvars, L>, in_cache_reduction<L>, schedule<vectorize<L{}>>>;
      using lanes_last = decltype([]<class... O>(meta::list<O...>*) {
        return join<order<vars, O..., L>, lanes>{};
      }(static_cast<others*>(nullptr)));
      using S = decltype([] {
        if constexpr (std::is_same_v<Place, compute_root> && others::size > 0 && meta::contains<typename D::pure_vars, meta::at<others, 0>>)
          return join<lanes_last, schedule<parallel<meta::at<others, 0>{}, parallel_min_points>>>{};
        else
          return lanes_last{};
      }());
      if constexpr (problem_in<D, S>::value == schedule_problem::none) return stage<Key{}, Place, S>{};
      else return stage<Key{}, Place, schedule<>>{};
    }
  }
  using type = decltype(pick());
};

/// Whether implicit stage Key is a reduction body's stage that Main reads only at its own points.
template <class Key, class Main>
inline constexpr bool body_read_in_place = false;
template <std::size_t N, class Main>
inline constexpr bool body_read_in_place<body_id<N>, Main> = []<class... A>(meta::list<A...>*) {
  return sizeof...(A) > 0 && (identity_read<A, typename Main::lhs_type::index_types> && ...);
}(static_cast<typename reads_of<body_id<N>, typename Main::rhs_type::accesses>::type*>(nullptr));

/// The variables the implicit stages of a hoisted definition are indexed by (all of them), but a
/// reduction body's stage (body_stage.hpp): it is computed wherever its reduction is, over the
/// points of the definition that iteration covers.
template <class H>
using hoisted_index_vars = std::conditional_t<is_body_key<written_stage_t<H>>, meta::list<>, typename H::lhs_type::index_types>;
template <class... H>
using hoisted_vars = meta::unique<meta::concat<meta::list<>, hoisted_index_vars<H>...>>;

/// f.template operator()<Stages...>(pipe) on the pipeline a hoisted definition became (defs: its
/// implicit stages, then itself) and the schedule it runs under: each implicit stage at the outer
/// loops of the definition's nest that fix what it depends on, or at root; the definition under S
/// (auto_schedule: hoisted_default_t).
template <class S, bool Lean = false, class Defs, class F>
decltype(auto) with_hoisted_pipeline(const Defs& defs, F&& f) {
  constexpr std::size_t n = std::tuple_size_v<Defs> - 1;
  using Main = std::tuple_element_t<n, Defs>;
  constexpr bool body_in_place = []<std::size_t... K>(std::index_sequence<K...>) {
    return (body_read_in_place<written_stage_t<std::tuple_element_t<K, Defs>>, Main> || ...);
  }(std::make_index_sequence<n>{});
  using MS = std::conditional_t<std::is_same_v<S, auto_schedule>, hoisted_default_t<Main, body_in_place>, S>;
  using used = decltype([]<std::size_t... K>(std::index_sequence<K...>) {
    return hoisted_vars<std::tuple_element_t<K, Defs>...>{};
  }(std::make_index_sequence<n>{}));
  constexpr bool all_pure = []<class... U>(meta::list<U...>*) {
    return (meta::contains<typename Main::pure_vars, U> && ...);
  }(static_cast<used*>(nullptr));
  constexpr int level = all_pure ? hoist_level<Main, MS, used>() : -1;
  auto placement = [] {
    if constexpr (level < 0) {
      return compute_root{};
    } else {
      using Id = typename meta::at<typename plan<Main, typename driver_schedule<MS>::type>::loops, std::size_t(level)>::id;
      return compute_at<output, Id{}>{};
    }
  };
  using Place = decltype(placement());
  return std::apply(
      [&](const auto&... d) -> decltype(auto) {
        Pipeline<std::remove_cvref_t<decltype(d)>...> pipe(d...);
        return [&]<std::size_t... K>(std::index_sequence<K...>) -> decltype(auto) {
          using V0 = meta::at<typename Main::pure_vars, 0>;
          constexpr index_t strip_rows = std::is_same_v<S, auto_schedule> && hoisted_default<Main, true>::strips ? hoisted_strip_rows : 0;
          if constexpr (Lean) {
            return f.template operator()<typename lean_stage<written_stage_t<std::tuple_element_t<K, Defs>>, std::tuple_element_t<K, Defs>, Place>::type...,
                                         stage<output, MS>>(pipe);
          } else {
            return f.template operator()<
                typename implicit_stage<written_stage_t<std::tuple_element_t<K, Defs>>, std::tuple_element_t<K, Defs>, Place,
                                        level >= 0 && body_read_in_place<written_stage_t<std::tuple_element_t<K, Defs>>, Main>, V0,
                                        (body_in_place && level >= 0 && strip_rows > 0 &&
                                         !body_read_in_place<written_stage_t<std::tuple_element_t<K, Defs>>, Main>)
                                            ? index_t(-1)
                                            : strip_rows>::type...,
                stage<output, MS>>(pipe);
          }
        }(std::make_index_sequence<n>{});
      },
      defs);
}

/// Runs a definition with reductions that do not depend on every variable around them: each
/// becomes an implicit stage (pipeline/hoist.hpp), computed at the outer loops of the
/// definition's nest that fix what it depends on (per row, for a row-wise softmax), or at root.
/// Reductions that compute the same values (`maximum(k, X(i, k))` and `maximum(l, X(i, l))`) are
/// one stage; when a run finds that two of the same shape read different views, each is its own.
/// An operation on one operand written twice (a variance's `(X - mean) * (X - mean)`) evaluates
/// it once (pipeline/repeated.hpp). Either rewrite holds only when a run finds the values the same;
/// when one does not, the definition runs as written.
template <class S, class Def, class F>
decltype(auto) with_hoisted(const Def& def, F&& f) {
  const auto merged = hoist_all<true>(def);
  const auto once = repeat_once_in(merged.defs);
  const auto shared = share_body(once.defs);
  constexpr bool merges = std::tuple_size_v<decltype(merged.merged)> > 0;
  if constexpr (merges || once.rewrites || shared.rewrites) {
    bool hold = once.holds && shared.holds;
    if constexpr (merges) hold = hold && merged.merges_hold();
    if (!hold) return with_hoisted_pipeline<S, true>(hoist_all<false>(def).defs, f);
  }
  return with_hoisted_pipeline<S>(shared.defs, f);
}
template <class S, class Def>
void run_hoisted(const Def& def) {
  with_hoisted<S>(def, []<class... Stages>(auto& pipe) { loom::run<Stages...>(pipe); });
}

/// Runs a definition that reads through boundary conditions: as a pipeline of one stage, whose
/// runs partition their box into the interior and the border.
template <class S, class Def>
void run_bounded(const Def& def) {
  using MS = std::conditional_t<std::is_same_v<S, auto_schedule>, default_schedule_t<Def>, S>;
  Pipeline<Def> pipe(def);
  loom::run<stage<output, MS>>(pipe);
}

}  // namespace detail

/// What a pipeline's stages computed at root take: each one's bytes and live steps, the arena
/// they share (greedy by size, in the order of the stages that keeps it smallest) against the sum
/// of separate buffers. (Stages computed at a loop live in per-thread buffers of the box one
/// iteration reads; they are not in the arena.)
struct pipeline_memory {
  std::vector<std::string> names;  // the stages that run at root, as declared (outputs too, 0 bytes)
  std::vector<buffer_use> uses;    // each one's bytes and live steps, in the same order
  memory_plan plan;                // each one's offset in the arena, in the same order
  std::vector<int> order;          // the order they run in (positions in names)
  std::size_t arena_bytes() const { return plan.arena_bytes; }
  std::size_t sum_bytes() const { return plan.sum_bytes; }
  std::string describe() const {
    std::string out = loom::describe(plan, uses);
    out += "stages:";
    for (std::size_t k = 0; k < names.size(); ++k) out += detail::cat(k == 0 ? " " : ", ", k, " = ", names[k]);
    return out + "\n";
  }
};

/// Runs a pipeline under a schedule of stage<Name, Directives...> (any stage not named gets its
/// default: inlined, or computed at root when it has a reduction; its loops the default
/// schedule's). Throws loom::error before anything is written.
template <class... Stages, class... Defs>
void run(Pipeline<Defs...>& p) {
  static_assert((detail::is_stage_directive<Stages> && ...),
                "loom::run on a pipeline: its schedule is a list of loom::stage<Name, Directives...>");
  using S = meta::list<Stages...>;
  constexpr detail::placement_problem early = detail::first_directive_problem<S, Defs...>();
  detail::report_placement<early>();
  if constexpr (early == detail::placement_problem::none) {
    auto lowered = detail::lower_pipeline<S>(p.definitions());
    using R = detail::pipeline_run<S, decltype(lowered), Pipeline<Defs...>>;
    detail::report_placement<R::first_placement_problem()>();
    detail::report_schedule<R::first_schedule_problem()>();
    if constexpr (R::runnable) {
      R r(lowered, p);
      r.run_all();
    }
  }
}

/// A pipeline built in the call (`loom::run(loom::pipeline(...))`): runs as above; its arena goes
/// with it, so a pipeline run more than once is better kept in a variable.
template <class... Stages, class... Defs>
void run(Pipeline<Defs...>&& p) {
  run<Stages...>(p);
}

/// The arena a run of the pipeline under this schedule plans (the regions inferred as a run would
/// infer them, with no loop run): loom::plan_memory<stage<...>...>(p).describe().
template <class... Stages, class... Defs>
pipeline_memory plan_memory(Pipeline<Defs...>& p) {
  using S = meta::list<Stages...>;
  constexpr detail::placement_problem early = detail::first_directive_problem<S, Defs...>();
  detail::report_placement<early>();
  auto lowered = detail::lower_pipeline<S>(p.definitions());
  using R = detail::pipeline_run<S, decltype(lowered), Pipeline<Defs...>>;
  if constexpr (early == detail::placement_problem::none) {
    detail::report_placement<R::first_placement_problem()>();
    detail::report_schedule<R::first_schedule_problem()>();
  }
  constexpr bool ok = early == detail::placement_problem::none && R::runnable;
  pipeline_memory m;
  if constexpr (ok) {
    R r(lowered, p);
    r.check_tensor_order();
    r.infer_regions();
    r.plan_arena(false);  // a plan only: nothing allocated
    const auto& plan = p.plan_for({}, {}, {});  // the cached plan of this run
    std::vector<std::string> all;
    [&]<std::size_t... Rq>(std::index_sequence<Rq...>) {
      (all.push_back(std::string(std::get<meta::at<typename R::roots, Rq>::value>(lowered).lhs.view.name())), ...);
    }(std::make_index_sequence<R::roots::size>{});
    m.names = all;
    m.uses = plan.uses;
    m.plan = plan.plan.memory;
    m.order = plan.plan.order;
  }
  return m;
}

}  // namespace loom
