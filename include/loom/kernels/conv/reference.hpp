// SPDX-License-Identifier: MIT
// loom/kernels/conv/reference.hpp — the convolution as plain loops over any layout (what every
// fast path must agree with; apps can use it to check their own). Sums in the element type, taps
// then input channels in order, padded taps skipped.
#pragma once
#include "../../core/config.hpp"
#include "../../simd/arch.hpp"
#include "../gemm/epilogue.hpp"
#include "params.hpp"

namespace loom::conv_detail {

/// epi at one value: a vector whose first lane is v, one lane live (the epilogue contract).
template <class T, class Epi>
T apply_one(T v, const Epi& epi, index_t pixel, index_t channel) {
  if constexpr (gemm_detail::is_identity_epilogue<Epi>) {
    return v;
  } else {
    using B = simd::batch<T, simd::native_width<T>>;
    return epi.template apply<B>(B(v), pixel, channel, 1).get(0);
  }
}

template <class OV, class IV, class WV, class Epi>
void reference(const conv2d_shape& s, const OV& out, const IV& in, const WV& w, const Epi& epi) {
  using T = typename OV::value_type;
  for (index_t n = 0; n < s.N; ++n)
    for (index_t oy = 0; oy < s.OH; ++oy)
      for (index_t ox = 0; ox < s.OW; ++ox)
        for (index_t co = 0; co < s.CO; ++co) {
          const index_t g = co / s.COg;
          T acc = 0;
          for (index_t ky = 0; ky < s.KH; ++ky) {
            const index_t iy = oy * s.sh + ky * s.dh - s.pt;
            if (iy < 0 || iy >= s.H) continue;
            for (index_t kx = 0; kx < s.KW; ++kx) {
              const index_t ix = ox * s.sw + kx * s.dw - s.pl;
              if (ix < 0 || ix >= s.W) continue;
              for (index_t c = 0; c < s.Cg; ++c) acc += T(in(n, iy, ix, g * s.Cg + c)) * T(w(ky, kx, c, co));
            }
          }
          out(n, oy, ox, co) = apply_one(acc, epi, (n * s.OH + oy) * s.OW + ox, co);
        }
}

}  // namespace loom::conv_detail
