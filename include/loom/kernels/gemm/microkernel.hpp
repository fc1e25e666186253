// SPDX-License-Identifier: MIT
// loom/kernels/gemm/microkernel.hpp — the MR x NR register tile at the bottom of the GEMM engine,
// and a plain reference kernel with the same contract.
//
// Contract (what every kernel here computes; see docs/gemm.md for the diagrams)
//
//   micro_kernel<P, Rows>(kc, a, bp, next, c, m, n, alpha, beta, epilogue, last, i0, j0)
//
//   Rows accumulator rows (<= MR); m <= Rows
//   a    the A sliver, a.at(r, k) = A(r, k) for r < Rows: packed_a (ap[k * MR + r], 64-byte
//        aligned, rows >= m are 0) or rows_of_a (a row-major A in place, all Rows rows readable)
//   bp   packed B sliver, kc x NR: bp[k * NR + c] = B(k, c)       (64-byte aligned, cols >= n are 0)
//   next part of the next B sliver to pack while the FMAs run (next.src null: none): rows
//        [lo, hi), NR elements each, from next.src + r * next.rs (row-major, all NR readable) to
//        next.dst + r * NR, spread over the k steps; row r + ahead (< kc) is prefetched into L2
//        as row r is copied
//   c    the C tile: c.p[r * c.rs + j * c.cs], only r < m, j < n are touched
//   math AB = sum_k a(:, k) bp(k, :)  in Rows x NRV vector registers, then for r < m, j < n:
//          v = alpha * AB(r, j) + beta * C(r, j)     C is NOT read when beta == 0 (it may hold
//                                                    NaN or garbage, as in BLAS)
//          C(r, j) = epilogue(v, i0 + r, j0 + j)     only when `last` (else C(r, j) = v); the
//                                                    epilogue sees the tile before it is written
//   kc = 0 is valid (AB = 0). The padded rows/columns add zeros and are never stored.
//   A column-major C (c.cs != 1) is written lane by lane through a small buffer.
//
// The engine calls it with beta = the user's beta for the first KC block and beta = 1 for the
// following ones, and with last = true for the last KC block only (one instantiation serves all).
#pragma once
#include <algorithm>
#include <array>
#include <type_traits>
#include <utility>

#include "../../core/config.hpp"
#include "../../simd/arch.hpp"
#include "../../simd/fma.hpp"
#include "../../simd/memory.hpp"
#include "epilogue.hpp"

namespace loom::gemm_detail {

/// The C tile a micro-kernel writes.
template <class T>
struct tile_ref {
  T* p;
  index_t rs, cs;
};

/// Where a micro-kernel reads its sliver of A: packed by pack_a (MR values per k step, together)
/// or a row-major A where it is (row r at p + r * rs, unit stride along k) when packing would
/// cost more than it saves (the sliver meets only one or two slivers of B).
template <class T, index_t MR>
struct packed_a {
  const T* p;
  LOOM_INLINE const T& at(index_t r, index_t k) const { return p[k * MR + r]; }
};
template <class T>
struct rows_of_a {
  const T* p;
  index_t rs;
  LOOM_INLINE const T& at(index_t r, index_t k) const { return p[r * rs + k]; }
};
template <class A>
inline constexpr bool is_packed_a = false;
template <class T, index_t MR>
inline constexpr bool is_packed_a<packed_a<T, MR>> = true;

/// The next B sliver, packed by the micro-kernels of this one while their FMAs run (src null:
/// nothing to do). A call copies rows [lo, hi) of the sliver, NR elements from src + r * rs to
/// dst + r * NR, spread evenly over its k steps, and asks L2 for row r + ahead as it copies row r
/// (rows past kc are not asked for). Spread over all of a sliver's calls, the copy reads B at the
/// product's own pace instead of in a burst the FMAs wait for.
template <class T>
struct next_sliver {
  const T* src = nullptr;
  index_t rs = 0;
  T* dst = nullptr;
  index_t lo = 0, hi = 0;
  static constexpr index_t ahead = 16;
};

/// Asks L2 (locality 2: prefetcht1) for the NR elements at p. Not L1: rows a page apart all map to
/// one L1 set, where they would only evict each other and the tile's operands.
template <index_t NR, class T>
LOOM_INLINE void prefetch_row_to_l2(const T* p) {
  // A row of NR elements spans at most this many cache lines (+1 when it is not aligned).
  constexpr index_t lines = (NR * index_t(sizeof(T)) + 63) / 64 + 1;
  const char* row = reinterpret_cast<const char*>(p);
  [&]<index_t... L>(std::integer_sequence<index_t, L...>) LOOM_LAMBDA_INLINE {
    (__builtin_prefetch(row + std::min(L * 64, NR * index_t(sizeof(T)) - 1), 0, 2), ...);
  }(std::make_integer_sequence<index_t, lines>{});
}

/// What finish_vector does to alpha AB before the epilogue: decided per vector from alpha and beta
/// (`any`, the packed engine: one instantiation for every K block), or fixed by a caller that
/// decided it once per call (the small static path).
enum class finish_kind {
  any,
  store,       // alpha = 1, beta = 0: C = AB
  scale,       // beta = 0: C = alpha AB (C not read)
  accumulate,  // C = alpha AB + beta C
};

/// Calls f.template operator()<F>() with the kind alpha and beta call for: how the small paths
/// decide their finish once per call.
template <class T, class F>
LOOM_INLINE void with_finish_kind(T alpha, T beta, F&& f) {
  if (beta != T(0)) f.template operator()<finish_kind::accumulate>();
  else if (alpha != T(1)) f.template operator()<finish_kind::scale>();
  else f.template operator()<finish_kind::store>();
}

/// Loads v = C(r, j0 : j0 + lanes), combines, applies the epilogue (unless epi is null) and stores.
template <finish_kind F = finish_kind::any, class B, class T, class Epi>
LOOM_INLINE void finish_vector(B acc, const tile_ref<T>& c, index_t r, index_t j, index_t lanes, T alpha, T beta,
                               const Epi* epi, index_t i_glob, index_t j_glob) {
  T* dst = c.p + r * c.rs + j * c.cs;
  B v = acc;
  if constexpr (F != finish_kind::store) v = v * B(alpha);
  if (F == finish_kind::accumulate || (F == finish_kind::any && beta != T(0))) {
    B old;
    if (c.cs == 1) old = lanes == index_t(B::size) ? B::load_unaligned(dst) : simd::load_first<B>(dst, lanes);
    else old = simd::load_strided<B>(dst, c.cs, lanes);
    if constexpr (F == finish_kind::any) v = beta == T(1) ? v + old : simd::fma(old, B(beta), v);
    else v = simd::fma(old, B(beta), v);
  }
  if constexpr (!is_identity_epilogue<Epi>) {
    if (epi) v = epi->template apply<B>(v, i_glob, j_glob, lanes);
  }
  if (c.cs == 1) {
    if (lanes == index_t(B::size)) v.store_unaligned(dst);
    else simd::store_first<B>(dst, v, lanes);
  } else {
    simd::store_strided<B>(dst, c.cs, v, lanes);
  }
}

/// The register-blocked kernel: Rows x NRV vectors of accumulators (Rows <= MR: the first rows of
/// the packed sliver), one broadcast of A and NRV loads of B per k step, all loops over the tile
/// unrolled at compile time.
template <class P, index_t Rows, class ASliver, class Epi>
void micro_kernel(index_t kc, const ASliver a_sliver, const typename P::value_type* __restrict bp,
                  const next_sliver<typename P::value_type>& next, const tile_ref<typename P::value_type>& c, index_t m, index_t n, typename P::value_type alpha,
                  typename P::value_type beta, const Epi& epi, bool last, index_t i0, index_t j0) {
  using T = typename P::value_type;
  using B = simd::batch<T, std::size_t(P::W)>;
  constexpr index_t MR = P::MR, NRV = P::NRV, NR = P::NR, W = P::W;
  static_assert(Rows >= 1 && Rows <= MR, "loom internal: a micro-kernel has 1 to MR accumulator rows");
  using tile = std::array<B, std::size_t(Rows * NRV)>;
  using rows = std::make_integer_sequence<index_t, Rows>;
  using vecs = std::make_integer_sequence<index_t, NRV>;

  // Ask for the C tile now: it is read (beta != 0) and written only after the k loop, when a miss
  // could no longer overlap with the FMAs (C rows are a page apart, and a miss from L3 per row
  // is a visible share of a kernel call).
  if (c.cs == 1) {
    for (index_t r = 0; r < m; ++r) {
      __builtin_prefetch(c.p + r * c.rs, 1, 3);
      __builtin_prefetch(c.p + r * c.rs + NR - 1, 1, 3);
    }
  }

  tile acc;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    ((acc[Q] = B(T(0))), ...);
  }(std::make_integer_sequence<index_t, Rows * NRV>{});

  auto step = [&](index_t k) LOOM_LAMBDA_INLINE {
    std::array<B, std::size_t(NRV)> b;
    [&]<index_t... V>(std::integer_sequence<index_t, V...>) LOOM_LAMBDA_INLINE {
      ((b[V] = B::load_aligned(bp + k * NR + V * W)), ...);
    }(vecs{});
    auto row = [&](auto r) LOOM_LAMBDA_INLINE {
      constexpr index_t R = decltype(r)::value;
      const B a(a_sliver.at(R, k));
      [&]<index_t... V>(std::integer_sequence<index_t, V...>) LOOM_LAMBDA_INLINE {
        ((acc[R * NRV + V] = simd::fma(a, b[V], acc[R * NRV + V])), ...);
      }(vecs{});
    };
    [&]<index_t... R>(std::integer_sequence<index_t, R...>) LOOM_LAMBDA_INLINE {
      (row(std::integral_constant<index_t, R>{}), ...);
    }(rows{});
  };
  // One k step per iteration, not unrolled: when g++ 12 unrolls this loop it hoists the next
  // step's loads of B above this step's FMAs, needs more than the 32 registers and spills
  // accumulators to the stack. The loop's own cost is 3 instructions beside MR * NRV FMAs.
  if (next.src) {
    // One row copied every `period` k steps, so the copy ends with the loop.
    const index_t period = next.hi > next.lo ? std::max<index_t>(1, kc / (next.hi - next.lo)) : 1;
    index_t r = next.lo, wait = 1;
    auto copy_row = [&]() LOOM_LAMBDA_INLINE {
      if (r + next.ahead < kc) prefetch_row_to_l2<NR>(next.src + (r + next.ahead) * next.rs);
      [&]<index_t... V>(std::integer_sequence<index_t, V...>) LOOM_LAMBDA_INLINE {
        (B::load_unaligned(next.src + r * next.rs + V * W).store_aligned(next.dst + r * NR + V * W), ...);
      }(vecs{});
      ++r;
    };
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 1
#endif
    for (index_t k = 0; k < kc; ++k) {
      step(k);
      if (--wait == 0 && r < next.hi) {
        wait = period;
        copy_row();
      }
    }
    while (r < next.hi) copy_row();
  } else {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 1
#endif
    for (index_t k = 0; k < kc; ++k) step(k);
  }

  // Write the m x n part of the tile. The accumulators pass through a buffer so that this stays
  // one loop: written out for MR x NRV vectors (with the epilogue inlined into each) it was most
  // of the code a GEMM instantiation compiles, for MR * NRV stores and loads beside kc * MR * NRV
  // FMAs.
  alignas(64) std::array<T, std::size_t(Rows * NR)> ab;
  [&]<index_t... Q>(std::integer_sequence<index_t, Q...>) LOOM_LAMBDA_INLINE {
    (acc[Q].store_aligned(ab.data() + Q * W), ...);
  }(std::make_integer_sequence<index_t, Rows * NRV>{});
  for (index_t r = 0; r < m; ++r)
    for (index_t v = 0; v < NRV && v * W < n; ++v)
      finish_vector(B::load_aligned(ab.data() + (r * NRV + v) * W), c, r, v * W, std::min(W, n - v * W), alpha, beta,
                    last ? &epi : nullptr, i0 + r, j0 + v * W);
}

/// The reference kernel: the same contract in plain scalar loops (for tests and for reading).
template <class P, class ASliver, class Epi>
void reference_kernel(index_t kc, const ASliver ap, const typename P::value_type* bp,
                      const next_sliver<typename P::value_type>& next,
                      const tile_ref<typename P::value_type>& c, index_t m, index_t n, typename P::value_type alpha,
                      typename P::value_type beta, const Epi& epi, bool last, index_t i0, index_t j0) {
  using T = typename P::value_type;
  using B1 = simd::batch<T, std::size_t(P::W)>;
  if (next.src)  // the next sliver's rows, as the fast kernel copies them
    for (index_t r = next.lo; r < next.hi; ++r)
      for (index_t j = 0; j < P::NR; ++j) next.dst[r * P::NR + j] = next.src[r * next.rs + j];
  for (index_t r = 0; r < m; ++r) {
    for (index_t j = 0; j < n; ++j) {
      T ab = T(0);
      for (index_t k = 0; k < kc; ++k) ab += ap.at(r, k) * bp[k * P::NR + j];
      T& dst = c.p[r * c.rs + j * c.cs];
      T v = alpha * ab;
      if (beta != T(0)) v += beta * dst;
      if constexpr (!is_identity_epilogue<Epi>) {
        if (last) v = epi.template apply<B1>(B1(v), i0 + r, j0 + j, 1).get(0);
      }
      dst = v;
    }
  }
}

}  // namespace loom::gemm_detail
