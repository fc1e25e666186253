// SPDX-License-Identifier: MIT
// loom/pipeline/schedule.hpp — a pipeline's schedule: one loom::stage<Name, Directives...> per stage
// it sets, each with the loop directives of loom::schedule (split, tile, vectorize, parallel, ...)
// for that stage's own nest, plus where the stage is computed and stored.
#pragma once
#include <type_traits>

#include "../expr/var.hpp"
#include "../schedule/directives.hpp"
#include "func.hpp"

namespace loom {

/// Names the pipeline's last definition (a tensor output) in a schedule: stage<output, ...>,
/// compute_at<output, y>.
struct output_stage {
  static constexpr std::string_view name() { return "output"; }
};
inline constexpr output_stage output{};

/// Substituted into every reader: no storage, the stage's expression is evaluated where it is
/// read (recomputed by each reader). The default for a stage without a reduction.
struct compute_inline {};
/// Its whole required region is computed into a buffer before its first reader runs. The default
/// for a stage with a reduction.
struct compute_root {};
/// Computed inside loop Loop of stage Consumer: at every iteration, the region that iteration
/// reads (halo included), into the running thread's own buffer.
template <auto Consumer, auto Loop>
struct compute_at {
  using consumer = std::remove_cvref_t<decltype(Consumer)>;
  using loop = loop_t<Loop>;
};
/// With compute_at at a loop inside Loop: the buffer lives at Loop, so consecutive iterations of
/// the loops between reuse what the previous ones computed (a sliding window) and compute only
/// the new part.
template <auto Consumer, auto Loop>
struct store_at {
  using consumer = std::remove_cvref_t<decltype(Consumer)>;
  using loop = loop_t<Loop>;
};

/// The directives of one stage (a Func, or loom::output).
template <auto Stage, class... Directives>
struct stage {
  using key = std::remove_cvref_t<decltype(Stage)>;
};

namespace detail {
/// The stage identity a name in a schedule stands for: a Func's func_id, or output_stage.
template <class S>
struct stage_key_of {
  using type = S;
};
template <class T, std::size_t R, fixed_string N>
struct stage_key_of<Func<T, R, N>> {
  using type = func_id<N>;
};
template <class S>
using stage_key = typename stage_key_of<S>::type;

template <class D>
inline constexpr bool is_placement = false;
template <>
inline constexpr bool is_placement<compute_inline> = true;
template <>
inline constexpr bool is_placement<compute_root> = true;
template <auto C, auto L>
inline constexpr bool is_placement<compute_at<C, L>> = true;
template <auto C, auto L>
inline constexpr bool is_placement<store_at<C, L>> = true;

template <class D>
inline constexpr bool is_compute_at = false;
template <auto C, auto L>
inline constexpr bool is_compute_at<compute_at<C, L>> = true;
template <class D>
inline constexpr bool is_store_at = false;
template <auto C, auto L>
inline constexpr bool is_store_at<store_at<C, L>> = true;

template <class T>
inline constexpr bool is_stage_directive = false;
template <auto S, class... D>
inline constexpr bool is_stage_directive<stage<S, D...>> = true;
}  // namespace detail

}  // namespace loom
