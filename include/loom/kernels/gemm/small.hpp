// SPDX-License-Identifier: MIT
// loom/kernels/gemm/small.hpp — C = epilogue(alpha A B + beta C) when M, N and K are static and
// small (<= 64): all of A, B and C fit in L1, so there is nothing to pack or block for. Rows of C
// are computed in register blocks of R rows x NV vectors that span the whole row; B's rows are
// loaded straight from memory, A's elements broadcast. Every trip count is a constant, so the
// compiler unrolls what it likes and no tail code is left but the masked last vector of a row
// when N is not a multiple of the vector width.
//
// Same contract as the micro-kernel (microkernel.hpp): C is not read when beta == 0, the epilogue
// sees each vector before it is stored. Needs unit column stride in B and C (row-major rows);
// loom::gemm falls back to the packed engine otherwise.
//
// What the packed engine's finish_vector tests per vector (is beta 0? is alpha 1?) and whether the
// strides are the dense ones are decided once per call here (finish_vector<finish_kind>): at 16^3
// the whole product is a few hundred cycles of FMAs, and per-vector tests are a visible share.
#pragma once
#include <array>
#include <utility>

#include "../../core/config.hpp"
#include "../../simd/arch.hpp"
#include "../../simd/fma.hpp"
#include "../../simd/memory.hpp"
#include "microkernel.hpp"

namespace loom::gemm_detail {

/// The register blocking of a small static problem (W lanes of T per vector).
template <class T, index_t M, index_t N, index_t K>
struct small_shape {
  static constexpr index_t W = index_t(simd::native_width<T>);
  static constexpr index_t registers = simd::vector_registers<T, std::size_t(W)>;
  static constexpr index_t NV = (N + W - 1) / W;  // vectors per row of C
  // Rows per block: the R x NV accumulators, NV vectors of B and one broadcast of A in registers.
  static constexpr index_t R_max = NV > 0 ? (registers - NV - 1) / NV : 0;
  // The rows are spread over the fewest blocks that can hold them, as evenly as they go: `big`
  // blocks of R rows, then blocks of R - 1 (64 rows at R_max = 6: 9 x 6 + 2 x 5, not 10 x 6 + 4,
  // whose 4-row block ran at two thirds of the FMA rate).
  static constexpr index_t blocks = R_max > 0 ? (M + R_max - 1) / R_max : 0;
  static constexpr index_t R = blocks > 0 ? (M + blocks - 1) / blocks : 0;
  static constexpr index_t big = M - blocks * (R - 1);
  static constexpr bool fits = M >= 1 && N >= 1 && K >= 0 && M <= 64 && N <= 64 && K <= 64 && R >= 1;
};

/// Rows [i0, i0 + R) of C. Dense: A, B and C are dense row-major, so their strides become
/// constants and every address a constant offset: a broadcast of A is one FMA operand (embedded
/// broadcast) instead of a row pointer to keep per accumulator row.
template <class T, index_t N, index_t K, index_t R, bool Dense, finish_kind F, class Epi>
LOOM_INLINE void small_rows(matrix_ref<T> a, matrix_ref<T> b, tile_ref<T> c, index_t i0, T alpha, T beta,
                            const Epi& epi) {
  b.cs = 1, c.cs = 1;  // loom::gemm takes this path only for unit column strides in B and C
  if constexpr (Dense) a.rs = K, a.cs = 1, b.rs = N, c.rs = N;
  constexpr index_t W = index_t(simd::native_width<T>);
  constexpr index_t NV = (N + W - 1) / W;
  constexpr index_t last_lanes = N - (NV - 1) * W;
  using B = simd::batch<T, std::size_t(W)>;
  std::array<B, std::size_t(R * NV)> acc;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = B(T(0))), ...);
  }(std::make_integer_sequence<index_t, R * NV>{});
  const T* arow = a.p + i0 * a.rs;
  for (index_t k = 0; k < K; ++k) {
    const T* brow = b.p + k * b.rs;
    std::array<B, std::size_t(NV)> bv;
    [&]<index_t... V>(std::integer_sequence<index_t, V...>) LOOM_LAMBDA_INLINE {
      ((bv[V] = (V + 1 < NV || last_lanes == W) ? B::load_unaligned(brow + V * W)
                                                : simd::load_first<B>(brow + V * W, last_lanes)),
       ...);
    }(std::make_integer_sequence<index_t, NV>{});
    [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
      // Q = r * NV + v; one broadcast per row, reused across its NV vectors (CSE'd by the compiler).
      ((acc[Q] = simd::fma(B(arow[(Q / NV) * a.rs + k * a.cs]), bv[Q % NV], acc[Q])), ...);
    }(std::make_integer_sequence<index_t, R * NV>{});
  }
  // The finish is the packed engine's, with its kind fixed for the call and every argument but
  // alpha and beta a constant once inlined.
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    (finish_vector<F>(acc[Q], c, i0 + Q / NV, (Q % NV) * W, Q % NV + 1 < NV ? W : last_lanes, alpha, beta, &epi,
                      i0 + Q / NV, (Q % NV) * W),
     ...);
  }(std::make_integer_sequence<index_t, R * NV>{});
}

/// The whole product, block by block.
template <class T, index_t M, index_t N, index_t K, bool Dense, finish_kind F, class Epi>
LOOM_INLINE void small_blocks(const matrix_ref<T>& a, const matrix_ref<T>& b, const tile_ref<T>& c, T alpha, T beta,
                              const Epi& epi) {
  using S = small_shape<T, M, N, K>;
  for (index_t q = 0; q < S::big; ++q) small_rows<T, N, K, S::R, Dense, F>(a, b, c, q * S::R, alpha, beta, epi);
  if constexpr (S::R > 1) {
    for (index_t q = 0; q < S::blocks - S::big; ++q)
      small_rows<T, N, K, S::R - 1, Dense, F>(a, b, c, S::big * S::R + q * (S::R - 1), alpha, beta, epi);
  }
}

template <class T, index_t M, index_t N, index_t K, class Epi>
LOOM_INLINE void small_gemm(const matrix_ref<T>& a, const matrix_ref<T>& b, const tile_ref<T>& c, T alpha, T beta,
                            const Epi& epi) {
  static_assert(small_shape<T, M, N, K>::fits, "loom internal: small_gemm called for a shape it does not cover");
  auto with_strides = [&]<finish_kind F>() LOOM_LAMBDA_INLINE {
    // Dense row-major operands (the common case) get compile-time strides.
    if (a.rs == K && a.cs == 1 && b.rs == N && c.rs == N) small_blocks<T, M, N, K, true, F>(a, b, c, alpha, beta, epi);
    else small_blocks<T, M, N, K, false, F>(a, b, c, alpha, beta, epi);
  };
  with_finish_kind(alpha, beta, with_strides);
}

}  // namespace loom::gemm_detail
