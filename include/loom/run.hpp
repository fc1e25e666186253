// loom/run.hpp — the entry points: run a definition with a schedule (or the default one) and
// print the loop nest a schedule emits.
#pragma once
#include <string>

#include "lower/print.hpp"
#include "lower/run.hpp"
#include "tune/default_schedule.hpp"

namespace loom {

/// Use the default schedule (loom::run(def) and loom::run<loom::auto_schedule>(def) are the same).
struct auto_schedule {};

namespace detail {
template <class S, class Def>
using resolve_schedule = std::conditional_t<std::is_same_v<S, auto_schedule>, default_schedule_t<Def>, S>;
}

/// Runs a definition: checks extents, bounds and aliasing, then executes the loop nest that
/// schedule S (a loom::schedule<...>) emits. Throws loom::error before writing anything.
template <class S = auto_schedule, Definition D>
void run(const D& def) {
  detail::execute<plan<D, detail::resolve_schedule<S, D>>>(def);
}

/// The loop nest schedule S emits for a definition, as pseudo-code.
template <class S = auto_schedule, Definition D>
std::string print_loop_nest(const D& def) {
  return lower::printer<plan<D, detail::resolve_schedule<S, D>>>::print(def);
}

}  // namespace loom
