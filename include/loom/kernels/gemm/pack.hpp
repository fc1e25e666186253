// SPDX-License-Identifier: MIT
// loom/kernels/gemm/pack.hpp — copies a block of A or B into the order the micro-kernel reads it.
//
//   packed A block (mc x kc), MR-row slivers one after another:
//     Ap[s * MR * kc + k * MR + r] = A(s * MR + r, k)      rows past mc are 0
//   packed B sliver s (kc x NR), wherever the driver keeps it:
//     Bs[k * NR + c] = B(k, s * NR + c)                     columns past nc are 0
//
// The zero padding lets the micro-kernel always compute a whole MR x NR tile: padded rows and
// columns add zeros and are never stored. Both functions read any strides; the unit-stride cases
// (row-major B, row-major A) have their own loops.
#pragma once
#include <algorithm>
#include <cstring>

#include "../../core/config.hpp"

namespace loom::gemm_detail {

/// A strided read-only matrix: element (r, c) at p[r * rs + c * cs].
template <class T>
struct matrix_ref {
  const T* p;
  index_t rs, cs;
  LOOM_INLINE const T& operator()(index_t r, index_t c) const { return p[r * rs + c * cs]; }
  /// The block starting at (r, c).
  matrix_ref at(index_t r, index_t c) const { return {p + r * rs + c * cs, rs, cs}; }
};

/// Packs A(0:mc, 0:kc) into MR-row slivers.
template <index_t MR, class T>
void pack_a(T* __restrict ap, matrix_ref<T> a, index_t mc, index_t kc) {
  for (index_t s = 0; s < mc; s += MR, ap += MR * kc) {
    const index_t rows = std::min(MR, mc - s);
    const matrix_ref<T> as = a.at(s, 0);
    if (rows == MR && as.cs == 1) {
      // Row-major: MR sequential streams, written interleaved.
      const T* row[MR];
      for (index_t r = 0; r < MR; ++r) row[r] = as.p + r * as.rs;
      for (index_t k = 0; k < kc; ++k)
        for (index_t r = 0; r < MR; ++r) ap[k * MR + r] = row[r][k];
    } else if (rows == MR && as.rs == 1) {
      // Column-major: each k is MR contiguous values.
      for (index_t k = 0; k < kc; ++k) std::memcpy(ap + k * MR, as.p + k * as.cs, sizeof(T) * MR);
    } else if (as.cs == 1) {
      // Row-major, a last sliver of fewer than MR rows: zeros, then each row into its lane (the
      // element loop below, with its zero tail per k, is slow enough to show in small products).
      std::fill(ap, ap + MR * kc, T(0));
      for (index_t r = 0; r < rows; ++r) {
        const T* row = as.p + r * as.rs;
        for (index_t k = 0; k < kc; ++k) ap[k * MR + r] = row[k];
      }
    } else {
      for (index_t k = 0; k < kc; ++k) {
        for (index_t r = 0; r < rows; ++r) ap[k * MR + r] = as(r, k);
        for (index_t r = rows; r < MR; ++r) ap[k * MR + r] = T(0);
      }
    }
  }
}

/// Packs sliver s of B(0:kc, 0:nc), its NR columns from s * NR on, to bp.
template <index_t NR, class T>
void pack_b_sliver(T* __restrict bp, matrix_ref<T> b, index_t kc, index_t nc, index_t s) {
  const index_t cols = std::min(NR, nc - s * NR);
  const matrix_ref<T> bs = b.at(0, s * NR);
  if (cols == NR && bs.cs == 1) {
    for (index_t k = 0; k < kc; ++k) std::memcpy(bp + k * NR, bs.p + k * bs.rs, sizeof(T) * NR);
  } else if (bs.cs == 1) {
    // A last sliver of fewer than NR columns: one loop per row that the compiler vectorizes with
    // masked loads (a memcpy and a fill per row were two library calls per k step).
    for (index_t k = 0; k < kc; ++k) {
      const T* src = bs.p + k * bs.rs;
      T* dst = bp + k * NR;
      for (index_t c = 0; c < NR; ++c) dst[c] = c < cols ? src[c] : T(0);
    }
  } else {
    for (index_t k = 0; k < kc; ++k) {
      for (index_t c = 0; c < cols; ++c) bp[k * NR + c] = bs(k, c);
      for (index_t c = cols; c < NR; ++c) bp[k * NR + c] = T(0);
    }
  }
}

}  // namespace loom::gemm_detail
