// SPDX-License-Identifier: MIT
// loom/expr/definition.hpp — `out(i, j) = e` / `out(i, j) += e`: a lazy definition. It knows at
// compile time its pure variables (the left side's), its reduction variables and which
// reduction (if exactly one) the schedule may loop over; loom::run executes it.
#pragma once
#include <type_traits>

#include "access.hpp"
#include "reduce.hpp"
#include "scope.hpp"

namespace loom {

struct assign_set {
  static constexpr const char* sym = "=";
};
struct assign_add {
  static constexpr const char* sym = "+=";
};

namespace detail {
template <class L>
struct all_rvars;
template <class... R>
struct all_rvars<meta::list<R...>> {
  using type = meta::unique<meta::concat<meta::list<>, typename R::rvars...>>;
};
template <class L>
struct scheduled_rvars {
  using type = meta::list<>;
};
template <class R>
struct scheduled_rvars<meta::list<R>> {
  using type = typename R::rvars;
};
template <class L>
struct lhs_plain;
template <class V, class... I>
struct lhs_plain<access<V, I...>> : std::bool_constant<(is_var<I> && ...)> {};
/// The first type of list L that is (In) or is not (!In) in list M; void if none.
template <class L, class M, bool In>
struct first_where {
  using type = void;
};
template <class V, class... R, class M, bool In>
struct first_where<meta::list<V, R...>, M, In> {
  using type = std::conditional_t<meta::contains<M, V> == In, V, typename first_where<meta::list<R...>, M, In>::type>;
};
}  // namespace detail

template <class Lhs, class Rhs, class Mode>
struct definition {
  static_assert(detail::lhs_plain<Lhs>::value,
                "loom: the left side of a definition must be indexed by plain variables, e.g. out(i, j) = ...");
  static_assert(Lhs::vars::size == Lhs::rank, "loom: a variable appears twice on the left side of a definition");
  static_assert(!std::is_const_v<typename Lhs::element_type>,
                "loom: the output of a definition must be writable (it is a const tensor or view)");
  static_assert(std::is_same_v<value_t<Rhs>, typename Lhs::value_type>,
                "loom: the right side's element type differs from the output's; convert with loom::cast<T>(e)");

  using lhs_type = Lhs;
  using rhs_type = Rhs;
  using mode = Mode;
  using value_type = typename Lhs::value_type;
  using pure_vars = typename Lhs::vars;
  using reductions = typename Rhs::reductions;
  /// Exactly one reduction: its variables become loops the schedule controls.
  static constexpr bool has_scheduled_reduction = reductions::size == 1;
  using scheduled_rvars = typename detail::scheduled_rvars<reductions>::type;
  using reduction_vars = typename detail::all_rvars<reductions>::type;
  /// Every variable: pure ones (left-side order), then reduction variables.
  using vars = meta::concat<pure_vars, reduction_vars>;
  /// The loops of the default nest: pure variables then the scheduled reduction's.
  using loop_vars = meta::concat<pure_vars, scheduled_rvars>;
  // At class level, not in a function: the message is then a few lines from the user's line.
  // The note under each names the variable (is_void_v<var<'k'>>).
  static_assert(std::is_void_v<typename detail::first_where<reduction_vars, pure_vars, true>::type>,
                "loom: a reduction variable also indexes the output; reduce over a variable of its own");
  static_assert(std::is_void_v<typename detail::first_where<typename Rhs::vars, vars, false>::type>,
                "loom: a variable on the right side neither indexes the output nor is bound by a reduction "
                "(the note below names it)");
  static_assert(std::is_void_v<typename detail::first_where<vars_outside_reductions_t<Rhs>, pure_vars, false>::type>,
                "loom: a reduction's variable is used outside its reduction, where it has no value (the note below "
                "names it)");

  Lhs lhs;
  Rhs rhs;

  definition(const Lhs& l, const Rhs& r) : lhs(l), rhs(r) {}

  void print(std::ostream& os) const {
    lhs.print(os);
    os << " " << Mode::sym << " ";
    rhs.print(os);
  }
};

template <class T>
inline constexpr bool is_definition = false;
template <class L, class R, class M>
inline constexpr bool is_definition<definition<L, R, M>> = true;

template <class T>
concept Definition = is_definition<std::remove_cvref_t<T>>;

}  // namespace loom
