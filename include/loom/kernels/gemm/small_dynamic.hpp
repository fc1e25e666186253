// SPDX-License-Identifier: MIT
// loom/kernels/gemm/small_dynamic.hpp — C = epilogue(alpha A B + beta C) for small products whose
// extents are known only at run time: N of at most four vectors, M N K <= 64^3. Everything fits
// in L1/L2, so, as on the static path (small.hpp), nothing is packed: B's rows are loaded where
// they are, A's elements broadcast from where they are.
//
// Why a path of its own: the packed engine pays, per call, a pack of A and of B, zero-padded
// slivers of a fixed MR x NR tile and a finish through a buffer per micro-tile; at 16^3 that is
// most of the time, and N = 16 fills only one of the tile's two vectors
// (docs/tuning.md#small-gemm).
//
// Blocking: a row of C is NV = ceil(N / W) vectors, and a block is R rows x NV vectors of
// accumulators, R a power of two (16, 8, 8, 4 for NV = 1..4 with AVX-512) so that the square
// and power-of-two shapes split into whole blocks. One kernel per NV (and element type, epilogue
// and finish kind), with K and the lanes of the last vector as run-time values.
// M not a multiple of R: the last block is shifted inwards to end at row M (Halide's tail
// strategy: recompute some rows rather than compile a kernel for each remainder). The rows it
// shares with the block before are computed again, bit for bit the same, and not stored, so a
// beta != 0 C is read and written once per element. M below R: A's rows are copied into a block
// padded with zero rows, and only the real rows are stored.
//
// Same contract as the micro-kernel (microkernel.hpp): C is not read when beta == 0, the epilogue
// sees each vector before it is stored. Needs unit column stride in B and C; any strides in A.
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <utility>

#include "../../core/config.hpp"
#include "../../simd/arch.hpp"
#include "../../simd/fma.hpp"
#include "../../simd/memory.hpp"
#include "microkernel.hpp"
#include "pack.hpp"  // matrix_ref

namespace loom::gemm_detail {

/// The run-time small path's blocking for element type T.
template <class T>
struct small_dynamic_shape {
  static constexpr index_t W = index_t(simd::native_width<T>);
  static constexpr index_t registers = simd::vector_registers<T, std::size_t(W)>;
  static constexpr index_t max_vectors = 4;  // N <= 4 W
  /// Rows per block for rows of NV vectors: the R x NV accumulators, NV vectors of B and one
  /// broadcast of A in registers, at most 16 rows, rounded down to a power of two.
  static constexpr index_t rows(index_t NV) {
    const index_t fit = (registers - NV - 1) / NV;
    return index_t(std::bit_floor(std::size_t(fit < 16 ? fit : 16)));
  }
  /// Fewer rows than a block: A's rows are copied into a zero-padded block of at most this many
  /// elements (16 KiB of floats on the stack).
  static constexpr index_t padded_elements = 4096;
  /// Whether the path takes the problem (B and C must also have unit column strides).
  static bool fits(index_t M, index_t N, index_t K) {
    if (M < 1 || N < 1 || N > max_vectors * W || K < 0) return false;
    const index_t NV = (N + W - 1) / W;
    if (M < rows(NV) && rows(NV) * K > padded_elements) return false;
    return M <= 64 * 64 * 64 / (N * std::max<index_t>(K, 1));  // M N K <= 64^3, no overflow
  }
};

/// Rows [i0, i0 + R) of C, of which rows [first, last) are stored (the rows before `first` belong
/// to the block before: see the shifted last block above; the rows from `last` on are padding).
template <class T, index_t NV, index_t R, finish_kind F, class Epi>
void small_dynamic_block(const matrix_ref<T>& a, const matrix_ref<T>& b, tile_ref<T> c, index_t i0, index_t first,
                         index_t last, index_t K, index_t last_lanes, T alpha, T beta, const Epi& epi) {
  constexpr index_t W = index_t(simd::native_width<T>);
  using B = simd::batch<T, std::size_t(W)>;
  c.cs = 1;  // the caller checked it
  std::array<B, std::size_t(R * NV)> acc;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = B(T(0))), ...);
  }(std::make_integer_sequence<index_t, R * NV>{});
  // A's rows in groups of four, one pointer per group stepping along k: row 4 g + q is at
  // group[g] + q rs, an address mode with rs and 3 rs in registers. (Addressing every row from one
  // pointer made gcc chain R dependent adds per k step, one cycle each.)
  constexpr index_t groups = (R + 3) / 4;
  const index_t rs = a.rs, cs = a.cs;
  std::array<const T*, std::size_t(groups)> group;
  for (index_t g = 0; g < groups; ++g) group[std::size_t(g)] = a.p + (i0 + 4 * g) * rs;
  const T* brow = b.p;
  // g++: four k steps per iteration (R x NV <= 16 accumulators leave room for the next steps'
  // loads). clang: one, for it unrolls by 8, keeps the broadcasts of A in registers and spills
  // (docs/tuning.md#small-gemm).
#if defined(__clang__)
#pragma clang loop unroll(disable)
#elif defined(__GNUC__)
#pragma GCC unroll 4
#endif
  for (index_t k = 0; k < K; ++k, brow += b.rs) {
    std::array<B, std::size_t(NV)> bv;
    [&]<index_t... V>(std::integer_sequence<index_t, V...>) LOOM_LAMBDA_INLINE {
      // The last vector masked (its mask the same for every k step, hoisted with AVX-512).
      ((bv[V] = V + 1 < NV ? B::load_unaligned(brow + V * W) : simd::load_first<B>(brow + V * W, last_lanes)), ...);
    }(std::make_integer_sequence<index_t, NV>{});
    [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
      // Q = r * NV + v; one broadcast per row, reused across its NV vectors.
      ((acc[Q] = simd::fma(B(group[std::size_t(Q / NV / 4)][(Q / NV % 4) * rs]), bv[Q % NV], acc[Q])), ...);
    }(std::make_integer_sequence<index_t, R * NV>{});
    for (auto& p : group) p += cs;
  }
  if constexpr (is_identity_epilogue<Epi>) {
    // Without an epilogue each vector is a store (and a multiply, a load and an FMA at most):
    // straight from the registers.
    [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
      ((Q / NV >= first && Q / NV < last ? finish_vector<F>(acc[Q], c, i0 + Q / NV, (Q % NV) * W, Q % NV + 1 < NV ? W : last_lanes,
                                           alpha, beta, &epi, i0 + Q / NV, (Q % NV) * W)
                        : void()),
       ...);
    }(std::make_integer_sequence<index_t, R * NV>{});
  } else {
    // With an epilogue, one loop over a buffer rather than R x NV inlined copies of the epilogue:
    // the micro-kernel's trade, R x NV stores and loads beside K x R x NV FMAs.
    alignas(64) std::array<T, std::size_t(R * NV * W)> ab;
    [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
      (acc[Q].store_aligned(ab.data() + Q * W), ...);
    }(std::make_integer_sequence<index_t, R * NV>{});
    for (index_t r = first; r < last; ++r)
      for (index_t v = 0; v < NV; ++v)
        finish_vector<F>(B::load_aligned(ab.data() + (r * NV + v) * W), c, i0 + r, v * W,
                         v + 1 < NV ? W : last_lanes, alpha, beta, &epi, i0 + r, v * W);
  }
}

/// All row blocks of C for rows of NV vectors.
template <class T, index_t NV, finish_kind F, class Epi>
void small_dynamic_rows(index_t M, index_t N, index_t K, const matrix_ref<T>& a, const matrix_ref<T>& b,
                        const tile_ref<T>& c, T alpha, T beta, const Epi& epi) {
  constexpr index_t R = small_dynamic_shape<T>::rows(NV);
  const index_t last_lanes = N - (NV - 1) * small_dynamic_shape<T>::W;
  if (M < R) {
    // Fewer rows than a block: A's rows are copied into an R x K block padded with zero rows, and
    // only the M real rows are stored (the padding costs FMAs, not packing the engine's way).
    alignas(64) std::array<T, std::size_t(small_dynamic_shape<T>::padded_elements)> pad;
    for (index_t r = 0; r < M; ++r)
      for (index_t k = 0; k < K; ++k) pad[std::size_t(r * K + k)] = a(r, k);
    std::fill(pad.begin() + M * K, pad.begin() + R * K, T(0));
    small_dynamic_block<T, NV, R, F>(matrix_ref<T>{pad.data(), K, 1}, b, c, 0, 0, M, K, last_lanes, alpha, beta, epi);
    return;
  }
  // Blocks at 0, R, 2 R, ..., the last one shifted to end at M; rows below `done` are stored.
  // (One call site: a second one with first = 0 made gcc clone the kernel.)
  for (index_t done = 0; done < M;) {
    const index_t i0 = std::min(done, M - R);
    small_dynamic_block<T, NV, R, F>(a, b, c, i0, done - i0, R, K, last_lanes, alpha, beta, epi);
    done = i0 + R;
  }
}

/// The whole product (small_dynamic_shape<T>::fits(M, N, K), b.cs == c.cs == 1).
template <class T, class Epi>
void small_dynamic_gemm(index_t M, index_t N, index_t K, const matrix_ref<T>& a, const matrix_ref<T>& b,
                        const tile_ref<T>& c, T alpha, T beta, const Epi& epi) {
  constexpr index_t W = small_dynamic_shape<T>::W;
  auto with_kind = [&]<finish_kind F>() {
    switch ((N + W - 1) / W) {
      case 1: return small_dynamic_rows<T, 1, F>(M, N, K, a, b, c, alpha, beta, epi);
      case 2: return small_dynamic_rows<T, 2, F>(M, N, K, a, b, c, alpha, beta, epi);
      case 3: return small_dynamic_rows<T, 3, F>(M, N, K, a, b, c, alpha, beta, epi);
      default: return small_dynamic_rows<T, 4, F>(M, N, K, a, b, c, alpha, beta, epi);
    }
  };
  // The finish decided once per call (as on the static path) for plain products; with an
  // epilogue, one kind that tests per vector, so that the epilogue is compiled into four kernels
  // and not twelve (loom_gemm.cpp: 13.0 G compile instructions against 14.75 G).
  if constexpr (!is_identity_epilogue<Epi>) with_kind.template operator()<finish_kind::any>();
  else with_finish_kind(alpha, beta, with_kind);
}

}  // namespace loom::gemm_detail
