// SPDX-License-Identifier: MIT
// loom/simd/math.hpp — float exp and sigmoid with fewer operations than xsimd's, at float
// accuracy (a few ulp over the full range; the tests measure it against double). Fused
// elementwise chains are bound by memory bandwidth only once their math is this cheap. double and integer types fall back to xsimd.
#pragma once
#include <cmath>
#include <type_traits>
#include "arch.hpp"
#include "fma.hpp"

#include "../core/config.hpp"

namespace loom::simd {

/// e^x for float batches: x = n ln2 + r, |r| <= ln2/2 (up to 0.28 at the top), e^r by a degree-6
/// polynomial, times 2^n. Saturates to 0 below -87.34 and to +inf above 88.72; NaN stays NaN.
/// About 17 operations:
///  - x is clamped to [-87.34, 89] first, so n lies in [-126, 128]; 2^128 · e^r overflows to +inf
///    exactly where e^x does (x > 88.72), with no select. The clamp's operand order lets NaN
///    through (x86 max/min return the second operand on NaN), and NaN then flows through the
///    arithmetic; one select sets the low end to 0;
///  - adding 1.5 · 2^23 rounds x · log2 e to an integer and leaves n in the low mantissa bits
///    (no round or convert instructions);
///  - 2^n: AVX-512's vscalefps multiplies by 2^n in one instruction; elsewhere n + 127 in the
///    exponent field, split in two factors so that n = 128 stays in range.
template <class A>
LOOM_INLINE xsimd::batch<float, A> fast_exp(const xsimd::batch<float, A>& x) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<int32_t, A>;
  const B hi(89.f), lo(-87.3365479f);
  const B xc = xsimd::min(hi, xsimd::max(lo, x));
  const B magic(12582912.f);  // 1.5 * 2^23
  const B t = simd::fma(xc, B(1.44269504088896341f), magic);
  const B n = t - magic;
  // Cody–Waite: ln2 in two parts so r keeps full precision.
  B r = simd::fnma(n, B(0.693359375f), xc);
  r = simd::fnma(n, B(-2.12194440e-4f), r);
  // Minimax polynomial for (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2] (Cephes expf coefficients).
  B p(1.9875691500e-4f);
  p = simd::fma(p, r, B(1.3981999507e-3f));
  p = simd::fma(p, r, B(8.3334519073e-3f));
  p = simd::fma(p, r, B(4.1665795894e-2f));
  p = simd::fma(p, r, B(1.6666665459e-1f));
  p = simd::fma(p, r, B(5.0000001201e-1f));
  const B er = simd::fma(p, r * r, r + B(1.f));
  B res;
  if constexpr (std::is_base_of_v<xsimd::avx512f, A>) {
    res = B(_mm512_scalef_ps(er, n));
  } else {
    const I ni = xsimd::bitwise_cast<I>(t) - xsimd::bitwise_cast<I>(magic);
    const I half = ni >> 1;
    const B s1 = xsimd::bitwise_cast<B>((half + I(127)) << 23);
    const B s2 = xsimd::bitwise_cast<B>((ni - half + I(127)) << 23);
    res = er * s1 * s2;
  }
  return xsimd::select(x < lo, B(0.f), res);
}

/// 1 / d to float precision. AVX-512's estimate (vrcp14ps) is good to 2^-14, and one Newton
/// step takes it to about 2^-28: 1 / 2 and 1 / (1 + tiny) come out exactly 0.5 and 1. Older
/// targets' estimate (rcpps) is good to 2^-12 only, a Newton step leaves 1-2 ulp (sigmoid(0) =
/// 0.49999997), so they divide: one instruction, correctly rounded, and no slower on the
/// bandwidth-bound chains (docs/tuning.md#division-and-the-sigmoid).
template <class A>
LOOM_INLINE xsimd::batch<float, A> fast_reciprocal(const xsimd::batch<float, A>& d) {
  using B = xsimd::batch<float, A>;
  if constexpr (std::is_base_of_v<xsimd::avx512f, A>) {
    const B r0 = xsimd::reciprocal(d);
    return r0 * simd::fnma(d, r0, B(2.f));
  } else {
    return B(1.f) / d;
  }
}

/// 1 + e^-x, the denominator of the sigmoid, in 16 operations (xsimd's sigmoid takes about three
/// times as many). e^-x = 2^n · e^r with n = round(-x · log2 e), r = -x - n ln2 in [-ln2/2, ln2/2]:
///  - x is clamped to [-88, 87] first, so n + 127 always fits the exponent field: 2^n needs no
///    overflow or underflow handling. Beyond the clamp the sigmoid is 0 or 1 to float precision.
///  - adding 1.5 · 2^23 rounds -x · log2 e to an integer and leaves n + 127 in the low mantissa
///    bits, so one shift builds 2^n (no round or convert instructions);
///  - e^r is a degree-5 minimax polynomial (relative error 7.5e-8), evaluated in r' = -r.
/// The clamp's operand order lets NaN through (x86 max/min return the second operand on NaN).
template <class A>
LOOM_INLINE xsimd::batch<float, A> sigmoid_denominator(const xsimd::batch<float, A>& x) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<int32_t, A>;
  const B magic(12582912.f + 127.f);
  const B xc = xsimd::min(B(87.f), xsimd::max(B(-88.f), x));
  const B j = simd::fnma(xc, B(1.44269504088896341f), magic);  // magic + n
  const B n = j - magic;
  B r = simd::fma(n, B(0.693359375f), xc);  // r' = x + n ln2 = -r (ln2 in two parts)
  r = simd::fma(n, B(-2.12194440e-4f), r);
  // e^-r' = Σ c_k (-r')^k: the minimax coefficients with the odd ones negated.
  B p(-0.008297655080363472f);
  p = simd::fma(p, r, B(0.04191538199169587f));
  p = simd::fma(p, r, B(-0.16667574728755044f));
  p = simd::fma(p, r, B(0.49998894851221964f));
  p = simd::fma(p, r, B(-0.9999996919915167f));
  p = simd::fma(p, r, B(1.0000000716546822f));
  const B scale = xsimd::bitwise_cast<B>(xsimd::bitwise_cast<I>(j) << 23);  // 2^n
  return simd::fma(p, scale, B(1.f));
}

/// 1 / (1 + e^-x): the denominator above and fast_reciprocal.
template <class A>
LOOM_INLINE xsimd::batch<float, A> fast_sigmoid(const xsimd::batch<float, A>& x) {
  return fast_reciprocal(sigmoid_denominator(x));
}

/// a / d to float precision: a times fast_reciprocal(d) where that is an estimate and a Newton
/// step (AVX-512, whose division is slow), a division elsewhere (one rounding, not two).
template <class A>
LOOM_INLINE xsimd::batch<float, A> fast_divide(const xsimd::batch<float, A>& a, const xsimd::batch<float, A>& d) {
  if constexpr (std::is_base_of_v<xsimd::avx512f, A>) return a * fast_reciprocal(d);
  else return a / d;
}

/// a · sigmoid(x) as a / (1 + e^-x): the sigmoid's reciprocal and the product become one division
/// (gated units and SiLU, x · sigmoid(x), have this form): one rounding and one instruction fewer
/// (docs/tuning.md#division-and-the-sigmoid).
template <class A>
LOOM_INLINE xsimd::batch<float, A> times_sigmoid(const xsimd::batch<float, A>& a, const xsimd::batch<float, A>& x) {
  return fast_divide(a, sigmoid_denominator(x));
}

template <class T>
LOOM_INLINE T scalar_sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

}  // namespace loom::simd
