// SPDX-License-Identifier: MIT
// loom/pipeline/lower.hpp — from a pipeline and its schedule to the stages that run: each
// stage's directives found by name, inlined stages substituted into their readers, every output
// made a region (so a stage can be computed over any box of it), and where each stage runs.
#pragma once
#include <tuple>
#include <type_traits>

#include "../expr/transform.hpp"
#include "../lower/plan.hpp"
#include "../schedule/specialize.hpp"
#include "../tune/default_schedule.hpp"
#include "pipeline.hpp"
#include "schedule.hpp"
#include "share.hpp"

namespace loom {

namespace detail {

/// The key of an intermediate tensor output (not the last definition) at lowered position K.
template <std::size_t K>
struct tensor_stage {};

/// The directives of the stage named Key in the pipeline schedule Stages (a list of stage<...>).
template <class Key, class Stages>
struct directives_of {
  using type = meta::list<>;
};
template <class Key, auto S, class... D, class... Rest>
struct directives_of<Key, meta::list<stage<S, D...>, Rest...>> {
  using type = std::conditional_t<std::is_same_v<stage_key<std::remove_cvref_t<decltype(S)>>, Key>, meta::list<D...>,
                                  typename directives_of<Key, meta::list<Rest...>>::type>;
};

template <class D>
struct is_loop_directive : std::bool_constant<!is_placement<D> && !plan_directives::is_prefetch_stores<D>> {};

/// Schedule S without stream_stores (in both branches of a specialize): for a stage whose values
/// are read again from cache, however large the tensors its run reads.
template <class S>
struct without_streaming;
template <class... Ds>
struct without_streaming<schedule<Ds...>> {
  template <class D>
  struct keep : std::true_type {};
  template <index_t B>
  struct keep<stream_stores<B>> : std::false_type {};
  using type = decltype([]<class... K>(meta::list<K...>*) { return schedule<K...>{}; }(
      static_cast<meta::filter<meta::list<Ds...>, keep>*>(nullptr)));
};
template <class C, class T, class E>
struct without_streaming<specialize<C, T, E>> {
  using type = specialize<C, typename without_streaming<T>::type, typename without_streaming<E>::type>;
};

/// Schedule S with directives D added (to both branches of a specialize).
template <class S, class... D>
struct with_directive;
template <class... Ds, class... D>
struct with_directive<schedule<Ds...>, D...> {
  using type = schedule<Ds..., D...>;
};
template <class C, class T, class E, class... D>
struct with_directive<specialize<C, T, E>, D...> {
  using type = specialize<C, typename with_directive<T, D...>::type, typename with_directive<E, D...>::type>;
};

/// The stage a stage's prefetch_stores<C> names (its key), or void.
template <class Dirs>
struct prefetch_stores_consumer {
  using type = void;
};
template <class D, class... Rest>
struct prefetch_stores_consumer<meta::list<D, Rest...>> : prefetch_stores_consumer<meta::list<Rest...>> {};
template <auto C, class... Rest>
struct prefetch_stores_consumer<meta::list<prefetch_stores<C>, Rest...>> {
  using type = stage_key<std::remove_cvref_t<decltype(C)>>;
};
template <class D>
struct is_compute_at_t : std::bool_constant<is_compute_at<D>> {};
template <class D>
struct is_prefetch_stores_t : std::bool_constant<plan_directives::is_prefetch_stores<D>> {};
template <class D>
struct is_store_at_t : std::bool_constant<is_store_at<D>> {};

/// Where a stage runs, from its directives (Dirs) and whether it has a reduction.
enum class placement { inlined, root, at };

/// The rows of a strip of the default schedule of a pipeline with stencil stages (see
/// default_strip): enough that the halo's recomputation is small (2 of 32 rows for a 3-tap
/// stencil), few enough that a strip of a stage stays in the L2 cache for rows of a few thousand.
inline constexpr index_t default_strip_rows = 32;

/// The default placement computed at the output's strips: compute_at<output, outer<V0>>, V0 the
/// output's first variable.
template <class V0>
using strip_compute_at = compute_at<output_stage{}, outer_loop<V0>{}>;

template <class Dirs, bool IsFunc, bool HasReduction, class Strip = void>
struct stage_placement {
  using at_list = std::conditional_t<std::is_void_v<Strip>, meta::filter<Dirs, is_compute_at_t>, meta::list<Strip>>;
  using store_list = meta::filter<Dirs, is_store_at_t>;
  static constexpr bool says_inline = meta::contains<Dirs, compute_inline>;
  static constexpr bool says_root = meta::contains<Dirs, compute_root>;
  static constexpr std::size_t placements = at_list::size + std::size_t(says_inline) + std::size_t(says_root);
  static constexpr placement where = !IsFunc                ? placement::root
                                     : at_list::size > 0    ? placement::at
                                     : says_root            ? placement::root
                                     : says_inline          ? placement::inlined
                                     : HasReduction         ? placement::root
                                                            : placement::inlined;
};

// ---- the default placement of a stage without directives ----

/// The accesses of tree E to stage Id.
template <class Id, class Accesses>
struct reads_of;
template <class Id, class... A>
struct reads_of<Id, meta::list<A...>> {
  template <class X>
  static constexpr bool of_id = [] {
    if constexpr (reads_stage<X>) return std::is_same_v<typename X::view_type::tag_type, Id>;
    else return false;
  }();
  using type = meta::unique<meta::concat<meta::list<>, std::conditional_t<of_id<A>, meta::list<A>, meta::list<>>...>>;
};

/// Whether access A reads its stage at the reader's own point: indexed by exactly the stage's
/// variables LhsVars, no offsets, no boundary condition. Inlined, every such read of one right
/// side is one value, computed once (share.hpp).
template <class A, class LhsVars>
inline constexpr bool identity_read = [] {
  if constexpr (requires { typename A::kind; }) return false;  // a boundary condition's access
  else return std::is_same_v<typename A::index_types, LhsVars>;
}();

/// Whether definition D reads stage Id (whose variables are LhsVars) anywhere but at its own
/// point (a stencil: an offset, another index tuple): inlined, such reads are computed once each.
template <class Id, class LhsVars, class D>
inline constexpr bool reads_stencil = []<class... A>(meta::list<A...>*) {
  return !(identity_read<A, LhsVars> && ...);
}(static_cast<typename reads_of<Id, typename D::rhs_type::accesses>::type*>(nullptr));

template <class Id, class D>
inline constexpr bool reads_at_all = reads_of<Id, typename D::rhs_type::accesses>::type::size > 0;

/// The stage each definition of Defs writes, and the variables of the last one (the output).
template <class Stages, class Defs>
struct pipeline_defaults;
template <class Stages, class... D>
struct pipeline_defaults<Stages, meta::list<D...>> {
  using last = meta::at<meta::list<D...>, sizeof...(D) - 1>;
  using out_vars = typename last::lhs_type::index_types;
  static constexpr bool output_scheduled = directives_of<output_stage, Stages>::type::size > 0;
  /// A reader that runs before the output's strips (a reduction at root, or a stage the
  /// schedule places itself): a stage it reads cannot live inside the output's loops.
  template <class R>
  static constexpr bool runs_apart = [] {
    using W = written_stage_t<R>;
    if constexpr (std::is_void_v<W>) return !std::is_same_v<R, last>;  // an intermediate tensor output
    else return R::reductions::size > 0 || directives_of<W, Stages>::type::size > 0;
  }();
  /// Stage Id (written by P) is computed per strip of the output's rows by default: it has no
  /// directives and no reduction, some definition reads it as a stencil (inlined, each of its
  /// values would be computed several times), no reader runs apart from the output's loops, the
  /// output has two dimensions or more and no directives of its own.
  template <class P>
  static constexpr bool strip = [] {
    using Id = written_stage_t<P>;
    if constexpr (std::is_void_v<Id> || output_scheduled || out_vars::size < 2 || P::reductions::size > 0) {
      return false;
    } else if constexpr (directives_of<Id, Stages>::type::size > 0) {
      return false;
    } else {
      const bool stencil = (reads_stencil<Id, typename P::lhs_type::index_types, D> || ...);
      const bool apart = ((reads_at_all<Id, D> && runs_apart<D>) || ...);
      return stencil && !apart;
    }
  }();
  static constexpr bool any_strip = (strip<D> || ...);
  /// The output's default schedule when stages are computed per strip: strips of
  /// default_strip_rows rows of its first variable, in parallel, lanes along its last.
  using V0 = meta::at<out_vars, 0>;
  using VL = meta::at<out_vars, out_vars::size - 1>;
  using strip_schedule = schedule<split<V0{}, default_strip_rows>, parallel<outer_loop<V0>{}>, vectorize<VL{}>>;
};

/// The placement of the stage definition D writes, in pipeline Defs under schedule Stages.
template <class Stages, class Defs, class D>
using placement_of_def = stage_placement<
    typename directives_of<std::conditional_t<std::is_void_v<written_stage_t<D>>, output_stage, written_stage_t<D>>, Stages>::type,
    !std::is_void_v<written_stage_t<D>>, (D::reductions::size > 0),
    std::conditional_t<pipeline_defaults<Stages, Defs>::template strip<D>,
                       strip_compute_at<typename pipeline_defaults<Stages, Defs>::V0>, void>>;

/// The loop schedule of a stage: its loop directives, or the default when it has none.
template <class Dirs>
struct loop_schedule_of;
template <class... D>
struct loop_schedule_of<meta::list<D...>> {
  using loops = meta::filter<meta::list<D...>, is_loop_directive>;
  using type = decltype([]<class... L>(meta::list<L...>*) {
    if constexpr (sizeof...(L) == 0) return auto_schedule{};
    else if constexpr (sizeof...(L) == 1 && (is_schedule_like<L> && ...)) return (L{}, ...);  // a whole schedule
    else return schedule<L...>{};
  }(static_cast<loops*>(nullptr)));
};

template <class Stages, class Defs, class D>
inline constexpr bool inlined_stage = [] {
  if constexpr (std::is_void_v<written_stage_t<D>>) return false;
  else return placement_of_def<Stages, Defs, D>::where == placement::inlined;
}();

/// The reader's tree with every access to producer P's stage replaced by P's expression at the
/// access's indices.
template <class P, class E>
auto inline_into(const E& e, const P& producer) {
  using Id = written_stage_t<P>;
  using lhs_vars = typename P::lhs_type::index_types;
  auto f = [&]<class A>(const A& a) {
    if constexpr (reads_stage<A>) {
      if constexpr (std::is_same_v<typename A::view_type::tag_type, Id> && identity_read<A, lhs_vars>) {
        return shared_read<Id>(producer.rhs);  // at the reader's point: computed once (share.hpp)
      } else if constexpr (std::is_same_v<typename A::view_type::tag_type, Id>) {
        return [&]<class... V>(meta::list<V...>*) {
          return std::apply(
              [&](const auto&... idx) {
                index_substitution<meta::list<V...>, std::remove_cvref_t<decltype(idx)>...> sub{{idx...}};
                return substitute(producer.rhs, sub);
              },
              a.idx);
        }(static_cast<lhs_vars*>(nullptr));
      } else {
        return a;
      }
    } else {
      return a;
    }
  };
  if constexpr (reads_of<Id, typename E::accesses>::type::size > 0) return share(map_accesses(e, f));
  else return e;
}

/// Whether access A reads a stage at plain variables (no offsets, no boundary condition): two
/// accesses of one such type read the same element at every point.
template <class A>
inline constexpr bool exact_stage_read = [] {
  if constexpr (!reads_stage<A> || requires { typename A::kind; }) return false;
  else return []<class... I>(meta::list<I...>*) { return (is_var<I> && ...); }(static_cast<typename A::index_types*>(nullptr));
}();

/// The key of a repeated exact read A (named after its stage in printed nests).
template <class A>
struct repeated_read {
  static constexpr std::string_view name() { return A::view_type::tag_type::name(); }
};

/// D with every exact stage read that its right side makes more than once bound once per point
/// (share.hpp): Ixx(y, x) = Ix(y, x) * Ix(y, x) loads Ix once, and so does each point of a reader
/// that Ixx is inlined into (Harris's box sums read 36 rows' worth of accesses instead of 54).
template <class D>
auto bind_repeated_reads(const D& d) {
  using accs = typename D::rhs_type::accesses;
  auto repeated = []<class A>(A*) { return exact_stage_read<A> && meta::count<accs, A> > 1; };
  if constexpr (![&]<class... A>(meta::list<A...>*) { return (repeated(static_cast<A*>(nullptr)) || ... || false); }(
                    static_cast<accs*>(nullptr))) {
    return d;
  } else {
    auto rhs = share(map_accesses(d.rhs, [&]<class A>(const A& a) {
      if constexpr (repeated(static_cast<A*>(nullptr))) return shared_read<repeated_read<A>>(a);
      else return a;
    }));
    return definition<typename D::lhs_type, decltype(rhs), typename D::mode>(d.lhs, rhs);
  }
}

template <class P, class D>
auto inline_def(const D& d, const P& producer) {
  auto rhs = inline_into(d.rhs, producer);
  return definition<typename D::lhs_type, decltype(rhs), typename D::mode>(d.lhs, rhs);
}

/// The definitions left once every inlined stage is substituted into its readers, in order
/// (Defs: the pipeline's own definitions, which decide the defaults).
template <class Stages, class Defs, class... D>
auto inline_stages(const std::tuple<D...>& defs) {
  if constexpr (sizeof...(D) == 0) {
    return std::tuple<>{};
  } else {
    return std::apply(
        [&](const auto& def, const auto&... rest) {
          const auto first = bind_repeated_reads(def);
          using First = std::remove_cvref_t<decltype(def)>;
          if constexpr (inlined_stage<Stages, Defs, First>) {
            return inline_stages<Stages, Defs>(std::make_tuple(inline_def(rest, first)...));
          } else {
            return std::tuple_cat(std::make_tuple(first), inline_stages<Stages, Defs>(std::make_tuple(rest...)));
          }
        },
        defs);
  }
}

/// The definition with its output seen as a region (a tensor output as the box of itself that
/// a run computes; a stage's output already is one).
template <class D>
auto as_region_def(const D& d) {
  using View = typename D::lhs_type::view_type;
  if constexpr (has_origin<View>) {
    return d;
  } else {
    using R = region_view<typename View::element_type, View::rank, typename View::layout_type>;
    const R view(typename R::base_view(d.lhs.view), shape_t<View::rank>{});
    return std::apply(
        [&](const auto&... idx) {
          using L = access<R, std::remove_cvref_t<decltype(idx)>...>;
          return definition<L, typename D::rhs_type, typename D::mode>(L(view, idx...), d.rhs);
        },
        d.lhs.idx);
  }
}

template <class Stages, class... D>
auto lower_pipeline(const std::tuple<D...>& defs) {
  return std::apply([](const auto&... d) { return std::make_tuple(as_region_def(d)...); },
                    inline_stages<Stages, meta::list<D...>>(defs));
}

/// What the run needs to know of lowered stage K of the stage tuple Defs under schedule Stages
/// (Orig: the pipeline's own definitions, a meta::list, which decide the defaults).
template <class Stages, class Defs, std::size_t K, class Orig>
struct stage_info {
  using def = std::tuple_element_t<K, Defs>;
  static constexpr std::size_t count = std::tuple_size_v<Defs>;
  static constexpr bool is_func = !std::is_void_v<written_stage_t<def>>;
  using key = std::conditional_t<is_func, written_stage_t<def>, std::conditional_t<K + 1 == count, output_stage, tensor_stage<K>>>;
  using dirs = typename directives_of<key, Stages>::type;
  using defaults = pipeline_defaults<Stages, Orig>;
  /// The pipeline's definition that writes this stage (void for a tensor output).
  template <class... O>
  static auto original(meta::list<O...>*) {
    if constexpr (!is_func) return static_cast<void*>(nullptr);
    else return static_cast<meta::at<meta::list<O...>, meta::index_of<meta::list<written_stage_t<O>...>, key>>*>(nullptr);
  }
  using orig = std::remove_pointer_t<decltype(original(static_cast<Orig*>(nullptr)))>;
  static constexpr bool strip = [] {
    if constexpr (std::is_void_v<orig>) return false;
    else return defaults::template strip<orig>;
  }();
  using where = stage_placement<dirs, is_func, (def::reductions::size > 0),
                                std::conditional_t<strip, strip_compute_at<typename defaults::V0>, void>>;
  using user_schedule = typename loop_schedule_of<dirs>::type;
  using loop_schedule = std::conditional_t<
      !std::is_same_v<user_schedule, auto_schedule>, user_schedule,
      std::conditional_t<std::is_same_v<key, output_stage> && defaults::any_strip, typename defaults::strip_schedule, default_schedule_t<def>>>;
  // prefetch_stores<C> goes to the leaf (lower/plan.hpp) with the loops the stage would have anyway.
  using schedule_type = decltype([]<class... D>(meta::list<D...>*) {
    if constexpr (sizeof...(D) == 0) return loop_schedule{};
    else return typename with_directive<loop_schedule, D...>::type{};
  }(static_cast<meta::filter<dirs, is_prefetch_stores_t>*>(nullptr)));
};

}  // namespace detail

}  // namespace loom
