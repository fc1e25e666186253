// SPDX-License-Identifier: MIT
// loom/lower/print.hpp — print_loop_nest: the loop nest a schedule emits, as readable
// pseudo-code (Halide's "equivalent C"), so a compile-time schedule can be seen.
#pragma once
#include <sstream>
#include <string>
#include <vector>

#include "../core/error.hpp"
#include "../simd/prefetch.hpp"
#include "emit.hpp"
#include "find_reduction.hpp"
#include "invariant.hpp"
#include "plan.hpp"

namespace loom::lower {

template <class Plan>
struct printer {
  using splits = typename Plan::splits;

  /// When a choice made per run by the bytes it touches (a MinBytes threshold) is taken.
  static std::string when(index_t min_bytes) {
    if (min_bytes == beyond_cache) return "once the run outgrows the cache";
    if (min_bytes == 0) return "on every run";
    return detail::cat("when the run touches >= ", min_bytes, " bytes");
  }
  /// P's block length as printed: its factor, or "block" when large_blocks<> chooses it per run.
  template <class P>
  static std::string block_of() {
    if constexpr (std::is_same_v<P, typename Plan::large_loop>) return "block";
    else return detail::cat(sched::split_of<splits, P>::factor);
  }

  template <class Y>
  struct desc {
    static std::string range() { return detail::cat("[0, ", Y::name(), ".extent)"); }
    static std::string note() { return ""; }
  };
  template <class P>
  struct desc<outer_loop<P>> {
    using S = sched::split_of<splits, P>;
    static std::string range() {
      if constexpr (Plan::template const_trip<outer_loop<P>> > 0)
        return detail::cat("[0, ", Plan::template const_trip<outer_loop<P>>, ")");
      else
        return detail::cat("[0, ceil(", P::name(), ".extent / ", block_of<P>(), "))");
    }
    static std::string note() {
      if constexpr (std::is_same_v<P, typename Plan::large_loop>)
        return detail::cat("  // block = ", S::factor, ", or ", Plan::large_blocks_factor, " ", when(Plan::large_blocks_min_bytes));
      else
        return "";
    }
  };
  template <class P>
  struct desc<inner_loop<P>> {
    using S = sched::split_of<splits, P>;
    static std::string range() { return detail::cat("[0, ", block_of<P>(), ")"); }
    static std::string note() { return detail::cat("  // tail: ", S::tail_type::name); }
  };
  template <class A, class B>
  struct desc<fused_loop<A, B>> {
    static std::string range() { return detail::cat("[0, ", A::name(), ".extent * ", B::name(), ".extent)"); }
    static std::string note() { return ""; }
  };

  template <std::size_t P>
  static std::string line() {
    using D = meta::at<typename Plan::loops, P>;
    using Y = typename D::id;
    std::string kind = D::kind == loop_kind::vectorized ? "vectorized "
                       : D::kind == loop_kind::unrolled ? "unrolled "
                       : D::kind == loop_kind::parallel ? "parallel "
                                                        : "";
    if (D::kind == loop_kind::serial && Plan::template block_loop<P>) kind = "unrolled ";
    std::string s = detail::cat(kind, "for ", Y::name(), " in ", desc<Y>::range(), ":");
    if constexpr (D::kind == loop_kind::vectorized) s += detail::cat("  // ", Plan::width, " lanes");
    return s + desc<Y>::note();
  }

  template <class Def>
  static std::string print(const Def& d) {
    std::ostringstream os;
    std::string ind;
    auto open = [&](std::string s) {
      os << ind << s << "\n";
      ind += "  ";
    };
    std::ostringstream out_s, rhs_s;
    d.lhs.print(out_s);
    d.rhs.print(rhs_s);
    const std::string out = out_s.str(), rhs = rhs_s.str(), assign = Def::mode::sym;
    constexpr std::size_t R = Plan::acc_kind == accumulation::none ? Plan::N : Plan::red_pos;
    if constexpr (Plan::chunked_reduction) {
      os << "// deterministic parallel reduction: each iteration of the parallel loop reduces its chunk into a\n"
            "// private partial result; the partials are combined in chunk order, then the epilogue runs\n";
      using short_chunks = typename Plan::short_chunking;
      if constexpr (short_chunks::factor > 0) {
        os << "// chunks of " << short_chunks::factor << " points of " << short_chunks::loop::name() << " when its extent is under "
           << short_chunks::below << ", so that threads have chunks to share\n";
      }
    }
    if constexpr (Plan::prefetches) {
      os << "// prefetch: every input read along " << Plan::prefetch_var::name()
         << (Plan::vectorized ? " (and along the lanes)" : "") << " also asks for the element "
         << Plan::prefetch_distance << " steps of " << Plan::prefetch_var::name()
         << " ahead (into L2; " << simd::prefetch_fallback_bytes / 1024 << " KiB ahead if that is beyond half of L2) "
         << when(Plan::prefetch_min_bytes) << "\n";
    }
    if constexpr (Plan::prefetches_stores) {
      os << "// prefetch_stores: each point also asks for the line its consumer stores at that point, for "
            "writing\n";
    }
    if constexpr (Plan::interleave_parts > 1) {
      os << "// interleave: each strip's vector loop walks " << Plan::interleave_parts
         << " parts of its block at once, a vector from each in turn, " << when(Plan::interleave_min_bytes) << "\n";
    }
    if constexpr (Plan::acc_kind == accumulation::into_output) {
      if constexpr (std::is_same_v<typename Def::mode, assign_set>) os << out << " = identity for all points\n";
    }
    // What each strip (a row of the vector loop) computes once (lower/invariant.hpp), printed
    // above the strip's loops.
    std::vector<std::string> once_per_row;
    if constexpr (Plan::acc_kind == accumulation::none && Plan::vectorized && Plan::vec_pos > 0) {
      using E = emitter<Plan>;
      constexpr bool strip_mined = []<std::size_t... I>(std::index_sequence<I...>) {
        return E::template strip_mined<Plan::vec_pos - 1, (Plan::vec_pos + I)...>;
      }(std::make_index_sequence<Plan::N - Plan::vec_pos>{});
      using Fixed = typename E::template fixed_outside<Plan::vec_pos - 1>;
      if constexpr (strip_mined && Fixed::size > 0) invariant_parts<Fixed>::collect(d.rhs, once_per_row);
    }
    auto open_loop = [&]<std::size_t P>(std::integral_constant<std::size_t, P>) {
      if constexpr (Plan::vectorized && P + 1 == Plan::vec_pos)
        for (const auto& part : once_per_row) os << ind << "once per row: " << part << "\n";
      open(line<P>());
    };
    [&]<std::size_t... P>(std::index_sequence<P...>) { (open_loop(std::integral_constant<std::size_t, P>{}), ...); }(
        std::make_index_sequence<R>{});
    if constexpr (Plan::acc_kind == accumulation::none) {
      os << ind << out << " " << assign << " " << rhs;
      if constexpr (Plan::streams) os << "  // streaming stores " << when(Plan::stream_min_bytes);
      os << "\n";
    } else {
      std::ostringstream body_s;
      scheduled_body(d.rhs).print(body_s);
      if constexpr (Plan::acc_kind == accumulation::registers) {
        const std::string acc_t = Plan::vectorized ? "vector" : "scalar";
        os << ind << "acc[" << Plan::block_size << "] = identity  // " << acc_t << " accumulators in registers\n";
        const std::string base = ind;
        [&]<std::size_t... P>(std::index_sequence<P...>) { (open(line<Plan::red_pos + P>()), ...); }(
            std::make_index_sequence<Plan::N - Plan::red_pos>{});
        os << ind << "acc[block] = combine(acc[block], " << body_s.str() << ")\n";
        ind = base;
        os << ind << "for each output point of the block:"
           << (Plan::lane_is_reduction ? "  // lanes combined horizontally" : "") << "\n";
        os << ind << "  " << out << " " << assign << " " << rhs << "  // with the reduction's value = combined acc\n";
      } else {
        [&]<std::size_t... P>(std::index_sequence<P...>) { (open(line<R + P>()), ...); }(
            std::make_index_sequence<Plan::N - R>{});
        os << ind << out << " = combine(" << out << ", " << body_s.str() << ")\n";
      }
    }
    return os.str();
  }

  template <class E>
  static const auto& scheduled_body(const E& e) {
    return scheduled_reduction(e).body;
  }
};

}  // namespace loom::lower
