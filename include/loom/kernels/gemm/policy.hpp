// SPDX-License-Identifier: MIT
// loom/kernels/gemm/policy.hpp — the GEMM engine's blocking parameters as one compile-time type.
//
// The five loops of BLIS (NC, KC, MC around an MR x NR micro-kernel) and the cache level each
// block is sized for:
//
//   for jc in [0, N) step NC        B panel    KC x NC  packed once, shared by the team  -> L3
//    for pc in [0, K) step KC
//     for ic in [0, M) step <= MC   A block    MC x KC  packed per thread                -> L2
//      for jr in [0, NC) step NR    B sliver   KC x NR  reused by every MR sliver of A   -> L1
//       for ir in [0, MC) step MR   micro-tile MR x NR  in registers for all KC steps
//
// Every parameter can be set by hand (loom::gemm_policy<...>); default_gemm_policy<T> derives
// them for the widest xsimd target the compiler was allowed.
#pragma once
#include <cstddef>
#include <type_traits>

#include "../../core/config.hpp"
#include "../../simd/arch.hpp"

namespace loom {

/// Blocking of the GEMM engine. NR is given in vectors (NRV) of W lanes, so that a micro-tile row
/// is always whole vectors: NR = NRV * W.
template <class T, index_t MR_, index_t NRV_, index_t KC_, index_t MC_, index_t NC_,
          std::size_t W_ = simd::native_width<T>>
struct gemm_policy {
  using value_type = T;
  static constexpr index_t W = index_t(W_);
  static constexpr index_t MR = MR_;
  static constexpr index_t NRV = NRV_;
  static constexpr index_t NR = NRV_ * index_t(W_);
  static constexpr index_t KC = KC_;
  static constexpr index_t MC = MC_;
  static constexpr index_t NC = NC_;
  /// Rows of the second micro-kernel, for the last sliver of A when it has at most this many rows
  /// (M = 64 with MR = 14: 4 x 14 + 8, and the 8 rows cost 16 FMAs per k step, not 28).
  static constexpr index_t edge_rows = MR_ / 2 + 1 < MR_ ? MR_ / 2 + 1 : MR_;

  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "loom::gemm_policy: the GEMM engine computes float or double");
  static_assert(simd::width_available<T, W_>,
                "loom::gemm_policy: this vector width W is not available for T on the compiler's target");
  static_assert(MR_ >= 1 && NRV_ >= 1, "loom::gemm_policy: MR and NRV must be at least 1");
  static constexpr index_t vector_registers = simd::vector_registers<T, W_>;
  static_assert(MR_ * NRV_ + NRV_ + 1 <= vector_registers,
                "loom::gemm_policy: the MR x NRV accumulators, NRV loads of B and one broadcast of A must fit "
                "the vector registers (32 with AVX-512, else 16): use a smaller MR or NRV");
  static_assert(KC_ >= 1, "loom::gemm_policy: KC must be at least 1");
  static_assert(MC_ >= MR_ && MC_ % MR_ == 0, "loom::gemm_policy: MC must be a positive multiple of MR");
  static_assert(NC_ >= NRV_ * index_t(W_) && NC_ % (NRV_ * index_t(W_)) == 0,
                "loom::gemm_policy: NC must be a positive multiple of NR = NRV * W");
};

template <class P>
concept GemmPolicy = requires {
  typename P::value_type;
  P::MR;
  P::NR;
  P::NRV;
  P::KC;
  P::MC;
  P::NC;
  P::W;
};

namespace gemm_detail {

// The per-core cache sizes the defaults are derived from: the smallest L1d and L2 of the parts
// each target is meant for (docs/tuning.md#gemm-blocking lists them).
inline constexpr index_t l1_bytes = 48 * 1024;
inline constexpr index_t l2_bytes = 1024 * 1024;

template <class T, std::size_t W>
struct default_policy_for;

// AVX-512 (32 zmm registers): 14 rows x 2 vectors = 28 accumulators, + 2 loads of B + 1 broadcast
// of A = 31 registers. 28 independent FMA chains hide an FMA latency of 4 cycles on 2 pipes
// (8 chains needed) with room to spare. Per k step: 28 FMAs against 2 vector loads and 14
// broadcasts, well inside 2 loads per cycle.
//  KC: the textbook choice keeps the B sliver (KC x NR) in L1 while the A slivers stream by: KC =
//      256 (32 KiB). A longer KC is faster (docs/tuning.md#gemm-blocking): two vector loads of B
//      per 28 FMAs are served by L2 just as well, and each K block costs a pass over C and a
//      repack of A and B. KC is 1152 = 18 x 64: the driver cuts K into equal blocks of at most
//      KC, so K = 1024 runs in one block and 2048 in two of 1024, and the K of a 3x3 convolution
//      over 64k channels (576, 1152, 2304) in one or two whole blocks. The sliver is then
//      144 KiB, in L2 beside the A block.
//  MC: the packed A block (MC x KC) takes about half of L2: 14 * 9 * 1152 * 4 B = 567 KiB.
//  NC: the packed B panel (KC x NC) lives in the (large, shared) L3: 1152 x 2048 x 4 B = 9 MiB.
template <>
struct default_policy_for<float, 16> {
  using type = gemm_policy<float, 14, 2, 1152, 14 * 9, 2048, 16>;
};
// double (8 lanes per vector): 8 rows x 3 vectors = 24 accumulators + 3 loads of B + 1 broadcast.
// The 14 x 2 tile of float, with KC = 512, makes a 57 KiB A sliver of doubles; 8 x 3 keeps it at
// 32 KiB and needs 11 loads per 24 FMAs instead of 16 per 28 (docs/tuning.md#gemm-blocking).
// KC = 512 as for float; MC = 8 * 21: a 672 KiB A block; NC = 2016 = 84 NR: a 7.9 MiB B panel.
template <>
struct default_policy_for<double, 8> {
  using type = gemm_policy<double, 8, 3, 512, 8 * 21, 2016, 8>;
};
// AVX2 (16 ymm registers): 6 rows x 2 vectors = 12 accumulators + 2 + 1 = 15 registers.
//  KC longer than the textbook 256, as on AVX-512: each K block costs a pass over C and a repack,
//  and two loads of B per 12 FMAs are served from L2 as well as from L1; 576 = 9 x 64 keeps a 3x3
//  convolution's K over 64k channels in whole blocks. MC: the A block in about half of the L2 of
//  the AVX2 parts loom targets. Measurements: docs/tuning.md#gemm-blocking.
template <>
struct default_policy_for<float, 8> {
  using type = gemm_policy<float, 6, 2, 576, 6 * 18, 4096, 8>;
};
// double: the same reasoning; MC keeps 64 rows (11 slivers) in one block. docs/tuning.md#gemm-blocking.
template <>
struct default_policy_for<double, 4> {
  using type = gemm_policy<double, 6, 2, 512, 6 * 11, 2048, 4>;
};
// SSE (16 xmm registers): AVX2's tile at half the width, with the textbook blocking (not measured
// on an SSE-only part).
template <>
struct default_policy_for<float, 4> {
  using type = gemm_policy<float, 6, 2, 256, 6 * 40, 4096, 4>;
};
template <>
struct default_policy_for<double, 2> {
  using type = gemm_policy<double, 6, 2, 192, 6 * 32, 2048, 2>;
};

}  // namespace gemm_detail

/// The default blocking for T on the compiler's widest target.
template <class T>
using default_gemm_policy = typename gemm_detail::default_policy_for<T, simd::native_width<T>>::type;

}  // namespace loom
