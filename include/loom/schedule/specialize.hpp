// SPDX-License-Identifier: MIT
// loom/schedule/specialize.hpp — two schedules for one definition, one of them chosen per run
// (Halide's specialize): both loop nests are compiled, and a condition on the run's operands picks
// one before any loop runs. For a kernel whose best nest depends on where its data lives or on its
// shape: a row sum in cache wants one stream per row, out of cache several long rows at once, read
// ahead, but short rows one at a time.
#pragma once
#include <type_traits>

#include "directives.hpp"

namespace loom {

/// A condition of specialize: the run touches at least Bytes (the output and every input view,
/// whole); beyond_cache: more than the last-level cache holds (simd::outgrows_cache_bytes()).
template <index_t Bytes = beyond_cache>
struct touches_at_least {
  static_assert(Bytes >= 0 || Bytes == beyond_cache, "loom::touches_at_least<Bytes>: Bytes must be >= 0 (or loom::beyond_cache)");
  static constexpr index_t bytes = Bytes;
};

/// A condition of specialize: variable V runs over at least Count points in this run (the
/// extent of the output or input dimension it indexes). For nests whose best shape depends on a
/// row's length: reading 8 rows at once pays only while each row is long enough to stream.
template <auto V, index_t Count>
struct extent_at_least {
  static_assert(is_var<std::remove_cvref_t<decltype(V)>>, "loom::extent_at_least<V, Count>: V must be a loop variable such as loom::vars::j");
  static_assert(Count >= 1, "loom::extent_at_least<V, Count>: Count must be >= 1");
  using var = std::remove_cvref_t<decltype(V)>;
  static constexpr index_t count = Count;
};

template <class C>
inline constexpr bool is_specialize_condition = false;
template <index_t B>
inline constexpr bool is_specialize_condition<touches_at_least<B>> = true;
template <auto V, index_t C>
inline constexpr bool is_specialize_condition<extent_at_least<V, C>> = true;

template <class Condition, class Then, class Else>
struct specialize;

/// A schedule, or a specialize between schedules.
template <class S>
inline constexpr bool is_schedule_like = false;
template <class... D>
inline constexpr bool is_schedule_like<schedule<D...>> = true;
template <class C, class T, class E>
inline constexpr bool is_schedule_like<specialize<C, T, E>> = true;

template <class S>
inline constexpr bool is_specialize = false;
template <class C, class T, class E>
inline constexpr bool is_specialize<specialize<C, T, E>> = true;

/// specialize<Condition, Then, Else>: runs Then when Condition holds for the run, else Else. Both
/// are checked and compiled; results never depend on which one runs (beyond the float tolerance
/// of reordered reductions).
template <class Condition, class Then, class Else>
struct specialize {
  static_assert(is_specialize_condition<Condition>,
                "loom::specialize<Condition, Then, Else>: Condition must be a specialize condition (loom::touches_at_least<Bytes> or loom::extent_at_least<V, Count>)");
  static_assert(is_schedule_like<Then> && is_schedule_like<Else>,
                "loom::specialize<Condition, Then, Else>: Then and Else must each be a loom::schedule<...> (or another loom::specialize)");
  using condition = Condition;
  using then_schedule = Then;
  using else_schedule = Else;
};

}  // namespace loom
