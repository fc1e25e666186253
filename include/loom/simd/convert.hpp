// SPDX-License-Identifier: MIT
// loom/simd/convert.hpp — element type conversions of W lanes (simd::vec<T, W>) between the
// integer types of 8 to 64 bits, float and double: convert<To> (C++'s static_cast, lane by lane)
// and saturate<To> (clamped to To's range first), and their scalar forms, which give the same
// results. Lanes keep their order and their count: W uint8 widen to W uint32 in four times the
// registers, W uint32 narrow to W uint8 in a quarter.
//
// The instructions: sign or zero extension (vpmovsx/vpmovzx), truncation (AVX-512's vpmov*,
// elsewhere a mask and an unsigned pack), saturation (packs/packus, then a permutation of the
// 128-bit blocks, where whole registers pack into one: 2 or 4 uint32 into one of uint16 or uint8;
// else AVX-512's vpmovs*/vpmovus*), and the float conversions (cvt(t)dq2ps, cvt(t)pd2dq,
// cvtps2pd...). The ISA of each step follows the register it works on: 64-byte registers use
// AVX-512F (BW for 8/16-bit lanes), 32-byte AVX2, 16-byte SSE4.1. A step the target has no
// instructions for (64-bit integers to and from floating point without AVX-512DQ, SSE2-only
// builds) converts lane by lane through memory: correct, slow.
//
// Semantics (the same in scalar and vector code):
//  - integer to integer: two's complement wrap-around (narrowing keeps the low bits; widening
//    extends by the source's sign), as static_cast;
//  - floating point to integer: truncation toward zero. A value whose truncation does not fit To,
//    and NaN, are undefined behaviour, as in C++: vector code gives an unspecified value (no trap),
//    scalar code is static_cast (which clang's -fsanitize=undefined reports). saturate<To> is
//    defined for every input;
//  - integer to floating point: rounded to nearest (exact for integers of up to 24 / 53 bits);
//  - saturate<To>: the value clamped to [lowest, max] of To, then converted. To an integer, ±inf
//    clamp like any value and NaN gives 0; to a floating-point To, only finite values clamp (a
//    double beyond float's range gives ±FLT_MAX), ±inf and NaN stay what they are.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "lanes.hpp"

namespace loom::simd {

template <class B>
using vec_bool = typename B::batch_bool_type;

// ---------------------------------------------------------------------------------------------
// Scalar forms.
// ---------------------------------------------------------------------------------------------

/// static_cast<To>(x), named for symmetry with saturate_scalar.
template <class To, class From>
LOOM_INLINE constexpr To convert_scalar(From x) {
  return static_cast<To>(x);
}

/// x clamped to To's range, then converted; NaN to an integer gives 0.
template <class To, class From>
LOOM_INLINE To saturate_scalar(From x) {
  if constexpr (std::is_same_v<To, From> || (std::is_integral_v<From> && std::is_floating_point_v<To>)) {
    return static_cast<To>(x);
  } else if constexpr (std::is_integral_v<From>) {  // integer to integer
    if (std::cmp_less(x, std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (std::cmp_greater(x, std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else if constexpr (std::is_integral_v<To>) {  // floating point to integer
    if (!(x == x)) return To(0);
    // lowest() is -2^k or 0, exact in From; max() + 1 is 2^k: max() converts exactly (then + 1 is
    // exact) or, when it has more bits than From's significand, rounds up to 2^k (then + 1 is lost).
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::lowest());
    constexpr From above = static_cast<From>(std::numeric_limits<To>::max()) + From(1);
    if (x <= lo) return std::numeric_limits<To>::lowest();
    if (x >= above) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else if constexpr (sizeof(To) < sizeof(From)) {  // double to float: NaN and ±inf stay
    const From m = static_cast<From>(std::numeric_limits<To>::max());
    if (std::isinf(x)) return static_cast<To>(x);
    return static_cast<To>(x < -m ? -m : x > m ? m : x);
  } else {
    return static_cast<To>(x);
  }
}

namespace cvt {

// ---------------------------------------------------------------------------------------------
// Registers as bits: integer register types by size, casts to and from the float types.
// ---------------------------------------------------------------------------------------------
template <std::size_t N>
struct ireg_t {
  using type = __m128i;
};
#if XSIMD_WITH_AVX
template <>
struct ireg_t<32> {
  using type = __m256i;
};
#endif
#if XSIMD_WITH_AVX512F
template <>
struct ireg_t<64> {
  using type = __m512i;
};
#endif
template <std::size_t N>
using ireg = typename ireg_t<N>::type;

// (Overloads, not std::is_same on the register types: GCC warns that a template argument drops
// their attributes.)
LOOM_INLINE __m128i to_int(__m128i r) { return r; }
LOOM_INLINE __m128i to_int(__m128 r) { return _mm_castps_si128(r); }
LOOM_INLINE __m128i to_int(__m128d r) { return _mm_castpd_si128(r); }
LOOM_INLINE void from_int(__m128i r, __m128i& out) { out = r; }
LOOM_INLINE void from_int(__m128i r, __m128& out) { out = _mm_castsi128_ps(r); }
LOOM_INLINE void from_int(__m128i r, __m128d& out) { out = _mm_castsi128_pd(r); }
#if XSIMD_WITH_AVX
LOOM_INLINE __m256i to_int(__m256i r) { return r; }
LOOM_INLINE __m256i to_int(__m256 r) { return _mm256_castps_si256(r); }
LOOM_INLINE __m256i to_int(__m256d r) { return _mm256_castpd_si256(r); }
LOOM_INLINE void from_int(__m256i r, __m256i& out) { out = r; }
LOOM_INLINE void from_int(__m256i r, __m256& out) { out = _mm256_castsi256_ps(r); }
LOOM_INLINE void from_int(__m256i r, __m256d& out) { out = _mm256_castsi256_pd(r); }
#endif
#if XSIMD_WITH_AVX512F
LOOM_INLINE __m512i to_int(__m512i r) { return r; }
LOOM_INLINE __m512i to_int(__m512 r) { return _mm512_castps_si512(r); }
LOOM_INLINE __m512i to_int(__m512d r) { return _mm512_castpd_si512(r); }
LOOM_INLINE void from_int(__m512i r, __m512i& out) { out = r; }
LOOM_INLINE void from_int(__m512i r, __m512& out) { out = _mm512_castsi512_ps(r); }
LOOM_INLINE void from_int(__m512i r, __m512d& out) { out = _mm512_castsi512_pd(r); }
#endif

/// A batch's register as an integer register.
template <class B>
LOOM_INLINE auto bits(const B& b) {
  return to_int(static_cast<typename B::register_type>(b));
}
/// The batch B holding a register (integer or float, of B's size), or another batch's bits.
template <class B, class R>
LOOM_INLINE B as_batch(const R& r) {
  typename B::register_type out;
  if constexpr (requires { typename R::register_type; }) from_int(bits(r), out);  // a batch
  else from_int(to_int(r), out);
  return B(out);
}

// ---- Parts of a vec: the batch itself, or a register of lanes. ----
template <std::size_t J, class V>
LOOM_INLINE const auto& part(const V& v) {
  if constexpr (is_lanes<V>) return v.part[J];
  else return v;
}
template <std::size_t J, class V, class P>
LOOM_INLINE void set_part(V& v, const P& p) {
  if constexpr (is_lanes<V>) v.part[J] = p;
  else v = p;
}
template <class V>
using part_t = std::remove_cvref_t<decltype(part<0>(std::declval<const V&>()))>;

/// Bytes [Off, Off + C) of register r, as the low bytes of a C-byte register (16 if C < 16).
template <std::size_t C, std::size_t Off, class R>
LOOM_INLINE auto chunk(R r) {
  constexpr std::size_t N = sizeof(R);
  static_assert(Off % C == 0 && Off + C <= N, "loom internal: a chunk lies within its register");
  if constexpr (C >= N) {
    return r;
#if XSIMD_WITH_AVX512F
  } else if constexpr (N == 64) {
    if constexpr (C == 32) {
      if constexpr (Off == 0) return _mm512_castsi512_si256(r);
      else return _mm512_extracti64x4_epi64(r, 1);
    } else {
      if constexpr (Off < 16) return chunk<C, Off>(_mm512_castsi512_si128(r));
      else return chunk<C, Off % 16>(_mm512_extracti32x4_epi32(r, Off / 16));
    }
#endif
#if XSIMD_WITH_AVX2
  } else if constexpr (N == 32) {
    if constexpr (Off < 16) return chunk<C, Off>(_mm256_castsi256_si128(r));
    else return chunk<C, Off % 16>(_mm256_extracti128_si256(r, 1));
#endif
  } else {
    if constexpr (Off == 0) return r;
    else return _mm_srli_si128(r, Off);
  }
}

/// The C-byte contents of lo then hi as one register of 2C bytes (16 if 2C < 16).
template <std::size_t C, class R>
LOOM_INLINE auto join(R lo, R hi) {
  if constexpr (C == 1) return _mm_unpacklo_epi8(lo, hi);
  else if constexpr (C == 2) return _mm_unpacklo_epi16(lo, hi);
  else if constexpr (C == 4) return _mm_unpacklo_epi32(lo, hi);
  else if constexpr (C == 8) return _mm_unpacklo_epi64(lo, hi);
#if XSIMD_WITH_AVX2
  else if constexpr (C == 16) return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
#endif
#if XSIMD_WITH_AVX512F
  else if constexpr (C == 32) return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
#endif
}

/// piece(First), ..., piece(First + M - 1) (C bytes each) one after the other.
template <std::size_t C, std::size_t First, std::size_t M, class F>
LOOM_INLINE auto concat(const F& piece) {
  if constexpr (M == 1) return piece(std::integral_constant<std::size_t, First>{});
  else return join<C * M / 2>(concat<C, First, M / 2>(piece), concat<C, First + M / 2, M / 2>(piece));
}

// ---------------------------------------------------------------------------------------------
// The three shapes of a step: same size (part by part), widening (each output register from a
// chunk of an input register), narrowing (each output register from several input registers).
// A kernel is a struct with `ok<N>` (the target has its instructions for N-byte registers),
// `apply`, and for a narrowing `saturates` (what the lane-by-lane fallback must do instead).
// ---------------------------------------------------------------------------------------------

/// Lane by lane through memory: any conversion, any target.
template <class To, bool Saturate, class V>
LOOM_INLINE vec<To, V::size> by_lanes(const V& v) {
  using From = typename V::value_type;
  constexpr std::size_t W = V::size;
  alignas(64) From in[W];
  alignas(64) To out[W];
  v.store_aligned(in);
  for (std::size_t l = 0; l < W; ++l) out[l] = Saturate ? saturate_scalar<To>(in[l]) : convert_scalar<To>(in[l]);
  return vec<To, W>::load_aligned(out);
}

template <class To, class K, class V>
LOOM_INLINE vec<To, V::size> same_size(const V& v) {
  using PO = typename lane_layout<To, V::size>::part;
  if constexpr (!K::template ok<sizeof(part_t<V>)>) {
    return by_lanes<To, false>(v);
  } else {
    return per_part([](const auto& p) { return as_batch<PO>(K::apply(p)); }, v);
  }
}

template <class To, class K, class V>
LOOM_INLINE vec<To, V::size> widen(const V& v) {
  using From = typename V::value_type;
  constexpr std::size_t W = V::size;
  using LI = lane_layout<From, W>;
  using LO = lane_layout<To, W>;
  if constexpr (!K::template ok<LO::part_bytes>) {
    return by_lanes<To, false>(v);
  } else {
    constexpr std::size_t c = LO::used_bytes / (sizeof(To) / sizeof(From));  // input bytes per output register
    vec<To, W> out;
    [&]<std::size_t... J>(std::index_sequence<J...>) LOOM_LAMBDA_INLINE {
      (set_part<J>(out, as_batch<typename LO::part>(K::template apply<LO::part_bytes>(
                            chunk<c, (J * c) % LI::part_bytes>(bits(part<(J * c) / LI::part_bytes>(v)))))),
       ...);
    }(std::make_index_sequence<LO::parts>{});
    return out;
  }
}

/// K::pack of the registers First, First + 1, ... of v.
template <class K, std::size_t First, class V, std::size_t... I>
LOOM_INLINE auto pack_registers(const V& v, std::index_sequence<I...>) {
  return K::pack(bits(part<First + I>(v))...);
}

template <class To, class K, class V>
LOOM_INLINE vec<To, V::size> narrow(const V& v) {
  using From = typename V::value_type;
  constexpr std::size_t W = V::size;
  using LI = lane_layout<From, W>;
  using LO = lane_layout<To, W>;
  if constexpr (!K::template ok<LI::part_bytes>) {
    return by_lanes<To, K::saturates>(v);
  } else {
    constexpr std::size_t piece = LI::used_bytes / (sizeof(From) / sizeof(To));  // bytes per input register
    constexpr std::size_t m = LO::used_bytes / piece;                            // input registers per output
    vec<To, W> out;
    if constexpr (requires { K::template packs<LI::part_bytes, m>; }) {
      if constexpr (K::template packs<LI::part_bytes, m>) {  // m whole registers packed into one
        [&]<std::size_t... J>(std::index_sequence<J...>) LOOM_LAMBDA_INLINE {
          (set_part<J>(out, as_batch<typename LO::part>(pack_registers<K, J * m>(v, std::make_index_sequence<m>{}))), ...);
        }(std::make_index_sequence<LO::parts>{});
        return out;
      }
    }
    [&]<std::size_t... J>(std::index_sequence<J...>) LOOM_LAMBDA_INLINE {
      (set_part<J>(out, as_batch<typename LO::part>(concat<piece, J * m, m>([&](auto i) LOOM_LAMBDA_INLINE {
         return to_int(K::template apply<LI::part_bytes>(bits(part<decltype(i)::value>(v))));
       }))),
       ...);
    }(std::make_index_sequence<LO::parts>{});
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels. `ok<N>`: registers of N bytes (the output's for a widening, the input's otherwise).
// ---------------------------------------------------------------------------------------------
inline constexpr bool has_avx512f = XSIMD_WITH_AVX512F;
inline constexpr bool has_avx512bw = XSIMD_WITH_AVX512BW;
inline constexpr bool has_avx512dq = XSIMD_WITH_AVX512DQ;
#if defined(__AVX512VL__)
inline constexpr bool has_avx512vl = true;
#else
inline constexpr bool has_avx512vl = false;
#endif
inline constexpr bool has_avx2 = XSIMD_WITH_AVX2;
inline constexpr bool has_sse41 = XSIMD_WITH_SSE4_1;

/// Sign or zero extension (by From's signedness) of To / From lanes per input lane.
template <class From, class To>
struct extend {
  static constexpr int a = int(sizeof(From) * 8), b = int(sizeof(To) * 8);
  template <std::size_t N>
  static constexpr bool ok = N == 64 ? has_avx512f && (a != 8 || b != 16 || has_avx512bw) : N == 32 ? has_avx2 : has_sse41;
  template <std::size_t N, class R>
  static LOOM_INLINE auto apply([[maybe_unused]] R x) {  // unused without SSE4.1: ok<16> is false
    [[maybe_unused]] constexpr bool s = std::is_signed_v<From>;
#define LOOM_EXTEND_CASE(P, A, B)                          \
  if constexpr (a == A && b == B) {                        \
    if constexpr (s) return P##_cvtepi##A##_epi##B(x);     \
    else return P##_cvtepu##A##_epi##B(x);                 \
  }
#define LOOM_EXTEND_ALL(P)                                                                            \
  LOOM_EXTEND_CASE(P, 8, 16) else LOOM_EXTEND_CASE(P, 8, 32) else LOOM_EXTEND_CASE(P, 8, 64) else LOOM_EXTEND_CASE( \
      P, 16, 32) else LOOM_EXTEND_CASE(P, 16, 64) else LOOM_EXTEND_CASE(P, 32, 64)
#if XSIMD_WITH_AVX512F
    if constexpr (N == 64) {
      LOOM_EXTEND_ALL(_mm512)
    } else
#endif
#if XSIMD_WITH_AVX2
        if constexpr (N == 32) {
      LOOM_EXTEND_ALL(_mm256)
    } else
#endif
    {
#if XSIMD_WITH_SSE4_1
      LOOM_EXTEND_ALL(_mm)
#endif
    }
#undef LOOM_EXTEND_ALL
#undef LOOM_EXTEND_CASE
  }
};

// Packs of two registers, by element width of the input, and the permutations that put their
// 128-bit blocks back in order: a 32- or 64-byte pack works within each block, so the blocks of
// pack(a, b) alternate a, b (and of pack(pack(a, b), pack(c, d)), a, b, c, d).
LOOM_INLINE __m128i packs32(__m128i a, __m128i b) { return _mm_packs_epi32(a, b); }
LOOM_INLINE __m128i packs16(__m128i a, __m128i b) { return _mm_packs_epi16(a, b); }
LOOM_INLINE __m128i packus16(__m128i a, __m128i b) { return _mm_packus_epi16(a, b); }
LOOM_INLINE __m128i order2(__m128i x) { return x; }
LOOM_INLINE __m128i order4(__m128i x) { return x; }
LOOM_INLINE __m128i mask_low(__m128i x, int bits) { return _mm_and_si128(x, bits == 8 ? _mm_set1_epi32(0xFF) : _mm_set1_epi32(0xFFFF)); }
LOOM_INLINE __m128i mask_low8_of16(__m128i x) { return _mm_and_si128(x, _mm_set1_epi16(0xFF)); }
#if XSIMD_WITH_SSE4_1
LOOM_INLINE __m128i packus32(__m128i a, __m128i b) { return _mm_packus_epi32(a, b); }
#endif
#if XSIMD_WITH_AVX2
LOOM_INLINE __m256i packs32(__m256i a, __m256i b) { return _mm256_packs_epi32(a, b); }
LOOM_INLINE __m256i packus32(__m256i a, __m256i b) { return _mm256_packus_epi32(a, b); }
LOOM_INLINE __m256i packs16(__m256i a, __m256i b) { return _mm256_packs_epi16(a, b); }
LOOM_INLINE __m256i packus16(__m256i a, __m256i b) { return _mm256_packus_epi16(a, b); }
LOOM_INLINE __m256i order2(__m256i x) { return _mm256_permute4x64_epi64(x, _MM_SHUFFLE(3, 1, 2, 0)); }
LOOM_INLINE __m256i order4(__m256i x) { return _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)); }
LOOM_INLINE __m256i mask_low(__m256i x, int bits) {
  return _mm256_and_si256(x, bits == 8 ? _mm256_set1_epi32(0xFF) : _mm256_set1_epi32(0xFFFF));
}
LOOM_INLINE __m256i mask_low8_of16(__m256i x) { return _mm256_and_si256(x, _mm256_set1_epi16(0xFF)); }
#endif
#if XSIMD_WITH_AVX512BW
LOOM_INLINE __m512i packs32(__m512i a, __m512i b) { return _mm512_packs_epi32(a, b); }
LOOM_INLINE __m512i packus32(__m512i a, __m512i b) { return _mm512_packus_epi32(a, b); }
LOOM_INLINE __m512i packs16(__m512i a, __m512i b) { return _mm512_packs_epi16(a, b); }
LOOM_INLINE __m512i packus16(__m512i a, __m512i b) { return _mm512_packus_epi16(a, b); }
LOOM_INLINE __m512i order2(__m512i x) { return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), x); }
LOOM_INLINE __m512i order4(__m512i x) {
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), x);
}
#endif

/// How a narrowing treats values that do not fit To.
enum class narrowing {
  truncate,  // keep the low bits (static_cast)
  saturate,  // clamp to To's range; From must be signed
  in_range,  // every value fits To already (any instruction that keeps it will do)
};

/// Integer narrowing of From lanes to To lanes, per input register (pieces of N / (a / b) bytes).
template <class From, class To, narrowing M>
struct shrink {
  static constexpr bool saturates = M == narrowing::saturate;
  static constexpr int a = int(sizeof(From) * 8), b = int(sizeof(To) * 8);
  static_assert(M != narrowing::saturate || std::is_signed_v<From> || a == 64,
                "loom internal: saturating narrowing packs signed lanes (unsigned ones are clamped first)");
  template <std::size_t N>
  static constexpr bool ok = N == 64 ? has_avx512f && (a != 16 || has_avx512bw) : N == 32 ? has_avx2 : has_sse41;

  /// Whether `pack` makes one N-byte register of Count = a / b whole ones: fewer instructions than
  /// narrowing each and joining the pieces (AVX2 32 -> 8 bits: 4 against 15), except a
  /// truncation on AVX-512, whose vpmov* needs no mask.
  template <std::size_t N, std::size_t Count>
  static constexpr bool packs = (a == 16 || a == 32) && Count == std::size_t(a / b) && ok<N> &&
                                (N < 64 || (has_avx512bw && M != narrowing::truncate));
  template <class R>
  static LOOM_INLINE R pack(R x0, R x1) {  // 32 -> 16 or 16 -> 8 bits
    constexpr bool signed_pack = M != narrowing::truncate && std::is_signed_v<To>;
    if constexpr (a == 16) {
      if constexpr (M == narrowing::truncate) return order2(packus16(mask_low8_of16(x0), mask_low8_of16(x1)));
      else return order2(signed_pack ? packs16(x0, x1) : packus16(x0, x1));
    } else {
      if constexpr (M == narrowing::truncate) return order2(packus32(mask_low(x0, 16), mask_low(x1, 16)));
      else return order2(signed_pack ? packs32(x0, x1) : packus32(x0, x1));
    }
  }
  template <class R>
  static LOOM_INLINE R pack(R x0, R x1, R x2, R x3) {  // 32 -> 8 bits, through 16 (signed saturation keeps 8-bit clamps)
    constexpr bool signed_pack = M != narrowing::truncate && std::is_signed_v<To>;
    if constexpr (M == narrowing::truncate) {
      const R ab = packus32(mask_low(x0, 8), mask_low(x1, 8)), cd = packus32(mask_low(x2, 8), mask_low(x3, 8));
      return order4(packus16(ab, cd));
    } else {
      const R ab = packs32(x0, x1), cd = packs32(x2, x3);
      return order4(signed_pack ? packs16(ab, cd) : packus16(ab, cd));
    }
  }

  template <std::size_t N, class R>
  static LOOM_INLINE auto apply(R x) {
#if XSIMD_WITH_AVX512F
    if constexpr (N == 64) {
      // vpmov* truncates, vpmovs* saturates signed to signed, vpmovus* unsigned to unsigned.
      constexpr bool sat = M == narrowing::saturate;
      constexpr bool to_signed = std::is_signed_v<To>;
      [[maybe_unused]] const __m512i zero = _mm512_setzero_si512();
#define LOOM_SHRINK512(A, B, MAXNS)                                                               \
  if constexpr (a == A && b == B) {                                                              \
    if constexpr (!sat) return _mm512_cvtepi##A##_epi##B(x);                                     \
    else if constexpr (to_signed) return _mm512_cvtsepi##A##_epi##B(x);                          \
    else return _mm512_cvtusepi##A##_epi##B(MAXNS(x, zero));                                     \
  }
      LOOM_SHRINK512(16, 8, _mm512_max_epi16)
      else LOOM_SHRINK512(32, 8, _mm512_max_epi32) else LOOM_SHRINK512(32, 16, _mm512_max_epi32) else LOOM_SHRINK512(
          64, 8, _mm512_max_epi64) else LOOM_SHRINK512(64, 16, _mm512_max_epi64) else LOOM_SHRINK512(64, 32, _mm512_max_epi64)
#undef LOOM_SHRINK512
    } else
#endif
    {
      // 32 or 16 bytes: 64-bit lanes keep their low halves (a shuffle), then packs: a pack of
      // signed lanes saturates (packs to signed, packus to unsigned), so truncation masks first.
      if constexpr (a == 64) {
        __m128i lo32;  // the low 32 bits of each lane
#if XSIMD_WITH_AVX2
        if constexpr (N == 32)
          lo32 = _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(_mm256_castsi256_si128(x)),
                                                 _mm_castsi128_ps(_mm256_extracti128_si256(x, 1)), _MM_SHUFFLE(2, 0, 2, 0)));
        else
#endif
          lo32 = _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 0, 2, 0));
        if constexpr (b == 32) return lo32;
        else return shrink<std::int32_t, To, narrowing::truncate>::template apply<16>(lo32);
      } else {
        __m128i lo, hi;
#if XSIMD_WITH_AVX2
        if constexpr (N == 32) {
          if constexpr (M == narrowing::truncate)
            x = _mm256_and_si256(x, a == 16 ? _mm256_set1_epi16(0xFF) : _mm256_set1_epi32(b == 8 ? 0xFF : 0xFFFF));
          lo = _mm256_castsi256_si128(x);
          hi = _mm256_extracti128_si256(x, 1);
        } else
#endif
        {
          if constexpr (M == narrowing::truncate)
            x = _mm_and_si128(x, a == 16 ? _mm_set1_epi16(0xFF) : _mm_set1_epi32(b == 8 ? 0xFF : 0xFFFF));
          lo = x;
          hi = x;
        }
        constexpr bool signed_pack = M != narrowing::truncate && std::is_signed_v<To>;
        if constexpr (a == 16) {
          return signed_pack ? _mm_packs_epi16(lo, hi) : _mm_packus_epi16(lo, hi);
        } else {
#if XSIMD_WITH_SSE4_1
          if constexpr (b == 16) {
            return signed_pack ? _mm_packs_epi32(lo, hi) : _mm_packus_epi32(lo, hi);
          } else {  // 32 to 8: to 16 bits with signed saturation (keeps every value's 8-bit clamp)
            const __m128i w = M == narrowing::truncate ? _mm_packus_epi32(lo, hi) : _mm_packs_epi32(lo, hi);
            return signed_pack ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
          }
#else
          return lo;  // not reached: ok<16> needs SSE4.1 (packusdw), the lanes convert one by one
#endif
        }
      }
    }
  }
};

// ---- Floating point. ----

/// int32/uint32 <-> float and int64/uint64 <-> double, register for register.
template <class From, class To>
struct same_size_float {
  static constexpr bool int64 = sizeof(From) == 8;
  static constexpr bool from_float = std::is_floating_point_v<From>;
  using I = std::conditional_t<from_float, To, From>;
  template <std::size_t N>
  static constexpr bool ok = !int64 || (has_avx512dq && (N == 64 || has_avx512vl)) ||
                             (!from_float && std::is_signed_v<I> && N <= 32 && (N == 16 || has_avx2));
  template <class P>
  static LOOM_INLINE auto apply(const P& p) {
    [[maybe_unused]] constexpr std::size_t N = sizeof(P);
    if constexpr (!int64) {
      return xsimd::batch_cast<To>(p);  // cvtdq2ps, cvttps2dq; uint32 exactly (xsimd emulates it)
    } else {
#if XSIMD_WITH_AVX512DQ
      constexpr bool u = std::is_unsigned_v<I>;
      if constexpr (N == 64) {
        if constexpr (from_float) return u ? _mm512_cvttpd_epu64(p) : _mm512_cvttpd_epi64(p);
        else return u ? _mm512_cvtepu64_pd(p) : _mm512_cvtepi64_pd(p);
      }
#if defined(__AVX512VL__)
      else if constexpr (N == 32) {
        if constexpr (from_float) return u ? _mm256_cvttpd_epu64(p) : _mm256_cvttpd_epi64(p);
        else return u ? _mm256_cvtepu64_pd(p) : _mm256_cvtepi64_pd(p);
      } else {
        if constexpr (from_float) return u ? _mm_cvttpd_epu64(p) : _mm_cvttpd_epi64(p);
        else return u ? _mm_cvtepu64_pd(p) : _mm_cvtepi64_pd(p);
      }
#else
      else return xsimd::batch_cast<To>(p);
#endif
#else
      return xsimd::batch_cast<To>(p);  // int64 -> double, exactly rounded (xsimd's magic numbers)
#endif
    }
  }
};

/// float -> double, int32/uint32 -> double, float -> int64/uint64 (a register of N output bytes
/// from the low N / 2 bytes of x).
template <class From, class To>
struct widen_float {
  static constexpr bool to_int64 = std::is_integral_v<To>;
  template <std::size_t N>
  static constexpr bool ok = to_int64 ? has_avx512dq && (N == 64 || has_avx512vl) : N == 64 ? has_avx512f : N == 32 ? has_avx2 : true;
  template <std::size_t N, class R>
  static LOOM_INLINE auto apply(R x) {
    if constexpr (std::is_same_v<From, float> && std::is_same_v<To, double>) {
#if XSIMD_WITH_AVX512F
      if constexpr (N == 64) return _mm512_cvtps_pd(_mm256_castsi256_ps(x));
      else
#endif
#if XSIMD_WITH_AVX2
          if constexpr (N == 32) return _mm256_cvtps_pd(_mm_castsi128_ps(x));
      else
#endif
        return _mm_cvtps_pd(_mm_castsi128_ps(x));
    } else if constexpr (std::is_same_v<From, std::int32_t>) {
#if XSIMD_WITH_AVX512F
      if constexpr (N == 64) return _mm512_cvtepi32_pd(x);
      else
#endif
#if XSIMD_WITH_AVX2
          if constexpr (N == 32) return _mm256_cvtepi32_pd(x);
      else
#endif
        return _mm_cvtepi32_pd(x);
    } else if constexpr (std::is_same_v<From, std::uint32_t>) {
#if XSIMD_WITH_AVX512F
      if constexpr (N == 64) return _mm512_cvtepu32_pd(x);
      else
#endif
#if XSIMD_WITH_AVX2
          if constexpr (N == 32) {
        // As int32 after flipping the top bit, then 2^31 back: both steps exact.
        return _mm256_add_pd(_mm256_cvtepi32_pd(_mm_xor_si128(x, _mm_set1_epi32(INT32_MIN))), _mm256_set1_pd(2147483648.0));
      } else
#endif
        return _mm_add_pd(_mm_cvtepi32_pd(_mm_xor_si128(x, _mm_set1_epi32(INT32_MIN))), _mm_set1_pd(2147483648.0));
    } else {  // float -> int64 / uint64
#if XSIMD_WITH_AVX512DQ
      constexpr bool u = std::is_unsigned_v<To>;
      if constexpr (N == 64) return u ? _mm512_cvttps_epu64(_mm256_castsi256_ps(x)) : _mm512_cvttps_epi64(_mm256_castsi256_ps(x));
#if defined(__AVX512VL__)
      else if constexpr (N == 32) return u ? _mm256_cvttps_epu64(_mm_castsi128_ps(x)) : _mm256_cvttps_epi64(_mm_castsi128_ps(x));
      else return u ? _mm_cvttps_epu64(_mm_castsi128_ps(x)) : _mm_cvttps_epi64(_mm_castsi128_ps(x));
#endif
#endif
    }
  }
};

/// double -> float, double -> int32/uint32, int64/uint64 -> float (N input bytes to N / 2).
template <class From, class To>
struct narrow_float {
  static constexpr bool saturates = false;
  static constexpr bool from_int64 = std::is_integral_v<From>;
  template <std::size_t N>
  static constexpr bool ok = from_int64 ? has_avx512dq && (N == 64 || has_avx512vl) : N == 64 ? has_avx512f : N == 32 ? has_avx2 : true;
  template <std::size_t N, class R>
  static LOOM_INLINE auto apply(R x) {
    if constexpr (std::is_same_v<To, float> && std::is_same_v<From, double>) {
#if XSIMD_WITH_AVX512F
      if constexpr (N == 64) return _mm512_cvtpd_ps(_mm512_castsi512_pd(x));
      else
#endif
#if XSIMD_WITH_AVX2
          if constexpr (N == 32) return _mm256_cvtpd_ps(_mm256_castsi256_pd(x));
      else
#endif
        return _mm_cvtpd_ps(_mm_castsi128_pd(x));
    } else if constexpr (std::is_same_v<To, std::int32_t>) {
#if XSIMD_WITH_AVX512F
      if constexpr (N == 64) return _mm512_cvttpd_epi32(_mm512_castsi512_pd(x));
      else
#endif
#if XSIMD_WITH_AVX2
          if constexpr (N == 32) return _mm256_cvttpd_epi32(_mm256_castsi256_pd(x));
      else
#endif
        return _mm_cvttpd_epi32(_mm_castsi128_pd(x));
    } else if constexpr (std::is_same_v<To, std::uint32_t>) {
#if XSIMD_WITH_AVX512F
      if constexpr (N == 64) return _mm512_cvttpd_epu32(_mm512_castsi512_pd(x));
      else
#endif
      {
        // Values from 2^31 convert as x - 2^31 with the top bit put back; cvttpd2dq gives
        // 0x80000000 exactly for them (out of int32's range), which picks that lane.
        __m128i direct, shifted;
#if XSIMD_WITH_AVX2
        if constexpr (N == 32) {
          const __m256d d = _mm256_castsi256_pd(x);
          direct = _mm256_cvttpd_epi32(d);
          shifted = _mm256_cvttpd_epi32(_mm256_sub_pd(d, _mm256_set1_pd(2147483648.0)));
        } else
#endif
        {
          const __m128d d = _mm_castsi128_pd(x);
          direct = _mm_cvttpd_epi32(d);
          shifted = _mm_cvttpd_epi32(_mm_sub_pd(d, _mm_set1_pd(2147483648.0)));
        }
        const __m128i top = _mm_set1_epi32(INT32_MIN);
        const __m128i big = _mm_cmpeq_epi32(direct, top);
        return _mm_or_si128(_mm_andnot_si128(big, direct), _mm_and_si128(big, _mm_xor_si128(shifted, top)));
      }
    } else {  // int64 / uint64 -> float
#if XSIMD_WITH_AVX512DQ
      constexpr bool u = std::is_unsigned_v<From>;
      if constexpr (N == 64) return u ? _mm512_cvtepu64_ps(x) : _mm512_cvtepi64_ps(x);
#if defined(__AVX512VL__)
      else if constexpr (N == 32) return u ? _mm256_cvtepu64_ps(x) : _mm256_cvtepi64_ps(x);
      else return u ? _mm_cvtepu64_ps(x) : _mm_cvtepi64_ps(x);
#endif
#endif
    }
  }
};

template <class T>
using int32_like = std::conditional_t<std::is_same_v<T, std::uint32_t>, std::uint32_t, std::int32_t>;

template <class To, class V>
LOOM_INLINE vec<To, V::size> cast_to(const V& v);

/// Integer to integer.
template <class To, narrowing M, class V>
LOOM_INLINE vec<To, V::size> integer(const V& v) {
  using From = typename V::value_type;
  if constexpr (sizeof(To) == sizeof(From)) {
    return per_part([](const auto& p) { return as_batch<typename lane_layout<To, V::size>::part>(bits(p)); }, v);
  } else if constexpr (sizeof(To) > sizeof(From)) {
    return widen<To, extend<From, To>>(v);
  } else {
    return narrow<To, shrink<From, To, M>>(v);
  }
}

template <class To, class V>
LOOM_INLINE vec<To, V::size> cast_to(const V& v) {
  using From = typename V::value_type;
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
    return integer<To, narrowing::truncate>(v);
  } else if constexpr (std::is_integral_v<From>) {  // to floating point
    if constexpr (sizeof(From) < 4) {
      return cast_to<To>(integer<std::int32_t, narrowing::truncate>(v));  // exact: every value fits int32
    } else if constexpr (sizeof(From) == sizeof(To)) {
      return same_size<To, same_size_float<From, To>>(v);
    } else if constexpr (sizeof(From) < sizeof(To)) {
      return widen<To, widen_float<From, To>>(v);
    } else {
      return narrow<To, narrow_float<From, To>>(v);
    }
  } else if constexpr (std::is_integral_v<To>) {  // from floating point
    if constexpr (sizeof(To) < 4) {
      // In-range values truncate to int32 and then fit To (out of range is undefined in C++).
      return integer<To, narrowing::truncate>(cast_to<std::int32_t>(v));
    } else if constexpr (sizeof(From) == sizeof(To)) {
      return same_size<To, same_size_float<From, To>>(v);
    } else if constexpr (sizeof(From) < sizeof(To)) {
      return widen<To, widen_float<From, To>>(v);
    } else {
      return narrow<To, narrow_float<From, To>>(v);
    }
  } else if constexpr (sizeof(From) < sizeof(To)) {
    return widen<To, widen_float<From, To>>(v);
  } else {
    return narrow<To, narrow_float<From, To>>(v);
  }
}

}  // namespace cvt

/// The lane mask m (of W lanes of any element type) as a mask of W lanes of T: as all-ones or
/// zero integer lanes, converted (sign extension and truncation keep both), compared with zero.
template <class T, class M>
LOOM_INLINE vec_bool<vec<T, M::size>> mask_cast(const M& m) {
  using U = typename M::batch_type::value_type;
  if constexpr (std::is_same_v<T, U>) {
    return m;
  } else if constexpr (sizeof(T) == sizeof(U)) {
    // The same register, named for T: through the same-size integer mask (bool_cast converts
    // between float and integer masks).
    return per_part(
        [](const auto& p) {
          using A = typename std::remove_cvref_t<decltype(p)>::batch_type::arch_type;
          using I = xsimd::as_integer_t<T>;
          using IB = xsimd::batch_bool<I, A>;
          IB ib;
          if constexpr (std::is_floating_point_v<U>) ib = IB(static_cast<typename IB::register_type>(xsimd::bool_cast(p)));
          else ib = IB(static_cast<typename IB::register_type>(p));
          if constexpr (std::is_floating_point_v<T>) return xsimd::bool_cast(ib);
          else return xsimd::batch_bool<T, A>(static_cast<typename xsimd::batch_bool<T, A>::register_type>(ib));
        },
        m);
  } else {
    using SU = std::make_signed_t<xsimd::as_integer_t<U>>;
    using ST = std::make_signed_t<xsimd::as_integer_t<T>>;
    const auto iv = per_part(
        [](const auto& p) {
          using A = typename std::remove_cvref_t<decltype(p)>::batch_type::arch_type;
          using IB = xsimd::batch<SU, A>;
          using SB = xsimd::batch_bool<SU, A>;
          SB sb;
          if constexpr (std::is_floating_point_v<U>) sb = SB(static_cast<typename SB::register_type>(xsimd::bool_cast(p)));
          else sb = SB(static_cast<typename SB::register_type>(p));
          return simd::select(sb, IB(SU(-1)), IB(SU(0)));
        },
        m);
    return per_part(
        [](const auto& p) {
          using P = std::remove_cvref_t<decltype(p)>;
          using A = typename P::arch_type;
          const auto nz = ~(p == P(ST(0)));
          if constexpr (std::is_floating_point_v<T>) return xsimd::bool_cast(nz);
          else return xsimd::batch_bool<T, A>(static_cast<typename xsimd::batch_bool<T, A>::register_type>(nz));
        },
        cvt::cast_to<ST>(iv));
  }
}

namespace cvt {

template <class R, class M>
LOOM_INLINE vec_bool<R> mask_to(const M& m) {
  return mask_cast<typename R::value_type>(m);
}

template <class To, class V>
LOOM_INLINE vec<To, V::size> saturate_to(const V& v) {
  using From = typename V::value_type;
  using TL = std::numeric_limits<To>;
  if constexpr (std::is_same_v<To, From> || (std::is_integral_v<From> && std::is_floating_point_v<To>)) {
    return cast_to<To>(v);
  } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
    if constexpr (sizeof(To) < sizeof(From) && sizeof(From) < 8 && std::is_signed_v<From>) {
      return integer<To, narrowing::saturate>(v);  // packs / packus, vpmovs* / vpmovus*
    } else {
      // Clamp in From (the bounds that bind are values of From), then convert exactly.
      constexpr bool lo_binds = std::cmp_greater(TL::lowest(), std::numeric_limits<From>::lowest());
      constexpr bool hi_binds = std::cmp_less(TL::max(), std::numeric_limits<From>::max());
      V c = v;
      if constexpr (lo_binds) c = simd::max(c, V(static_cast<From>(TL::lowest())));
      if constexpr (hi_binds) c = simd::min(c, V(static_cast<From>(TL::max())));
      if constexpr (sizeof(To) < sizeof(From) && sizeof(From) < 8) {
        // Unsigned, now at most To's maximum, so below From's signed maximum: packs as signed.
        return integer<To, narrowing::in_range>(integer<std::make_signed_t<From>, narrowing::truncate>(c));
      } else {
        return integer<To, narrowing::truncate>(c);
      }
    }
  } else if constexpr (std::is_integral_v<To>) {  // floating point to integer
    if constexpr (sizeof(To) == 8) {
      return by_lanes<To, true>(v);
    } else if constexpr (std::is_same_v<To, std::uint32_t>) {
      const V c = simd::max(v, V(From(0)));  // NaN -> 0: x86 max returns its second operand on NaN
      if constexpr (std::is_same_v<From, double>) {
        return cast_to<To>(simd::min(c, V(4294967295.0)));
      } else {
        const auto r = cast_to<To>(c);
        using R = std::remove_cvref_t<decltype(r)>;
        return simd::select(mask_to<R>(c >= V(4294967296.f)), R(TL::max()), r);
      }
    } else if constexpr (std::is_same_v<To, std::int32_t> && std::is_same_v<From, float>) {
      // 2^31 - 1 is not a float: convert (cvttps2dq gives INT32_MIN below -2^31), then mend the
      // lanes at or above 2^31 and the NaN ones.
      const auto r = cast_to<To>(v);
      using R = std::remove_cvref_t<decltype(r)>;
      const R hi = simd::select(mask_to<R>(v >= V(2147483648.f)), R(TL::max()), r);
      return simd::select(mask_to<R>(~(v == v)), R(0), hi);
    } else {
      // Both bounds are exact in From: clamp, zero the NaN lanes; every value then fits To.
      const V c = simd::select(~(v == v), V(From(0)),
                               simd::min(simd::max(v, V(static_cast<From>(TL::lowest()))), V(static_cast<From>(TL::max()))));
      if constexpr (sizeof(To) == 4) return cast_to<To>(c);
      else return integer<To, narrowing::in_range>(cast_to<std::int32_t>(c));
    }
  } else if constexpr (sizeof(To) < sizeof(From)) {  // double to float: NaN and ±inf stay
    // x86 max/min return their second operand when one is NaN: x last keeps it.
    const V m(static_cast<From>(TL::max()));
    const V c = simd::select(simd::abs(v) == V(std::numeric_limits<From>::infinity()), v, simd::min(m, simd::max(-m, v)));
    return cast_to<To>(c);
  } else {
    return cast_to<To>(v);
  }
}

}  // namespace cvt

/// static_cast<To> of every lane.
template <class To, class V>
LOOM_INLINE vec<To, V::size> convert(const V& v) {
  return cvt::cast_to<To>(v);
}

/// Every lane clamped to To's range, then converted (NaN to an integer gives 0).
template <class To, class V>
LOOM_INLINE vec<To, V::size> saturate(const V& v) {
  return cvt::saturate_to<To>(v);
}

}  // namespace loom::simd
