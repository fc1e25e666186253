// SPDX-License-Identifier: MIT
// loom/lower/run.hpp — loom::run: everything that needs run-time extents happens here, once per
// call and before any loop: variable extents (checked for consistency), bounds of every access,
// output/input aliasing, binding of accesses, and the one branch on unit-stride lanes.
#pragma once
#include <algorithm>
#include <string>
#include <type_traits>

#include "../core/scratch.hpp"
#include "../core/threads.hpp"
#include "../core/tensor.hpp"
#include "../schedule/specialize.hpp"
#include "footprint.hpp"
#include "leaves.hpp"

namespace loom {

namespace detail {

/// Extents of the variables: pure ones from the output, reduction ones from every dimension a
/// reduction variable indexes on its own (all must agree).
template <class Def, class State>
void infer_extents(const Def& d, State& s) {
  using vars = typename Def::vars;
  using out_idx = typename Def::lhs_type::index_types;
  [&]<std::size_t... D>(std::index_sequence<D...>) {
    ((s.ext[meta::index_of<vars, meta::at<out_idx, D>>] = d.lhs.view.extent(D)), ...);
  }(std::make_index_sequence<Def::lhs_type::rank>{});

  using rv = typename Def::reduction_vars;
  // The first pass only compares numbers; on a mismatch a second pass names the accesses (no
  // strings are built on the path every call takes).
  auto pass = [&](bool describe) {
    std::array<std::string, rv::size + 1> source{};
    meta::for_each_type<rv>([&]<class V>(V*) { s.ext[meta::index_of<vars, V>] = -1; });
    bool ok = true;
    d.rhs.for_each_access([&](const auto& a) {
      using A = std::remove_cvref_t<decltype(a)>;
      [&]<std::size_t... D>(std::index_sequence<D...>) {
        ([&] {
          using I = meta::at<typename A::index_types, D>;
          if constexpr (is_var<I> && meta::contains<rv, I>) {
            index_t& e = s.ext[meta::index_of<vars, I>];
            const index_t n = a.view.extent(D);
            if (e < 0) {
              e = n;
              if (describe) source[meta::index_of<rv, I>] = detail::cat(to_string(a), " dimension ", D);
            } else if (e != n) {
              ok = false;
              if (describe)
                throw shape_error(detail::cat("loom::shape_error: reduction variable ", I::name(), " has extent ", e,
                                              " from ", source[meta::index_of<rv, I>], " but ", n, " from ",
                                              to_string(a), " dimension ", D));
            }
          }
        }(), ...);
      }(std::make_index_sequence<A::rank>{});
    });
    return ok;
  };
  if (!pass(false)) pass(true);
  meta::for_each_type<rv>([&]<class V>(V*) {
    if (s.ext[meta::index_of<vars, V>] < 0)
      throw shape_error(detail::cat("loom::shape_error: reduction variable ", V::name(), " never indexes a tensor dimension on its own, so its extent cannot be inferred"));
  });
}

/// Where the run's variables start: the output's origin when it is a region of a larger index
/// space (a pipeline stage computed over a box), else 0 for every variable (by type).
template <class Def>
auto starts_of(const Def& d) {
  using View = typename Def::lhs_type::view_type;
  if constexpr (!has_origin<View>) {
    return zero_starts{};
  } else {
    var_starts<typename Def::vars> st;
    using out_idx = typename Def::lhs_type::index_types;
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((st.first[meta::index_of<typename Def::vars, meta::at<out_idx, D>>] = d.lhs.view.origin(D)), ...);
    }(std::make_index_sequence<Def::lhs_type::rank>{});
    return st;
  }
}

/// dst = src elementwise, any strides (same extents).
template <class Dst, class Src>
void copy_view(const Dst& dst, const Src& src) {
  constexpr std::size_t R = Dst::rank;
  if (dst.size() == 0) return;
  std::array<index_t, R == 0 ? 1 : R> idx{};
  for (index_t q = 0, n = dst.size(); q < n; ++q) {
    index_t od = 0, os = 0;
    for (std::size_t d = 0; d < R; ++d) {
      od += idx[d] * dst.stride(d);
      os += idx[d] * src.stride(d);
    }
    dst.data()[od] = src.data()[os];
    for (std::size_t d = R; d-- > 0;) {
      if (++idx[d] < dst.extent(d)) break;
      idx[d] = 0;
    }
  }
}

template <class View, class T>
void fill_view(const View& v, T value) {
  constexpr std::size_t R = View::rank;
  if (v.size() == 0) return;
  bool dense = true;  // row-major without gaps: one run of memory
  for (index_t d = index_t(R) - 1, expect = 1; d >= 0; expect *= v.extent(std::size_t(d)), --d)
    dense = dense && (v.extent(std::size_t(d)) == 1 || v.stride(std::size_t(d)) == expect);
  if (dense) {
    std::fill_n(v.data(), v.size(), value);
    return;
  }
  std::array<index_t, R == 0 ? 1 : R> idx{};
  for (index_t q = 0, n = v.size(); q < n; ++q) {
    index_t o = 0;
    for (std::size_t d = 0; d < R; ++d) o += idx[d] * v.stride(d);
    v.data()[o] = value;
    for (std::size_t d = R; d-- > 0;) {
      if (++idx[d] < v.extent(d)) break;
      idx[d] = 0;
    }
  }
}

/// The extent variable V runs over in this run: the first output or input dimension it indexes on
/// its own (run() checks that all of them agree); -1 if none does.
template <class V, class Def>
index_t variable_extent(const Def& d) {
  index_t e = -1;
  auto scan = [&](const auto& a) {
    using A = std::remove_cvref_t<decltype(a)>;
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((e < 0 && std::is_same_v<meta::at<typename A::index_types, D>, V> ? void(e = a.view.extent(D)) : void()), ...);
    }(std::make_index_sequence<A::rank>{});
  };
  scan(d.lhs);
  if (e < 0) d.rhs.for_each_access(scan);
  return e;
}

/// Is every access of the list that the lanes walk unit-stride by its type?
template <class Lane, class... A>
constexpr bool all_unit_stride_along(meta::list<A...>*) {
  return ((!meta::contains<typename A::vars, Lane> || A::template unit_stride_along<Lane>) && ...);
}

template <class Plan, class Def, class State>
void walk_nest(const Def& d, State& s, index_t points) {
  using L = lower::leaves<Plan>;
  using E = typename L::E;
  if constexpr (Plan::acc_kind == accumulation::into_output) {
    if constexpr (std::is_same_v<typename Def::mode, assign_set>)
      fill_view(d.lhs.view, L::op::template identity<typename Def::value_type>());
  }
  // The choices made once per run from the bytes it touches, all here, the bytes counted once:
  // large_blocks, interleave, prefetch (the leaf's ahead.on) and stream_stores.
  const index_t bytes = lower::touched_bytes(d);
  auto outgrows = [&](index_t min_bytes) { return lower::reaches(bytes, min_bytes, simd::outgrows_cache_bytes()); };
  if constexpr (Plan::has_large_blocks) s.large_blocks = outgrows(Plan::large_blocks_min_bytes);
  if constexpr (Plan::interleave_parts > 1) s.interleaved = outgrows(Plan::interleave_min_bytes);
  if constexpr (E::reads_from_memory)
    s.from_memory = lower::reaches(lower::touched_bytes(d, points), beyond_cache, simd::outgrows_cache_bytes());
  auto reading_ahead = [&](auto leaf) {
    if constexpr (Plan::prefetches) leaf.ahead.on = outgrows(Plan::prefetch_min_bytes);
    return leaf;
  };
  auto go = [&]<bool Contig>() {
    if constexpr (Plan::acc_kind == accumulation::none) {
      auto leaf = reading_ahead(typename L::template store<>{d, points});
      if constexpr (Plan::prefetches_stores) leaf.ahead.writes = lower::bound_store_hint(d.lhs, starts_of(d));
      if constexpr (Plan::streams && Contig) leaf.stream = lower::reaches(bytes, Plan::stream_min_bytes, simd::streaming_threshold_bytes());
      E::template walk<scalar_mode<Contig>, 0>(std::make_index_sequence<Plan::N>{}, s, leaf, lower::no_carry{});
      if (leaf.stream) simd::stream_fence();
    } else if constexpr (Plan::acc_kind == accumulation::registers) {
      const auto leaf = reading_ahead(typename L::region{d, points});
      E::template walk<scalar_mode<Contig>, 0>(std::make_index_sequence<Plan::red_pos>{}, s, leaf, lower::no_carry{});
    } else {
      const auto leaf = reading_ahead(typename L::update{d, points});
      E::template walk<scalar_mode<Contig>, 0>(std::make_index_sequence<Plan::N>{}, s, leaf, lower::no_carry{});
    }
  };
  if constexpr (Plan::vectorized) {
    using lane = typename Plan::lane;
    using accesses = meta::concat<meta::list<typename Def::lhs_type>, typename Def::rhs_type::accesses>;
    if constexpr (all_unit_stride_along<lane>(static_cast<accesses*>(nullptr))) {
      // Contiguous by type: every access along the lanes walks a row-major row (layout_right),
      // so the nest is compiled once, without gathers.
      go.template operator()<true>();
    } else {
      // Otherwise one branch per run: are all accesses along the lanes unit-stride?
      bool contiguous = true;
      auto check = [&](const auto& a) {
        using A = std::remove_cvref_t<decltype(a)>;
        if constexpr (meta::contains<typename A::vars, lane>) contiguous = contiguous && a.template stride_of<lane>() == 1;
      };
      check(d.lhs);
      d.rhs.for_each_access(check);
      if (contiguous) go.template operator()<true>();
      else go.template operator()<false>();
    }
  } else {
    go.template operator()<false>();
  }
}

/// Starts with variable R moved on by `by` (a chunk of a reduction over R).
template <class Starts, class R>
struct moved_start {
  Starts st;
  index_t by;
  template <class V>
  index_t start() const {
    return st.template start<V>() + (std::is_same_v<V, R> ? by : 0);
  }
};

template <class S>
struct without_parallel;
template <class... D>
struct without_parallel<schedule<D...>> {
  template <class X>
  struct keep : std::true_type {};
  template <auto V, index_t G>
  struct keep<parallel<V, G>> : std::false_type {};
  using type = decltype([]<class... K>(meta::list<K...>*) { return schedule<K...>{}; }(
      static_cast<meta::filter<meta::list<D...>, keep>*>(nullptr)));
};

template <class S, class Def>
void run_checked(const Def& def);
/// The state the checks fill: each variable's extent (no split ranges yet), one type per
/// definition whatever its schedules.
template <class Def>
using checked_state = loop_state<typename Def::vars, 0>;
template <class S, class Def>
void run_leaf(const Def& def, const checked_state<Def>& checked, index_t points);
template <class Plan, class Def, class State>
void bind_and_walk(const Def& def, State& s, index_t points);

/// The scratch buffer (core/scratch.hpp) of a chunked reduction's partial results.
struct chunk_partials {};

/// parallel<outer<k>>: chunks of k reduce in parallel into private partial results (the bare
/// reduction, under the rest of the schedule), then one pass combines them in chunk order and
/// applies the epilogue. Each chunk is its own run over shifted base pointers, so nothing about
/// it depends on how many threads there are.
template <class Plan, class Sched, class Def, class State>
void run_chunked(const Def& def, const State& s) {
  using T = typename Def::value_type;
  using R = typename sched::outer_parent<typename meta::at<typename Plan::loops, 0>::id>::type;
  constexpr index_t split_factor = sched::split_of<typename Plan::splits, R>::factor;
  using short_chunks = typename Plan::short_chunking;
  static_assert(short_chunks::factor == 0 || (std::is_same_v<typename short_chunks::loop, R> && short_chunks::factor <= split_factor),
                "loom internal: short_extent_chunks names the chunked variable, with chunks at most its split's factor");
  constexpr std::size_t rank = Def::lhs_type::rank;
  using pure = typename Def::pure_vars;
  const index_t K = s.template extent<R>();
  // (Each chunk runs the nest over at most the split's factor of points: any shorter chunk walks
  // the same nest.)
  const index_t F = short_chunks::factor > 0 && K < short_chunks::below ? short_chunks::factor : split_factor;
  const index_t chunks = ceil_div(K, F);

  shape_t<rank + 1> pshape{};
  pshape[0] = chunks;
  for (std::size_t d = 0; d < rank; ++d) pshape[d + 1] = def.lhs.view.extent(d);
  const index_t outsize = def.lhs.view.size();
  // The partials live in this thread's scratch buffer: reused from run to run. Over a region of
  // the output they are indexed as the output is (its origin), so every access binds alike.
  constexpr bool region = has_origin<typename Def::lhs_type::view_type>;
  using PAll = std::conditional_t<region, region_view<T, rank + 1>, TensorView<T, rank + 1, dims<rank + 1>, layout_right>>;
  using PView = std::conditional_t<region, region_view<T, rank>, TensorView<T, rank, dims<rank>, layout_right>>;
  auto as_partial = [&]<class V>(T* data, const shape_t<V::rank>& e, std::type_identity<V>) {
    TensorView<T, V::rank, dims<V::rank>, layout_right> v(data, dims<V::rank>(e), tensor_name("partial"));
    if constexpr (region) {
      shape_t<V::rank> o{};
      for (std::size_t d = 0; d < rank; ++d) o[d + V::rank - rank] = def.lhs.view.origin(d);
      return V(v, o);
    } else {
      return v;
    }
  };
  const PAll partial = as_partial(scratch<T, chunk_partials>(std::size_t(chunks * outsize)), pshape, std::type_identity<PAll>{});
  const auto starts = starts_of(def);

  const auto& red = lower::scheduled_reduction(def.rhs);
  using Red = std::remove_cvref_t<decltype(red)>;
  auto chunk_def = [&]<class... P>(meta::list<P...>*, index_t c) {
    shape_t<rank> e{};
    for (std::size_t d = 0; d < rank; ++d) e[d] = def.lhs.view.extent(d);
    const PView pv = as_partial(partial.data() + c * outsize, e, std::type_identity<PView>{});
    return definition<access<PView, P...>, Red, assign_set>(access<PView, P...>(pv, P{}...), red);
  };
  using PDef = decltype(chunk_def(static_cast<pure*>(nullptr), 0));
  using PPlan = plan<PDef, typename without_parallel<Sched>::type>;
  using PState = typename lower::emitter<PPlan>::state;

  index_t points = 1;
  for (index_t e : def.lhs.view.extents().values()) points *= e;
  const team_claim claim(chunks);
  [[maybe_unused]] const int team = claim.size();
  LOOM_PRAGMA(omp parallel for schedule(static) if (team > 1) num_threads(team))
  for (index_t c = 0; c < chunks; ++c) {
    PDef d = chunk_def(static_cast<pure*>(nullptr), c);
    d.lhs.bind(starts);
    // This chunk's k starts at c * F: a start, so every access (a boundary read, which finds its
    // indices from the starts, too) binds for it.
    const moved_start<std::remove_cvref_t<decltype(starts)>, R> chunk_starts{starts, c * F};
    d.rhs.for_each_access([&](auto& a) { a.bind(chunk_starts); });
    PState ps;
    ps.ext = s.ext;
    ps.template set<R>(0);
    ps.ext[meta::index_of<typename PDef::vars, R>] = std::min(F, K - c * F);
    walk_nest<PPlan>(d, ps, points * F);
  }

  // out = epilogue(combine over chunks of partial(chunk, ...)), in chunk order.
  using C = var<'c', 'h', 'u', 'n', 'k', '$'>;
  auto combined = [&]<class... P>(meta::list<P...>*) {
    auto acc = partial(C{}, P{}...);
    return reduce_node<typename Red::op_type, meta::list<C>, decltype(acc)>(acc);
  }(static_cast<pure*>(nullptr));
  auto rhs = lower::replace_reduction(def.rhs, combined);
  using Final = definition<typename Def::lhs_type, decltype(rhs), typename Def::mode>;
  // Lanes along the output's last variable (unit-stride in the partials), chunks in order inside.
  using FSched = decltype([] {
    if constexpr (pure::size > 0) return schedule<vectorize<meta::at<pure, pure::size - 1>{}>>{};
    else return schedule<>{};
  }());
  // No second check: the combine's extents are this run's (the chunks' count for C) and its reads
  // are in bounds by construction (the partials are this run's own; the epilogue's reads were
  // checked with the definition). Through run_checked it compiled a second set of checks.
  using final_vars = typename Final::vars;  // (named out here: g++ 12 misreads Final inside the lambda)
  checked_state<Final> fs;
  meta::for_each_type<final_vars>([&]<class V>(V*) {
    if constexpr (std::is_same_v<V, C>) fs.ext[meta::index_of<final_vars, V>] = chunks;
    else fs.ext[meta::index_of<final_vars, V>] = s.template extent<V>();
  });
  run_leaf<FSched>(Final(def.lhs, rhs), fs, points * chunks);
}

/// Extents, the output's emptiness and bounds, before anything runs: the extents into s, the
/// points of the nest into `points`; false when the output is empty (nothing to do).
template <class Def, class State>
bool check_run(const Def& def, State& s, index_t& points) {
  infer_extents(def, s);
  points = 1;
  bool empty_output = false;
  meta::for_each_type<typename Def::pure_vars>([&]<class V>(V*) {
    points *= s.template extent<V>();
    empty_output = empty_output || s.template extent<V>() == 0;
  });
  if (empty_output) return false;
  meta::for_each_type<typename Def::scheduled_rvars>([&]<class V>(V*) { points *= std::max<index_t>(s.template extent<V>(), 1); });

  // Bounds: every access, before anything runs; an output with one element at several points.
  const auto starts = starts_of(def);
  def.lhs.check_bounds(s, starts);
  check_distinct_elements(def.lhs.view, "loom::alias_error");
  def.rhs.for_each_access([&](const auto& a) { a.check_bounds(s, starts); });
  return true;
}

/// Runs Plan's nest on a definition whose extents (in `checked`) and bounds are checked.
template <class Plan, class Def>
void run_plan(const Def& def, const checked_state<Def>& checked, index_t points) {
  if constexpr (Plan::chunked_reduction) {
    run_chunked<Plan, typename Plan::schedule_type>(def, checked);
  } else {
    typename lower::emitter<Plan>::state s;
    s.ext = checked.ext;
    bind_and_walk<Plan>(def, s, points);
  }
}

/// Does a specialize condition hold for this run? (lanes_prefer's is in schedule/specialize.hpp.)
template <index_t B, class Def>
bool holds(touches_at_least<B>, const Def& def) {
  return lower::touches(def, B, simd::outgrows_cache_bytes());
}

template <auto V, index_t C, class Def>
bool holds(extent_at_least<V, C>, const Def& d) {
  static_assert(meta::contains<typename Def::vars, typename extent_at_least<V, C>::var>,
                "loom::extent_at_least<V, Count>: V is not a variable of this definition");
  return variable_extent<typename extent_at_least<V, C>::var>(d) >= C;
}

/// Runs the plan of the leaf of S (a schedule, or a specialize of them) whose conditions hold, on
/// a definition whose extents (in `checked`) and bounds are checked.
template <class S, class Def>
void run_leaf(const Def& def, const checked_state<Def>& checked, index_t points) {
  if constexpr (is_specialize<S>) {
    if (holds(typename S::condition{}, def)) run_leaf<typename S::then_schedule>(def, checked, points);
    else run_leaf<typename S::else_schedule>(def, checked, points);
  } else {
    run_plan<plan<Def, S>>(def, checked, points);
  }
}

/// Checks extents and bounds once, then runs the leaf of S that the run chooses: under a
/// specialize only the leaves' nests are compiled, the checks once.
template <class S, class Def>
void run_checked(const Def& def) {
  checked_state<Def> checked;
  index_t points = 0;
  if (check_run(def, checked, points)) run_leaf<S>(def, checked, points);
}

/// The aliased case of run_bound, out of line and cold: it is rare, and out of the caller's
/// optimization it costs the compiler less.
template <class Def, class Body>
LOOM_COLD void run_through_temporary(const Def& def, bool reads_output, Body& bind_and_run) {
  using OutView = typename Def::lhs_type::view_type;
  Tensor<typename Def::value_type, OutView::rank, typename OutView::extents_type> tmp(def.lhs.view.extents().values(),
                                                                                     def.lhs.view.name());
  if (reads_output) copy_view(tmp.view(), def.lhs.view);
  if constexpr (has_origin<OutView>) bind_and_run(OutView(tmp.view(), def.lhs.view.origins()));
  else bind_and_run(tmp.view());
  copy_view(def.lhs.view, tmp.view());
}

/// Runs `body(d)` on a copy d of def whose accesses are bound. When the output overlaps an input,
/// d writes a temporary (holding the output's values first when `reads_output`) that is copied
/// back afterwards, so every read sees the inputs as they were before the call (also a shifted
/// tail, or an engine reading its operands in any order).
template <class Def, class Body>
void run_bound(const Def& def, bool reads_output, Body&& body) {
  bool aliased = false;
  def.rhs.for_each_access([&](const auto& a) { aliased = aliased || views_overlap(def.lhs.view, a.view); });
  // Takes the output view as its own type (a temporary's layout_right view converts), so the body
  // is compiled once.
  const auto starts = starts_of(def);
  auto bind_and_run = [&](const typename Def::lhs_type::view_type& out) {
    Def d = def;
    d.lhs.view = out;
    d.lhs.bind(starts);
    d.rhs.for_each_access([&](auto& a) { a.bind(starts); });
    body(d);
  };
  if (!aliased)
    bind_and_run(def.lhs.view);
  else
    run_through_temporary(def, reads_output, bind_and_run);
}

template <class Plan, class Def, class State>
void bind_and_walk(const Def& def, State& s, index_t points) {
  const bool reads_output = std::is_same_v<typename Def::mode, assign_add> || Plan::acc_kind == accumulation::into_output;
  run_bound(def, reads_output, [&](const Def& d) { walk_nest<Plan>(d, s, points); });
}

}  // namespace detail

}  // namespace loom
