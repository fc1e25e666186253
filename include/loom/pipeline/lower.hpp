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
struct is_loop_directive : std::bool_constant<!is_placement<D>> {};
template <class D>
struct is_compute_at_t : std::bool_constant<is_compute_at<D>> {};
template <class D>
struct is_store_at_t : std::bool_constant<is_store_at<D>> {};

/// Where a stage runs, from its directives (Dirs) and whether it has a reduction.
enum class placement { inlined, root, at };

template <class Dirs, bool IsFunc, bool HasReduction>
struct stage_placement {
  using at_list = meta::filter<Dirs, is_compute_at_t>;
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

template <class Stages, class D>
inline constexpr bool inlined_stage = [] {
  using W = written_stage_t<D>;
  if constexpr (std::is_void_v<W>) return false;
  else return stage_placement<typename directives_of<W, Stages>::type, true, (D::reductions::size > 0)>::where == placement::inlined;
}();

/// The reader's tree with every access to producer P's stage replaced by P's expression at the
/// access's indices.
template <class P, class E>
auto inline_into(const E& e, const P& producer) {
  using Id = written_stage_t<P>;
  using lhs_vars = typename P::lhs_type::index_types;
  auto f = [&]<class A>(const A& a) {
    if constexpr (reads_stage<A>) {
      if constexpr (std::is_same_v<typename A::view_type::tag_type, Id>) {
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
  return map_accesses(e, f);
}

template <class P, class D>
auto inline_def(const D& d, const P& producer) {
  auto rhs = inline_into(d.rhs, producer);
  return definition<typename D::lhs_type, decltype(rhs), typename D::mode>(d.lhs, rhs);
}

/// The definitions left once every inlined stage is substituted into its readers, in order.
template <class Stages, class... D>
auto inline_stages(const std::tuple<D...>& defs) {
  if constexpr (sizeof...(D) == 0) {
    return std::tuple<>{};
  } else {
    return std::apply(
        [&](const auto& first, const auto&... rest) {
          using First = std::remove_cvref_t<decltype(first)>;
          if constexpr (inlined_stage<Stages, First>) {
            return inline_stages<Stages>(std::make_tuple(inline_def(rest, first)...));
          } else {
            return std::tuple_cat(std::make_tuple(first), inline_stages<Stages>(std::make_tuple(rest...)));
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
  return std::apply([](const auto&... d) { return std::make_tuple(as_region_def(d)...); }, inline_stages<Stages>(defs));
}

/// What the run needs to know of lowered stage K of the stage tuple Defs under schedule Stages.
template <class Stages, class Defs, std::size_t K>
struct stage_info {
  using def = std::tuple_element_t<K, Defs>;
  static constexpr std::size_t count = std::tuple_size_v<Defs>;
  static constexpr bool is_func = !std::is_void_v<written_stage_t<def>>;
  using key = std::conditional_t<is_func, written_stage_t<def>, std::conditional_t<K + 1 == count, output_stage, tensor_stage<K>>>;
  using dirs = typename directives_of<key, Stages>::type;
  using where = stage_placement<dirs, is_func, (def::reductions::size > 0)>;
  using user_schedule = typename loop_schedule_of<dirs>::type;
  using schedule_type = std::conditional_t<std::is_same_v<user_schedule, auto_schedule>, default_schedule_t<def>, user_schedule>;
};

}  // namespace detail

}  // namespace loom
