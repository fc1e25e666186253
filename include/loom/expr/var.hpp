// SPDX-License-Identifier: MIT
// loom/expr/var.hpp — index variables and the loop names a schedule derives from them.
// A variable is a type (so schedules can name it at compile time) and a constexpr object (so
// expressions can use it): `loom::Var<"ry"> ry;` or the predefined `loom::vars::i`.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <ostream>

#include "../core/config.hpp"
#include "../core/meta.hpp"

namespace loom {

template <std::size_t N>
struct fixed_string {
  char data[N]{};
  constexpr fixed_string(const char (&s)[N]) {
    for (std::size_t k = 0; k < N; ++k) data[k] = s[k];
  }
};

/// An index variable named by its characters (readable in compiler messages: var<'r', 'y'>).
template <char... C>
struct var {
  static constexpr char chars[] = {C..., '\0'};
  static std::string name() { return std::string(chars, sizeof...(C)); }

  // As an affine index expression: 1 · this + 0.
  using vars = meta::list<var>;
  template <class V>
  constexpr index_t coef() const { return std::is_same_v<V, var> ? 1 : 0; }
  constexpr index_t offset() const { return 0; }
  void print(std::ostream& os) const { os << name(); }
};

namespace detail {
template <fixed_string S, class Seq = std::make_index_sequence<sizeof(S.data) - 1>>
struct make_var;
template <fixed_string S, std::size_t... I>
struct make_var<S, std::index_sequence<I...>> {
  using type = var<S.data[I]...>;
};
}  // namespace detail

/// `constexpr loom::Var<"ry"> ry;` declares a variable.
template <fixed_string S>
using Var = typename detail::make_var<S>::type;

/// The loop type an object names (schedules take loops as values: split<i, 4>, vectorize<inner<j>>).
template <auto V>
using loop_t = std::remove_cvref_t<decltype(V)>;

// Loops a schedule derives from a variable (or from another derived loop).
template <class L>
struct outer_loop {
  static std::string name() { return L::name() + ".o"; }
};
template <class L>
struct inner_loop {
  static std::string name() { return L::name() + ".i"; }
};
template <class L1, class L2>
struct fused_loop {
  static std::string name() { return L1::name() + "*" + L2::name(); }
};

/// outer<V> / inner<V>: the two loops split<V, F> (or tile, vectorize, unroll) creates.
template <auto V>
inline constexpr outer_loop<loop_t<V>> outer{};
template <auto V>
inline constexpr inner_loop<loop_t<V>> inner{};
/// fused<V1, V2>: the loop fuse<V1, V2> creates.
template <auto V1, auto V2>
inline constexpr fused_loop<loop_t<V1>, loop_t<V2>> fused{};

template <class T>
inline constexpr bool is_var = false;
template <char... C>
inline constexpr bool is_var<var<C...>> = true;

/// The variable a loop descends from (fused loops have two and no single root).
template <class L>
struct root_var {
  using type = L;
};
template <class L>
struct root_var<outer_loop<L>> : root_var<L> {};
template <class L>
struct root_var<inner_loop<L>> : root_var<L> {};
template <class L>
using root_var_t = typename root_var<L>::type;

namespace vars {
inline constexpr Var<"i"> i{};
inline constexpr Var<"j"> j{};
inline constexpr Var<"k"> k{};
inline constexpr Var<"l"> l{};
inline constexpr Var<"m"> m{};
inline constexpr Var<"n"> n{};
inline constexpr Var<"x"> x{};
inline constexpr Var<"y"> y{};
inline constexpr Var<"z"> z{};
inline constexpr Var<"c"> c{};
inline constexpr Var<"r"> r{};
inline constexpr Var<"s"> s{};
inline constexpr Var<"t"> t{};
inline constexpr Var<"rx"> rx{};
inline constexpr Var<"ry"> ry{};
inline constexpr Var<"rc"> rc{};
}  // namespace vars

}  // namespace loom
