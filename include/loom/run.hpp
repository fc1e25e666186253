// SPDX-License-Identifier: MIT
// loom/run.hpp — the entry points: run a definition with a schedule (or the default one) and
// print the loop nest a schedule emits.
#pragma once
#include <sstream>
#include <string>

#include "engines.hpp"
#include "lower/check.hpp"
#include "lower/print.hpp"
#include "lower/run.hpp"
#include "pipeline/run.hpp"
#include "schedule/specialize.hpp"
#include "tune/default_schedule.hpp"

namespace loom {

namespace detail {
// The default is looked up only for auto_schedule: a user's schedule never instantiates it.
template <class S, class Def>
struct resolve_schedule_of {
  using type = S;
};
template <class Def>
struct resolve_schedule_of<auto_schedule, Def> {
  using type = default_schedule_t<Def>;
};
template <class S, class Def>
using resolve_schedule = typename resolve_schedule_of<S, Def>::type;

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
/// Definitions an engine runs (engines.hpp) take it under the default schedule and under the
/// schedule that demands it: a contraction C(i, j) [+]= f(sum(k, A(i, k) * B(k, j))) the GEMM
/// engine (loom::gemm_schedule<Policy>), a convolution the convolution engine
/// (loom::conv_schedule<Policy>), f fused into their register tiles.
template <class S = auto_schedule, Definition D>
void run(const D& def) {
  using E = detail::engine_for<S, D>;
  if constexpr (detail::names_prefetch_stores<S>) {
    // Dependent on S, so that only a schedule that names it instantiates the message.
    detail::report_schedule<detail::names_prefetch_stores<S> ? schedule_problem::prefetch_stores_outside_pipeline : schedule_problem::none>();
  } else if constexpr (!std::is_void_v<E>) {
    if constexpr (E::template require<S, D>()) E::template run<S>(def);
  } else if constexpr (!detail::well_formed<D>) {
    return;  // the definition's own static_assert has reported
  } else if constexpr (detail::needs_hoisting<D>) {
    // (The body's schedule is checked as a pipeline stage's, which no longer has the reductions.)
    constexpr bool names_reduction = !std::is_same_v<S, auto_schedule> && detail::names_unscheduled_reduction<D, S>;
    detail::report_schedule<names_reduction ? schedule_problem::unscheduled_reduction_loop : schedule_problem::none>();
    if constexpr (!names_reduction) detail::run_hoisted<S>(def);  // reductions computed once per value of what they depend on
  } else if constexpr (has_boundary<typename D::rhs_type>) {
    detail::run_bounded<S>(def);  // the interior without per-point checks, the border with them
  } else {
    constexpr schedule_problem problem = detail::first_problem<D, detail::resolve_schedule<S, D>>();
    detail::report_schedule<problem>();
    if constexpr (problem != schedule_problem::none) {
      return;  // reported above; instantiating the nest would only add errors
    } else {
      detail::run_checked<detail::resolve_schedule<S, D>>(def);
    }
  }
}

namespace detail {
template <class S, class Def>
std::string print_hoisted(const Def& def);
}  // namespace detail

namespace detail {
/// print_loop_nest's text for a definition, or a pipeline stage's (whose schedule may name
/// prefetch_stores).
template <class S, Definition D>
std::string print_nest(const D& def) {
  using E = detail::engine_for<S, D>;
  constexpr bool engine = !std::is_void_v<E>;
  constexpr schedule_problem problem = [] {
    if constexpr (engine || !detail::well_formed<D>) return schedule_problem::none;
    else return detail::first_problem<D, detail::resolve_schedule<S, D>>();
  }();
  detail::report_schedule<problem>();
  if constexpr (problem != schedule_problem::none || !detail::well_formed<D>) {
    return {};  // reported above, or by the definition's own checks
  } else if constexpr (engine) {
    if constexpr (E::template require<S, D>()) return E::template describe<S>(def);
    else return {};
  } else if constexpr (detail::needs_hoisting<D>) {
    return detail::print_hoisted<S>(def);  // the pipeline it runs as: each implicit stage where it is computed
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
           indented(print_nest<typename R::then_schedule>(def)) + "else:\n" +
           indented(print_nest<typename R::else_schedule>(def));
  } else {
    return lower::printer<plan<D, detail::resolve_schedule<S, D>>>::print(def);
  }
}
}  // namespace detail

/// The loop nest schedule S emits for a definition, as pseudo-code (an engine's own description
/// when one runs it; for a definition with hoisted reductions, the pipeline it runs as).
template <class S = auto_schedule, Definition D>
std::string print_loop_nest(const D& def) {
  if constexpr (detail::names_prefetch_stores<S>) {
    // Dependent on S, so that only a schedule that names it instantiates the message.
    detail::report_schedule<detail::names_prefetch_stores<S> ? schedule_problem::prefetch_stores_outside_pipeline : schedule_problem::none>();
    return {};
  } else {
    return detail::print_nest<S>(def);
  }
}

namespace detail {

/// Lines of text, each indented by `by` more spaces.
inline std::string indent_lines(const std::string& text, std::size_t by) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (end > at) out += std::string(by, ' ') + text.substr(at, end - at);
    out += "\n";
    at = end + 1;
  }
  return out;
}

/// Whether a printed line is a loop of the nest ("for v in [", after its kind and indentation).
inline bool is_loop_line(const std::string& line) {
  const std::size_t f = line.find("for ");
  return f != std::string::npos && line.find(" in [", f) != std::string::npos && line.find("for each") == std::string::npos;
}

/// The printed pipeline: each stage that runs at root in order, and inside its printed nest,
/// after the line of each driven loop, the stages computed (or stored) there.
template <class R>
struct pipeline_printer {
  template <std::size_t K>
  using info = typename R::template info<K>;

  /// The reads of stage P in definition D, as written (bx(y + 1, x), ...).
  template <std::size_t P, class D>
  static std::string reads_of(const D& d) {
    std::string out;
    d.rhs.for_each_access([&](const auto& a) {
      using A = std::remove_cvref_t<decltype(a)>;
      if constexpr (reads_stage<A>) {
        if constexpr (std::is_same_v<typename A::view_type::tag_type, typename info<P>::key>) {
          const std::string t = to_string(a);
          if (out.find(t) == std::string::npos) out += (out.empty() ? "" : ", ") + t;
        }
      }
    });
    return out;
  }

  /// Stage K's nest with its compute_at / store_at stages inserted after their loops.
  template <std::size_t K>
  static std::string nest(const typename R::defs_type& defs) {
    using D = typename info<K>::def;
    using S = typename info<K>::schedule_type;
    const D& d = std::get<K>(defs);
    std::string text = print_nest<typename driver_schedule<S>::type>(d);
    if constexpr (has_boundary<typename D::rhs_type>)
      text = "// each box it runs over is split: the interior reads without checks, only the border slabs\n"
             "// evaluate the boundary conditions\n" + text;
    if constexpr (R::template driven_depth<K> == 0) {
      return text;
    } else {
      std::string out;
      int level = -1;
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::string line = text.substr(at, end - at);
        out += line + "\n";
        at = end + 1;
        if (!is_loop_line(line)) continue;
        ++level;
        const std::size_t depth = line.find_first_not_of(' ') + 2;
        [&]<std::size_t... P>(std::index_sequence<P...>) {
          (([&] {
             if constexpr (R::template store_level<P, K> >= 0) {
               if (level == R::template store_level<P, K>)
                 out += indent_lines("// " + stage_name<P>(defs) + ": stored here, over the box the iterations below read of it", depth);
             }
             if constexpr (R::template at_level<P, K> >= 0) {
               if (level != R::template at_level<P, K>) return;
               const std::string reads = reads_of<P>(d);
               std::string what = "// " + stage_name<P>(defs) + ": computed here";
               if constexpr (R::template store_level<P, K> >= 0) what += " (only the part earlier iterations did not: a sliding window)";
               else what += ", into this thread's buffer";
               what += ", over the box this iteration reads" + (reads.empty() ? std::string() : " (" + reads + ")") + ", halo included";
               out += indent_lines(what, depth) + indent_lines(nest<P>(defs), depth);
             }
           }()),
           ...);
        }(std::make_index_sequence<R::count>{});
      }
      return out;
    }
  }

  template <std::size_t K>
  static std::string stage_name(const typename R::defs_type& defs) {
    return std::string(std::get<K>(defs).lhs.view.name());
  }

  static std::string print(const typename R::defs_type& defs, const std::string& inlined) {
    std::string out;
    if (!inlined.empty()) out += "// inlined into their readers: " + inlined + "\n";
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (([&] {
         using I = info<K>;
         if constexpr (I::where::where != placement::at) {
           if constexpr (I::is_func) out += "// " + stage_name<K>(defs) + ": computed at root, over the box its readers read, into the pipeline's buffer\n";
           else out += "// " + stage_name<K>(defs) + ": the output\n";
           out += nest<K>(defs);
         }
       }()),
       ...);
    }(std::make_index_sequence<R::count>{});
    return out;
  }
};

}  // namespace detail

/// The loop nests a pipeline runs under a schedule of stage<...>: every stage where it runs, each
/// compute_at stage inside its consumer's loop with the reads that decide its box.
template <class... Stages, class... Defs>
std::string print_loop_nest(const Pipeline<Defs...>& p) {
  using S = meta::list<Stages...>;
  constexpr detail::placement_problem early = detail::first_directive_problem<S, Defs...>();
  detail::report_placement<early>();
  auto lowered = detail::lower_pipeline<S>(p.definitions());
  using R = detail::pipeline_run<S, decltype(lowered), Pipeline<Defs...>>;
  if constexpr (early == detail::placement_problem::none) {
    detail::report_placement<R::first_placement_problem()>();
    detail::report_schedule<R::first_schedule_problem()>();
  }
  constexpr bool ok = early == detail::placement_problem::none && R::runnable;
  if constexpr (!ok) {
    return {};
  } else {
    std::string inlined;
    std::apply(
        [&](const auto&... d) {
          (([&] {
             using D = std::remove_cvref_t<decltype(d)>;
             if constexpr (detail::inlined_stage<S, meta::list<Defs...>, D>) inlined += (inlined.empty() ? "" : ", ") + std::string(d.lhs.view.name());
           }()),
           ...);
        },
        p.definitions());
    return detail::pipeline_printer<R>::print(lowered, inlined);
  }
}

namespace detail {
/// The pipeline a definition with hoisted reductions runs as (pipeline/hoist.hpp), printed.
template <class S, class Def>
std::string print_hoisted(const Def& def) {
  return with_hoisted<S>(def, []<class... Stages>(const auto& pipe) { return loom::print_loop_nest<Stages...>(pipe); });
}
}  // namespace detail

}  // namespace loom
