// SPDX-License-Identifier: MIT
// loom/lower/check.hpp — the compile-time checks of a definition and its schedule, reported as
// one static_assert per problem so that loom's message is the first error of a build.
#pragma once
#include <type_traits>

#include "../expr/definition.hpp"
#include "../schedule/specialize.hpp"
#include "plan.hpp"

namespace loom {

namespace detail {

/// Whether definition D passed its own checks (expr/definition.hpp's static_asserts, which have
/// already reported): if not, nothing is scheduled, so those stay the only errors.
template <class D>
inline constexpr bool well_formed = [] {
  using Lhs = typename D::lhs_type;
  const bool own_vars = std::is_void_v<typename first_where<typename D::reduction_vars, typename D::pure_vars, true>::type>;
  const bool bound = std::is_void_v<typename first_where<typename D::rhs_type::vars, typename D::vars, false>::type>;
  return detail::lhs_plain<Lhs>::value && Lhs::vars::size == Lhs::rank && !std::is_const_v<typename Lhs::element_type> &&
         std::is_same_v<value_t<typename D::rhs_type>, typename D::value_type> && own_vars && bound;
}();

/// Whether the variables a specialize condition names are variables of definition D.
template <class C, class D>
inline constexpr bool condition_names_known_variables = true;
template <auto V, index_t C, class D>
inline constexpr bool condition_names_known_variables<extent_at_least<V, C>, D> =
    meta::contains<typename D::vars, typename extent_at_least<V, C>::var>;
template <auto V, auto O, class D>
inline constexpr bool condition_names_known_variables<lanes_prefer<V, O>, D> =
    meta::contains<typename D::vars, typename lanes_prefer<V, O>::var> && meta::contains<typename D::vars, typename lanes_prefer<V, O>::other>;

/// The loops directive X names (a reorder's every one, a prefetch's variable).
template <class X>
struct named_loops {
  using type = meta::list<>;
};
template <class X>
  requires requires { typename X::loop; }
struct named_loops<X> {
  using type = meta::list<typename X::loop>;
};
template <class X>
  requires requires { typename X::loop1; }
struct named_loops<X> {
  using type = meta::list<typename X::loop1, typename X::loop2>;
};
template <class X>
  requires requires { typename X::variable; }
struct named_loops<X> {
  using type = meta::list<typename X::variable>;
};
template <auto... V>
struct named_loops<reorder<V...>> {
  using type = meta::list<loop_t<V>...>;
};

/// Whether schedule S (either branch of a specialize) names a loop of a variable D reduces over
/// that is not one of D's loops: one of several reductions, each of which runs its own loops
/// (hoisted out of the loops it does not depend on), which D's schedule cannot reach.
template <class D, class S>
inline constexpr bool names_unscheduled_reduction = [] {
  if constexpr (is_specialize<S>)
    return names_unscheduled_reduction<D, typename S::then_schedule> || names_unscheduled_reduction<D, typename S::else_schedule>;
  else return false;
}();
template <class D, class... X>
inline constexpr bool names_unscheduled_reduction<D, schedule<X...>> = []<class... L>(meta::list<L...>*) {
  return ((meta::contains<typename D::reduction_vars, root_var_t<L>> && !meta::contains<typename D::loop_vars, root_var_t<L>>) || ...);
}(static_cast<meta::concat<meta::list<>, typename named_loops<X>::type...>*>(nullptr));

/// The first problem of schedule S (a specialize: of its Then, else of its Else) for definition
/// D. The directives are checked before plan<D, S> is instantiated, since a plan of a nest that
/// stopped early has nothing more to say.
template <class D, class S>
consteval schedule_problem first_problem() {
  if constexpr (!is_schedule_like<S>) {
    return schedule_problem::not_a_schedule;
  } else if constexpr (is_specialize<S>) {
    if constexpr (!condition_names_known_variables<typename S::condition, D>) return schedule_problem::condition_unknown_variable;
    constexpr schedule_problem then_problem = first_problem<D, typename S::then_schedule>();
    if constexpr (then_problem != schedule_problem::none) return then_problem;
    else return first_problem<D, typename S::else_schedule>();
  } else if constexpr (names_unscheduled_reduction<D, S>) {
    return schedule_problem::unscheduled_reduction_loop;
  } else {
    using built = sched::apply_all<typename sched::initial<typename D::loop_vars>::type, S, typename D::value_type>;
    if constexpr (built::problem != schedule_problem::none) return built::problem;
    else return plan<D, S>::problem;
  }
}

/// Whether schedule S (either branch of a specialize) names prefetch_stores, a directive of a
/// pipeline's stage: a single definition has no consumer to ask for.
template <class S>
inline constexpr bool names_prefetch_stores = [] {
  if constexpr (is_specialize<S>) return names_prefetch_stores<typename S::then_schedule> || names_prefetch_stores<typename S::else_schedule>;
  else return false;
}();
template <class... Ds>
inline constexpr bool names_prefetch_stores<schedule<Ds...>> = (plan_directives::is_prefetch_stores<Ds> || ...);

/// One static_assert per schedule_problem, so a bad schedule stops the build with one message at
/// the call of loom::run or print_loop_nest, ahead of any instantiation of the loop nest.
template <schedule_problem P>
constexpr void report_schedule() {
  using enum schedule_problem;
  static_assert(P != not_a_schedule, "loom::run<S>: S must be a loom::schedule<...> or a loom::specialize<...> of schedules");
  static_assert(P != condition_unknown_variable,
                "loom::specialize: its condition (extent_at_least<V, Count> or lanes_prefer<V, Other>) names a variable that "
                "is not a variable of this definition");
  // a directive's own parameters
  static_assert(P != interleave_parts, "loom::interleave<Parts>: Parts must be in [1, 16]");
  static_assert(P != prefetch_distance, "loom::prefetch<V, Distance>: Distance (in steps of V) must not be 0");
  static_assert(P != large_blocks_factor, "loom::large_blocks<V, F>: the block length F must be at least 1");
  static_assert(P != min_bytes_negative, "loom: a directive's MinBytes must be >= 0 (or loom::beyond_cache)");
  // the directives, applied in order
  static_assert(P != split_twice, "loom::split/tile/unroll/vectorize: this loop was already split (split its outer<> or inner<> loop instead)");
  static_assert(P != unknown_loop, "loom::split/tile/unroll/vectorize: the loop named is not a loop of this definition");
  static_assert(P != split_factor, "loom::split/tile/unroll: the factor must be at least 1");
  static_assert(P != split_masked_tail, "loom::split: tail::masked applies to vectorized loops only (use vectorize<V, W, tail::masked>)");
  static_assert(P != tile_same_loop, "loom::tile<V1, V2, ...>: V1 and V2 must be different loops");
  static_assert(P != reorder_unknown_loop, "loom::reorder: names a loop that is not a loop of this definition (after the splits before it)");
  static_assert(P != reorder_twice, "loom::reorder: names the same loop twice");
  static_assert(P != fuse_unknown_first, "loom::fuse<V1, V2>: V1 is not a loop of this definition");
  static_assert(P != fuse_unknown_second, "loom::fuse<V1, V2>: V2 is not a loop of this definition");
  static_assert(P != fuse_not_adjacent, "loom::fuse<V1, V2>: V2 must be the loop immediately inside V1 (reorder them first)");
  static_assert(P != unroll_variable_trip,
                "loom::unroll<V>: without a factor, V must have a constant trip count (the inner<> loop of a split, or "
                "the outer<> loop of a split inner<> loop); write unroll<V, F>");
  static_assert(P != unroll_masked_tail, "loom::unroll: tail::masked applies to vectorized loops only");
  static_assert(P != vector_width_unavailable,
                "loom::vectorize<V, W>: no enabled SIMD target has W lanes of this element type "
                "(use loom::native, or a width of 16/32/64 bytes that -march enables)");
  static_assert(P != vectorize_not_coordinate,
                "loom::vectorize<V>: V must be a variable or an inner<> loop of one (vector lanes are consecutive "
                "values of a variable; outer<> and fused loops cannot be lanes)");
  static_assert(P != parallel_unknown_loop, "loom::parallel<V>: V is not a loop of this definition");
  static_assert(P != loop_kind_twice,
                "loom::vectorize/unroll/parallel: this loop is already vectorized, unrolled or parallel (a loop is at "
                "most one of them: split it and give each part its own)");
  static_assert(P != large_blocks_not_split,
                "loom::large_blocks<V, F>: V is not split at this point of the schedule; split<V, F0> it first (F0: the "
                "block length of runs below the threshold)");
  // the whole nest
  static_assert(P != large_blocks_twice, "loom::large_blocks: the schedule names large_blocks twice (one split per schedule)");
  static_assert(P != fuse_pure_with_reduction, "loom::fuse: cannot fuse a pure loop with a reduction loop");
  static_assert(P != two_vectorized, "loom::vectorize: only one loop can be vectorized");
  static_assert(P != two_parallel, "loom::parallel: only one loop can be parallel (fuse<> two loops to parallelize both)");
  static_assert(P != parallel_reduction_variable,
                "loom::parallel<V>: V iterates a reduction variable, and threads would race on the accumulator. For a "
                "deterministic parallel reduction split it (split<k, F>), make outer<k> the outermost loop and "
                "parallelize outer<k>; or parallelize a loop over the output's variables");
  static_assert(P != parallel_inside_vectorized, "loom::parallel<V>: a parallel loop cannot be inside the vectorized loop");
  static_assert(P != parallel_inside_reduction, "loom::parallel<V>: the parallel loop must be outside the reduction's loops (reorder it outwards)");
  static_assert(P != outer_inside_inner, "loom::reorder: an outer<V> loop must stay outside every loop of its inner<V>");
  static_assert(P != large_blocks_on_lanes,
                "loom::large_blocks<V, F>: inner<V> is the vector lanes, whose count is fixed at compile time; put "
                "large_blocks on a split outside the lanes (split<V, F0>, vectorize<inner<V>>, large_blocks<V, F>)");
  static_assert(P != large_blocks_reduction,
                "loom::large_blocks<V, F>: V iterates a reduction variable, whose blocks must not change from run to "
                "run (a reduction's order, and a deterministic parallel reduction's chunks, follow them); use it on "
                "a loop over the output's variables");
  static_assert(P != large_blocks_unrolled,
                "loom::large_blocks<V, F>: a loop inside inner<V> is unrolled, which needs a trip count fixed at compile "
                "time, and large_blocks makes inner<V>'s block length a run-time choice; unroll a loop split off "
                "inside it by a constant (split<inner<V>, U>, unroll<inner<inner<V>>>) or drop large_blocks");
  static_assert(P != output_accumulator_needs_bare_reduction,
                "loom: this schedule puts a reduction loop outside a pure loop of non-constant trip count, which "
                "makes the output the accumulator; that needs the right side to be the reduction alone. Move the "
                "reduction loops inwards, or split/unroll/vectorize the pure loops inside them");
  static_assert(P != accumulate_extremum_into_output,
                "loom: `out += maximum/minimum/product(...)` cannot use the output as accumulator; move the reduction loops inwards");
  static_assert(P != accumulator_block_too_large,
                "loom: the reduction's accumulator block (constant-trip loops inside the reduction) exceeds 64 "
                "registers; use smaller split/unroll factors inside the reduction loops");
  static_assert(P != stream_stores_twice, "loom::stream_stores: the schedule names stream_stores twice");
  static_assert(P != stream_stores_output_read,
                "loom::stream_stores: only for `out(...) = e` without reductions (an output that is read, by `+=` "
                "or as a reduction's accumulator, is better kept in cache); remove stream_stores");
  static_assert(P != stream_stores_not_vectorized,
                "loom::stream_stores: streaming stores write whole vectors; vectorize the output's unit-stride loop");
  static_assert(P != prefetch_twice, "loom::prefetch: the schedule names prefetch twice (one variable per schedule)");
  static_assert(P != prefetch_unknown_variable,
                "loom::prefetch<V, Distance>: V is not a variable of this definition (name a variable, not a loop)");
  static_assert(P != interleave_twice, "loom::interleave: the schedule names interleave twice");
  static_assert(P != prefetch_stores_outside_pipeline,
                "loom::prefetch_stores<C> is a directive of a pipeline's stage computed at C (loom::stage<F, "
                "compute_at<C, Loop>, prefetch_stores<C>>), not of a single definition's schedule");
  static_assert(P != shift_inwards_illegal,
                "loom: tail::shift_inwards is illegal here: it recomputes points, which is wrong for `+=`, for "
                "reduction variables, when the output is the accumulator, or across a parallel loop. Use tail::guard");
  static_assert(P != masked_tail_not_vectorized, "loom: tail::masked applies to vectorized loops only");
  static_assert(P != unroll_too_large,
                "loom::unroll: an unrolled loop runs more than 64 iterations, each a copy of the body for the compiler "
                "to build; unroll by a smaller factor (unroll<V, F> with F <= 64, or split further first)");
  static_assert(P != interleave_not_vectorized,
                "loom::interleave<Parts>: interleaves the parts of a vector loop's block, and this schedule "
                "vectorizes no loop; vectorize one (vectorize<inner<V>>) or drop interleave");
  // the definition's reductions
  static_assert(P != unscheduled_reduction_loop,
                "loom: the schedule names a loop of a reduction that runs its own loops: in a definition with more "
                "than one reduction, each is computed in a nest of its own (hoisted out of the loops it does not "
                "depend on), which the definition's schedule cannot reach. Schedule the output's loops, or make the "
                "reduction a pipeline stage (loom::Func) with its own schedule");
}

}  // namespace detail

}  // namespace loom
