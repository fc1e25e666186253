// SPDX-License-Identifier: MIT
// loom/simd/divide.hpp — integer division of lanes, without a division instruction per lane.
//
// loom's integer division (scalar and vector alike): the quotient rounded toward zero, as C++;
// a division by zero gives 0 (as in Halide; undefined in C++), and the one overflowing signed
// quotient, lowest / -1, wraps to lowest (undefined for int32/int64 in C++; what int8/int16 give
// after C++'s promotion and the conversion back).
//
// By a value fixed when the definition is written (`e / 3u`, `e / d`): divisor<T> computes a
// magic number once (Granlund & Montgomery, "Division by invariant integers using
// multiplication", 1994, fig. 4.1, as libdivide does), so that for every n of the type, with
// a = |d|, l = ceil(log2 a) and N the lanes' bits:
//     m = floor(2^N (2^l - a) / a) + 1,   q = mulhi(m, n),   n / a = (q + ((n - q) >> s1)) >> s2
// with s1 = min(l, 1), s2 = max(l - 1, 0): exact for all inputs (no rounding error to bound).
// Most divisors that are not powers of 2 (7 in 10 below 5000: 3, 5, 9, 10, 255, 65535, not 7)
// have an N-bit m' with n / a = mulhi(m', n) >> (l - 1): three operations fewer per vector (a
// 3x3 uint16 blur / 9u over 1024^2, AVX-512 on an AMD EPYC: 0.184 -> 0.155 ms; a plain loop
// dividing by the literal 9, which GCC turns into the same multiply, 0.146 ms). The divisor
// records its form; a vector tests it once (always the same way: predicted), scalar code masks
// the fixup away. 8-bit lanes divide in 16-bit lanes (x86 has no 8-bit multiply); 64-bit lanes
// use the same formulas lane by lane (x86 has no 64-bit vector multiply-high). Signed lanes
// divide their magnitude and put the sign back.
// The divisor 0 is m = 0, s1 = 1, s2 = N - 1, which gives 0 for every n.
//
// By an expression that varies (`a(x) / b(x)`): 8- and 16-bit lanes divide in float, 32-bit lanes
// in double, then truncate; exact, since a quotient that is not an integer lies at least 1/|b|
// from the next integer and the division's rounding error is below that (|n| < 2^16 against a
// 24-bit significand, |n| < 2^32 against 53 bits). 64-bit lanes divide lane by lane.
#pragma once
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "convert.hpp"
#include "lanes.hpp"

namespace loom::simd {

/// n / d for integers as loom defines it (see above): 0 for d == 0, lowest / -1 wraps.
template <class T>
LOOM_INLINE constexpr T divide_scalar(T n, T d) {
  static_assert(std::is_integral_v<T>);
  if (d == 0) return T(0);
  if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (d == T(-1)) return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(n)));
  }
  return static_cast<T>(n / d);
}

namespace detail {
__extension__ typedef unsigned __int128 uint128_t;

template <class C>
using wider_t = std::conditional_t<sizeof(C) <= 4, std::uint64_t, uint128_t>;

/// The high half of the product of two C.
template <class C>
LOOM_INLINE constexpr C mulhi(C a, C b) {
  using Wd = wider_t<C>;
  return static_cast<C>((static_cast<Wd>(a) * static_cast<Wd>(b)) >> (sizeof(C) * 8));
}
}  // namespace detail

/// Division of every value of T by one divisor, by multiplication (see above).
template <class T>
struct divisor {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "loom::simd::divisor: an integer type");
  using U = std::make_unsigned_t<T>;
  /// The unsigned lanes the quotient is computed in: 16 bits for 8-bit T, else T's width.
  using C = std::conditional_t<sizeof(T) == 1, std::uint16_t, U>;
  static constexpr int bits = int(sizeof(C) * 8);

  T value = 0;
  C magic = 0;
  int shift1 = 1;
  int shift2 = bits - 1;
  bool fixup = true;      // false: q >> shift2 is the quotient (the magic fits N bits)
  C fixup_mask = C(~C(0));  // all ones where fixup, else 0 (the scalar form, without a branch)
  bool negative = false;  // a negative divisor (signed T)

  constexpr divisor() = default;
  constexpr explicit divisor(T d) : value(d) {
    U a = static_cast<U>(d);
    if constexpr (std::is_signed_v<T>) {
      negative = d < 0;
      if (negative) a = static_cast<U>(U(0) - a);
    }
    if (a == 0) return;  // m = 0, s1 = 1, s2 = N - 1: every quotient 0
    using Wd = detail::wider_t<C>;
    const int l = int(std::bit_width(static_cast<C>(a - 1)));  // ceil(log2 a)
    if ((a & (a - 1)) != 0) {
      // About half the divisors have an N-bit magic m = floor(2^(N+l-1) / a) + 1 that is exact
      // with one shift, q = mulhi(m, n) >> (l - 1): when a - 2^(N+l-1) mod a < 2^(l-1) (libdivide).
      const Wd p = Wd(1) << (bits + l - 1);
      if (Wd(a) - p % Wd(a) < (Wd(1) << (l - 1))) {
        magic = static_cast<C>(p / Wd(a) + 1);
        shift1 = 0;
        shift2 = l - 1;
        fixup = false;
        fixup_mask = 0;
        return;
      }
    }
    magic = static_cast<C>(((Wd(1) << bits) * ((Wd(1) << l) - Wd(a))) / Wd(a) + 1);
    shift1 = l < 1 ? l : 1;
    shift2 = l > 1 ? l - 1 : 0;
  }

  /// floor(n / |d|) for n in [0, 2^bits).
  LOOM_INLINE constexpr C unsigned_quotient(C n) const {
    const C q = detail::mulhi(magic, n);
    const C fix = static_cast<C>(static_cast<C>(static_cast<C>(n - q) >> shift1) & fixup_mask);
    return static_cast<C>(static_cast<C>(q + fix) >> shift2);
  }

  /// n / d, as divide_scalar(n, d).
  LOOM_INLINE constexpr T divide(T n) const {
    if constexpr (std::is_unsigned_v<T>) {
      return static_cast<T>(unsigned_quotient(static_cast<C>(n)));
    } else {
      const bool neg_n = n < 0;
      const U an = neg_n ? static_cast<U>(U(0) - static_cast<U>(n)) : static_cast<U>(n);
      const U q = static_cast<U>(unsigned_quotient(static_cast<C>(an)));
      return static_cast<T>(neg_n != negative ? static_cast<U>(U(0) - q) : q);
    }
  }
};

namespace detail {
#if XSIMD_WITH_AVX512F
inline constexpr bool div_avx512f = true;
#else
inline constexpr bool div_avx512f = false;
#endif

/// Whether divisor<T> runs on registers of N bytes with the target's instructions.
template <class T, std::size_t N>
inline constexpr bool magic_vectorized =
    sizeof(T) < 8 && (N == 64 ? div_avx512f && (sizeof(T) == 4 || cvt::has_avx512bw) : N == 32 ? cvt::has_avx2 : cvt::has_sse41);

/// Unsigned quotients of one register of 16- or 32-bit lanes (C), by the magic formula.
template <bool Fixup, class C, class R>
LOOM_INLINE R unsigned_quotients(R n, C magic, int s1, int s2) {
  [[maybe_unused]] constexpr std::size_t N = sizeof(R);
  const __m128i c1 = _mm_cvtsi32_si128(s1), c2 = _mm_cvtsi32_si128(s2);
  if constexpr (sizeof(C) == 2) {
#if XSIMD_WITH_AVX512BW
    if constexpr (N == 64) {
      const __m512i q = _mm512_mulhi_epu16(n, _mm512_set1_epi16(static_cast<short>(magic)));
      if constexpr (!Fixup) return _mm512_srl_epi16(q, c2);
      return _mm512_srl_epi16(_mm512_add_epi16(q, _mm512_srl_epi16(_mm512_sub_epi16(n, q), c1)), c2);
    } else
#endif
#if XSIMD_WITH_AVX2
        if constexpr (N == 32) {
      const __m256i q = _mm256_mulhi_epu16(n, _mm256_set1_epi16(static_cast<short>(magic)));
      if constexpr (!Fixup) return _mm256_srl_epi16(q, c2);
      return _mm256_srl_epi16(_mm256_add_epi16(q, _mm256_srl_epi16(_mm256_sub_epi16(n, q), c1)), c2);
    } else
#endif
    {
      const __m128i q = _mm_mulhi_epu16(n, _mm_set1_epi16(static_cast<short>(magic)));
      if constexpr (!Fixup) return _mm_srl_epi16(q, c2);
      return _mm_srl_epi16(_mm_add_epi16(q, _mm_srl_epi16(_mm_sub_epi16(n, q), c1)), c2);
    }
  } else {
    // mulhi of 32-bit lanes: the even lanes' 64-bit products, then the odd lanes' (shifted down),
    // their high halves interleaved back.
    [[maybe_unused]] const int m = static_cast<int>(magic);  // the AVX-512 and AVX2 paths
#if XSIMD_WITH_AVX512F
    if constexpr (N == 64) {
      const __m512i mm = _mm512_set1_epi32(m);
      const __m512i even = _mm512_srli_epi64(_mm512_mul_epu32(n, mm), 32);
      const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(n, 32), mm);
      const __m512i q = _mm512_mask_blend_epi32(__mmask16(0xAAAA), even, odd);
      if constexpr (!Fixup) return _mm512_srl_epi32(q, c2);
      return _mm512_srl_epi32(_mm512_add_epi32(q, _mm512_srl_epi32(_mm512_sub_epi32(n, q), c1)), c2);
    } else
#endif
#if XSIMD_WITH_AVX2
        if constexpr (N == 32) {
      const __m256i mm = _mm256_set1_epi32(m);
      const __m256i even = _mm256_srli_epi64(_mm256_mul_epu32(n, mm), 32);
      const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(n, 32), mm);
      const __m256i q = _mm256_blend_epi32(even, odd, 0xAA);
      if constexpr (!Fixup) return _mm256_srl_epi32(q, c2);
      return _mm256_srl_epi32(_mm256_add_epi32(q, _mm256_srl_epi32(_mm256_sub_epi32(n, q), c1)), c2);
    } else
#endif
    {
#if XSIMD_WITH_SSE4_1
      const __m128i mm = _mm_set1_epi32(m);
      const __m128i even = _mm_srli_epi64(_mm_mul_epu32(n, mm), 32);
      const __m128i odd = _mm_mul_epu32(_mm_srli_epi64(n, 32), mm);
      const __m128i q = _mm_blend_epi16(even, odd, 0xCC);
      if constexpr (!Fixup) return _mm_srl_epi32(q, c2);
      return _mm_srl_epi32(_mm_add_epi32(q, _mm_srl_epi32(_mm_sub_epi32(n, q), c1)), c2);
#else
      return n;  // not reached: magic_vectorized is false without SSE4.1
#endif
    }
  }
}

/// Unsigned 8-bit lanes: each half widened to 16 bits (interleaved with zeros), divided, and
/// packed back; unpack and pack pair up the same lanes of each 128-bit block, so lanes keep
/// their order.
template <bool Fixup, class R>
LOOM_INLINE R unsigned_quotients_u8(R n, std::uint16_t magic, int s1, int s2) {
  [[maybe_unused]] constexpr std::size_t N = sizeof(R);
#if XSIMD_WITH_AVX512BW
  if constexpr (N == 64) {
    const __m512i z = _mm512_setzero_si512();
    const __m512i lo = unsigned_quotients<Fixup, std::uint16_t>(_mm512_unpacklo_epi8(n, z), magic, s1, s2);
    const __m512i hi = unsigned_quotients<Fixup, std::uint16_t>(_mm512_unpackhi_epi8(n, z), magic, s1, s2);
    return _mm512_packus_epi16(lo, hi);
  } else
#endif
#if XSIMD_WITH_AVX2
      if constexpr (N == 32) {
    const __m256i z = _mm256_setzero_si256();
    const __m256i lo = unsigned_quotients<Fixup, std::uint16_t>(_mm256_unpacklo_epi8(n, z), magic, s1, s2);
    const __m256i hi = unsigned_quotients<Fixup, std::uint16_t>(_mm256_unpackhi_epi8(n, z), magic, s1, s2);
    return _mm256_packus_epi16(lo, hi);
  } else
#endif
  {
    const __m128i z = _mm_setzero_si128();
    const __m128i lo = unsigned_quotients<Fixup, std::uint16_t>(_mm_unpacklo_epi8(n, z), magic, s1, s2);
    const __m128i hi = unsigned_quotients<Fixup, std::uint16_t>(_mm_unpackhi_epi8(n, z), magic, s1, s2);
    return _mm_packus_epi16(lo, hi);
  }
}

/// One register (a batch P) divided by dv.
template <bool Fixup, class T, class P>
LOOM_INLINE P divide_part(const P& n, const divisor<T>& dv) {
  using U = std::make_unsigned_t<T>;
  using A = typename P::arch_type;
  using UB = xsimd::batch<U, A>;
  // The magnitudes, as unsigned lanes (|lowest| = 2^(N-1) is representable there).
  const UB a = [&] {
    if constexpr (std::is_signed_v<T>) return xsimd::bitwise_cast<UB>(xsimd::abs(n));
    else return n;
  }();
  const auto r = cvt::bits(a);
  UB q;
  if constexpr (sizeof(T) == 1) q = cvt::as_batch<UB>(unsigned_quotients_u8<Fixup>(r, dv.magic, dv.shift1, dv.shift2));
  else q = cvt::as_batch<UB>(unsigned_quotients<Fixup, typename divisor<T>::C>(r, dv.magic, dv.shift1, dv.shift2));
  if constexpr (std::is_signed_v<T>) {
    // Negative where exactly one of n and d is.
    const auto neg = dv.negative ? (n >= P(T(0))) : (n < P(T(0)));
    const P sq = xsimd::bitwise_cast<P>(q);
    return simd::select(neg, P(T(0)) - sq, sq);
  } else {
    return q;
  }
}
}  // namespace detail

/// n / d in every lane, d fixed (see the top of this file).
template <class T, class V>
LOOM_INLINE V divide(const V& n, const divisor<T>& dv) {
  static_assert(std::is_same_v<typename V::value_type, T>);
  using P = cvt::part_t<V>;
  if constexpr (detail::magic_vectorized<T, sizeof(P)>) {
    // One test per vector (the same way every time: predicted), not a fixup on every divisor.
    if (dv.fixup) return per_part([&](const auto& p) { return detail::divide_part<true>(p, dv); }, n);
    return per_part([&](const auto& p) { return detail::divide_part<false>(p, dv); }, n);
  } else {
    alignas(64) T buf[V::size];
    n.store_aligned(buf);
    for (std::size_t l = 0; l < V::size; ++l) buf[l] = dv.divide(buf[l]);
    return V::load_aligned(buf);
  }
}

/// n / d lane by lane (see the top of this file).
template <class V>
LOOM_INLINE V divide(const V& n, const V& d) {
  using T = typename V::value_type;
  static_assert(std::is_integral_v<T>);
  constexpr std::size_t W = V::size;
  if constexpr (sizeof(T) <= 2) {
    // A division by zero gives ±inf or NaN, which cvttps2dq turns into 0x80000000, whose low 8 or
    // 16 bits are 0: loom's n / 0.
    const auto q = convert<float>(n) / convert<float>(d);
    return convert<T>(convert<std::int32_t>(q));
  } else if constexpr (sizeof(T) == 4) {
    const auto q = convert<double>(n) / convert<double>(d);
    const V r = convert<T>(q);  // lowest / -1 = 2^31 converts to 0x80000000: it wraps
    return simd::select(d == V(T(0)), V(T(0)), r);
  } else {
    alignas(64) T a[W], b[W];
    n.store_aligned(a);
    d.store_aligned(b);
    for (std::size_t l = 0; l < W; ++l) a[l] = divide_scalar(a[l], b[l]);
    return V::load_aligned(a);
  }
}

}  // namespace loom::simd
