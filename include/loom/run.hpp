// SPDX-License-Identifier: MIT
// loom/run.hpp — the entry points: run a definition with a schedule (or the default one) and
// print the loop nest a schedule emits.
#pragma once
#include <sstream>
#include <string>

#include "kernels/gemm/run_contraction.hpp"
#include "lower/print.hpp"
#include "lower/run.hpp"
#include "schedule/specialize.hpp"
#include "tune/default_schedule.hpp"

namespace loom {

/// Use the default schedule (loom::run(def) and loom::run<loom::auto_schedule>(def) are the same).
struct auto_schedule {};

namespace detail {
template <class S, class Def>
using resolve_schedule = std::conditional_t<std::is_same_v<S, auto_schedule>, default_schedule_t<Def>, S>;

/// Does a specialize condition hold for this run?
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

/// Runs the nest of the leaf of S whose conditions hold, on a definition whose extents (in
/// `checked`) and bounds are checked.
template <class S, class D>
void execute_leaf(const D& def, const checked_state<D>& checked, index_t points) {
  if constexpr (is_specialize<S>) {
    if (holds(typename S::condition{}, def)) execute_leaf<typename S::then_schedule>(def, checked, points);
    else execute_leaf<typename S::else_schedule>(def, checked, points);
  } else {
    execute_plan<plan<D, S>>(def, checked, points);
  }
}

/// run() under specialize R: extents and bounds are checked once, then the chosen leaf runs, so
/// only the leaves' nests are compiled once per leaf.
template <class R, class D>
void execute_specialized(const D& def) {
  checked_state<D> checked;
  index_t points = 0;
  if (infer_and_check(def, checked, points)) execute_leaf<R>(def, checked, points);
}

template <index_t B>
std::string describe(touches_at_least<B>) {
  if constexpr (B == beyond_cache) return "the run outgrows the last-level cache";
  else return detail::cat("the run touches >= ", B, " bytes");
}
template <auto V, index_t C>
std::string describe(extent_at_least<V, C>) {
  return detail::cat(extent_at_least<V, C>::var::name(), ".extent >= ", C);
}
}  // namespace detail

/// Runs a definition: checks extents, bounds and aliasing, then executes the loop nest that
/// schedule S (a loom::schedule<...>) emits. Throws loom::error before writing anything.
///
/// A contraction C(i, j) [+]= f(sum(k, A(i, k) * B(k, j))) runs on the GEMM engine (packed,
/// cache-blocked, f fused into the micro-tiles) under the default schedule and under
/// loom::gemm_schedule<Policy>, which demands it.
template <class S = auto_schedule, Definition D>
void run(const D& def) {
  if constexpr (gemm_detail::is_gemm_schedule<S>) {
    static_assert(gemm_detail::contraction<D>::value,
                  "loom::gemm_schedule: this definition cannot run on the GEMM engine: it is not C(i, j) [+]= "
                  "f(sum(k, A(i, k) * B(k, j))) on float/double with plain variables as indices, an epilogue f over "
                  "i and j only, and (for +=) no epilogue. Use a loop-nest schedule instead.");
    using P = std::conditional_t<std::is_void_v<typename S::policy>, default_gemm_policy<typename D::value_type>,
                                 typename S::policy>;
    static_assert(GemmPolicy<P>, "loom::gemm_schedule<Policy>: Policy must be a loom::gemm_policy<...>");
    gemm_detail::execute_contraction<typename S::policy>(def);
  } else if constexpr (std::is_same_v<S, auto_schedule> && gemm_detail::contraction<D>::value) {
    gemm_detail::execute_contraction<void>(def);
  } else if constexpr (is_specialize<detail::resolve_schedule<S, D>>) {
    detail::execute_specialized<detail::resolve_schedule<S, D>>(def);
  } else {
    detail::execute<plan<D, detail::resolve_schedule<S, D>>>(def);
  }
}

/// The loop nest schedule S emits for a definition, as pseudo-code.
template <class S = auto_schedule, Definition D>
std::string print_loop_nest(const D& def) {
  constexpr bool engine = gemm_detail::is_gemm_schedule<S> ||
                          (std::is_same_v<S, auto_schedule> && gemm_detail::contraction<D>::value);
  if constexpr (engine) {
    using P = default_gemm_policy<typename D::value_type>;
    std::ostringstream os;
    os << "gemm engine (packed A and B, " << P::MR << " x " << P::NR << " micro-tile in registers):\n"
       << "parallel: the team splits C into rectangles of micro-tiles\n"
       << "for jc in [0, N) step " << P::NC << ":\n"
       << "  for pc in [0, K) step " << P::KC << ":  // pack B(pc, jc) (shared)\n"
       << "    for ic in [0, M) step " << P::MC << ":  // pack A(ic, pc)\n"
       << "      for jr in [0, nc) step " << P::NR << ":\n"
       << "        for ir in [0, mc) step " << P::MR << ":\n"
       << "          micro-tile += A sliver * B sliver\n"
       << "          last pc: ";
    def.lhs.print(os);
    os << " " << D::mode::sym << " ";
    def.rhs.print(os);
    os << "  // on the tile in registers\n";
    return os.str();
  } else if constexpr (is_specialize<detail::resolve_schedule<S, D>>) {
    using R = detail::resolve_schedule<S, D>;
    auto indented = [](const std::string& text) {
      std::string out;
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        out += "  " + text.substr(at, end - at) + "\n";
        at = end + 1;
      }
      return out;
    };
    return "if " + detail::describe(typename R::condition{}) + ":\n" +
           indented(print_loop_nest<typename R::then_schedule>(def)) + "else:\n" +
           indented(print_loop_nest<typename R::else_schedule>(def));
  } else {
    return lower::printer<plan<D, detail::resolve_schedule<S, D>>>::print(def);
  }
}

}  // namespace loom
