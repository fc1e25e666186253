// SPDX-License-Identifier: MIT
// loom/engines.hpp — the engines loom::run and loom::print_loop_nest walk before the loop nest.
//
// An engine runs a family of definitions as one call of a hand-blocked kernel (packing, register
// tiles, its own threads) where the generic loop nest would be slower. Each is a struct with
//
//   template <class D> static constexpr bool matches;     // D is in the family
//   template <class S> static constexpr bool demanded_by; // schedule S asks for this engine
//   template <class S, class D> static constexpr bool require();  // S demands it: a static_assert
//                                                         // saying what D lacks; true if D matches
//   template <class S, class D> static void run(const D&);   // extents, bounds and aliasing
//                                                         // checked before anything is written
//   template <class S, class D> static std::string describe(const D&);   // print_loop_nest's text
//
// Under the default schedule (auto_schedule) the first engine whose family holds the definition
// runs it; a schedule an engine demands runs that engine or fails to compile with its message;
// any other schedule is a loop nest. A new engine is one more struct in `engine_list`.
#pragma once
#include <sstream>
#include <string>
#include <type_traits>

#include "core/meta.hpp"
#include "kernels/conv/run_convolution.hpp"
#include "kernels/gemm/run_contraction.hpp"
#include "kernels/permute/run_permutation.hpp"
#include "schedule/directives.hpp"

namespace loom {

namespace detail {

/// The GEMM engine: C(i, j) [+]= f(sum(k, A(i, k) * B(k, j))) (kernels/gemm/).
struct gemm_engine {
  template <class D>
  static constexpr bool matches = gemm_detail::contraction<D>::value;
  template <class S>
  static constexpr bool demanded_by = gemm_detail::is_gemm_schedule<S>;

  template <class S, class D>
  static constexpr bool require() {
    static_assert(matches<D>,
                  "loom::gemm_schedule: this definition cannot run on the GEMM engine: it is not C(i, j) [+]= "
                  "f(sum(k, A(i, k) * B(k, j))) on float/double with plain variables as indices, an epilogue f over "
                  "i and j only, and (for +=) no epilogue. Use a loop-nest schedule instead.");
    if constexpr (!std::is_same_v<S, auto_schedule>) {
      using P = std::conditional_t<std::is_void_v<typename S::policy>, default_gemm_policy<typename D::value_type>, typename S::policy>;
      static_assert(GemmPolicy<P>, "loom::gemm_schedule<Policy>: Policy must be a loom::gemm_policy<...>");
    }
    return matches<D>;
  }
  template <class S, class D>
  static void run(const D& def) {
    if constexpr (std::is_same_v<S, auto_schedule>) gemm_detail::run_contraction<void>(def);
    else gemm_detail::run_contraction<typename S::policy>(def);
  }
  template <class S, class D>
  static std::string describe(const D& def) {
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
  }
};

/// The convolution engine: out(n, y, x, co) [+]= f(sum(ry, rx, ci, in(n, ...) * w(...))) and its
/// depthwise form (kernels/conv/).
struct conv_engine {
  template <class D>
  static constexpr bool matches = conv_detail::is_convolution<D>;
  template <class S>
  static constexpr bool demanded_by = conv_detail::is_conv_schedule<S>;

  template <class S, class D>
  static constexpr bool require() {
    static_assert(matches<D>,
                  "loom::conv_schedule: this definition cannot run on the convolution engine: it is not "
                  "out(n, y, x, co) [+]= f(sum(ry, rx, ci, in(n, y * s + ry * d - p, x * s + rx * d - p, ci) * "
                  "w(ry, rx, ci, co))) (or depthwise: sum(ry, rx, in(n, .., .., c) * w(ry, rx, c))) on float/double, the "
                  "input plain or constant_exterior, an epilogue f over n, y, x, co only, and (for +=) no epilogue. "
                  "Use a loop-nest schedule instead.");
    if constexpr (!std::is_same_v<S, auto_schedule>) {
      using P = std::conditional_t<std::is_void_v<typename S::policy>, default_conv_policy<typename D::value_type>, typename S::policy>;
      static_assert(ConvPolicy<P>, "loom::conv_schedule<Policy>: Policy must be a loom::conv_policy<...>");
    }
    return matches<D>;
  }
  template <class S, class D>
  static void run(const D& def) {
    if constexpr (std::is_same_v<S, auto_schedule>) conv_detail::run_convolution<void>(def);
    else conv_detail::run_convolution<typename S::policy>(def);
  }
  template <class S, class D>
  static std::string describe(const D& def) {
    using P = default_conv_policy<typename D::value_type>;
    std::ostringstream os;
    const bool depthwise = conv_detail::roles<D>::depthwise;
    os << "convolution engine (" << (depthwise ? "depthwise: 8 pixels x 2 vectors of channels" : "direct: ") ;
    if (!depthwise) os << P::pixels << " pixels x " << P::vectors << " vectors of " << P::lanes << " output channels";
    os << " in registers, weights packed per call):\n"
       << "parallel for (n, weight block, run of pixels):\n"
       << "  for tile of pixels:\n"
       << "    for ky, kx" << (depthwise ? "" : ", ci") << ":  // padded taps read the padding's value\n"
       << "      tile += input pixels x packed weights\n"
       << "    ";
    def.lhs.print(os);
    os << " " << D::mode::sym << " ";
    def.rhs.print(os);
    os << "  // on the tile in registers\n";
    return os.str();
  }
};

/// The permutation engine: out(v...) = X(the same variables in another order), a transpose
/// (kernels/permute/). No schedule demands it: a loop-nest schedule still runs such a copy as a
/// nest.
struct permute_engine {
  template <class D>
  static constexpr bool matches = permute_detail::permutation<D>::value;
  template <class S>
  static constexpr bool demanded_by = false;

  template <class S, class D>
  static constexpr bool require() {
    return matches<D>;
  }
  template <class S, class D>
  static void run(const D& def) {
    permute_detail::run_permutation(def);
  }
  template <class S, class D>
  static std::string describe(const D& def) {
    using U = permute_detail::bits_of<typename D::value_type>;
    constexpr std::size_t W = simd::native_width<U>;
    constexpr index_t tile = permute_detail::tile_bytes / index_t(sizeof(U));
    std::ostringstream os;
    os << "permutation engine (the output's unit-stride variable L against X's M; bits moved as they are):\n"
       << "parallel for (the other variables, tiles of " << tile << " x " << tile << " over M and L, L innermost):\n"
       << "  for blocks of " << W << " x " << W << ":  // " << W << " rows of X along M, transposed in registers\n"
       << "    ";
    def.lhs.print(os);
    os << " = ";
    def.rhs.print(os);
    os << "  // " << W << " rows of the output along L\n";
    if (!permute_detail::permutation<D>::always)
      os << "(a run whose views share their unit-stride variable copies rows as they are)\n";
    return os.str();
  }
};

using engine_list = meta::list<gemm_engine, conv_engine, permute_engine>;

template <class L, class S>
struct demanded_engine_in {
  using type = void;
};
template <class E, class... Rest, class S>
struct demanded_engine_in<meta::list<E, Rest...>, S> {
  using type = std::conditional_t<E::template demanded_by<S>, E, typename demanded_engine_in<meta::list<Rest...>, S>::type>;
};
template <class L, class D>
struct matching_engine_in {
  using type = void;
};
template <class E, class... Rest, class D>
struct matching_engine_in<meta::list<E, Rest...>, D> {
  using type = std::conditional_t<E::template matches<D>, E, typename matching_engine_in<meta::list<Rest...>, D>::type>;
};

/// The engine schedule S runs definition D on: the one S demands, or under the default schedule
/// the first whose family holds D; void: the loop nest.
template <class S, class D>
using engine_for = std::conditional_t<std::is_same_v<S, auto_schedule>, typename matching_engine_in<engine_list, D>::type,
                                      typename demanded_engine_in<engine_list, S>::type>;

}  // namespace detail

}  // namespace loom
