// SPDX-License-Identifier: MIT
// loom/schedule/specialize.hpp — two schedules for one definition, one of them chosen per run
// (Halide's specialize): both loop nests are compiled, and a condition on the run's operands picks
// one before any loop runs. For a kernel whose best nest depends on where its data lives or on its
// shape: a row sum in cache wants one stream per row, out of cache several long rows at once, read
// ahead, but short rows one at a time.
#pragma once
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

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

/// A condition of specialize: in this run, vector lanes along variable V meet at least as many
/// unit-stride bytes as lanes along Other. A view counts its bytes (whole) for a variable along
/// which it is unit-stride, and against one it moves along at another stride (a gather or
/// scatter). For views whose strides only the run knows (transposed, column-major): the default
/// schedule chooses between lanes along a row-major and a column-major view's contiguous rows.
template <auto V, auto Other>
struct lanes_prefer {
  static_assert(is_var<std::remove_cvref_t<decltype(V)>> && is_var<std::remove_cvref_t<decltype(Other)>>,
                "loom::lanes_prefer<V, Other>: V and Other must be loop variables such as loom::vars::j");
  using var = std::remove_cvref_t<decltype(V)>;
  using other = std::remove_cvref_t<decltype(Other)>;
};

template <class C>
inline constexpr bool is_specialize_condition = false;
template <index_t B>
inline constexpr bool is_specialize_condition<touches_at_least<B>> = true;
template <auto V, index_t C>
inline constexpr bool is_specialize_condition<extent_at_least<V, C>> = true;
template <auto V, auto O>
inline constexpr bool is_specialize_condition<lanes_prefer<V, O>> = true;

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
                "loom::specialize<Condition, Then, Else>: Condition must be a specialize condition (loom::touches_at_least<Bytes>, loom::extent_at_least<V, Count> or loom::lanes_prefer<V, Other>)");
  static_assert(is_schedule_like<Then> && is_schedule_like<Else>,
                "loom::specialize<Condition, Then, Else>: Then and Else must each be a loom::schedule<...> (or another loom::specialize)");
  using condition = Condition;
  using then_schedule = Then;
  using else_schedule = Else;
};

namespace detail {
/// An access's bytes as lanes along V see them: + when it is unit-stride along V, - when it moves
/// along V at another stride, 0 when it does not move along V.
template <class V, class A>
index_t lane_bytes(const A& a) {
  if constexpr (!meta::contains<typename A::vars, V>) {
    return 0;
  } else {
    index_t stride = 0;
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((stride += std::get<D>(a.idx).template coef<V>() * a.view.stride(D)), ...);
    }(std::make_index_sequence<A::rank>{});
    const index_t bytes = a.view.size() * index_t(sizeof(typename A::element_type));
    return stride == 1 ? bytes : stride == 0 ? 0 : -bytes;
  }
}

/// Does lanes_prefer hold for this run? (The output and every input access.)
template <auto V, auto O, class Def>
bool holds(lanes_prefer<V, O>, const Def& d) {
  using C = lanes_prefer<V, O>;
  index_t balance = lane_bytes<typename C::var>(d.lhs) - lane_bytes<typename C::other>(d.lhs);
  d.rhs.for_each_access([&](const auto& a) { balance += lane_bytes<typename C::var>(a) - lane_bytes<typename C::other>(a); });
  return balance >= 0;
}

template <auto V, auto O>
std::string describe(lanes_prefer<V, O>) {
  using C = lanes_prefer<V, O>;
  return "lanes along " + C::var::name() + " meet as many unit-stride bytes as along " + C::other::name() + " or more";
}
}  // namespace detail

}  // namespace loom
