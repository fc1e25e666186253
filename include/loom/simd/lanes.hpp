// SPDX-License-Identifier: MIT
// loom/simd/lanes.hpp — W lanes of T for every W and T, not only those that fill one register.
// A vectorized loop has one lane count W, fixed by its output's element type; a tree that mixes
// element sizes (a uint16 image summed in uint32, a uint8 image scaled in float) evaluates each
// node as W lanes of its own type. vec<T, W> is the xsimd batch when one register holds exactly W
// lanes of T, else lanes<T, W>: several registers (W uint32 when W uint8 fill one), or the low
// bytes of one 16-byte register (W uint8 when W double fill one). lanes has the members and
// operators loom's nodes use on batches; everything else goes part by part (per_part).
#pragma once
#include <array>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

#include "../core/config.hpp"
#include "arch.hpp"
#include "fma.hpp"

namespace loom::simd {

namespace detail {
template <std::size_t Bytes>
inline constexpr bool has_register = !std::is_same_v<typename arch_for_bytes<Bytes>::type, no_arch>;
/// The widest register loom's batches use (64 with AVX-512, 32 with AVX2, else 16 bytes).
inline constexpr std::size_t widest_register = has_register<64> ? 64 : has_register<32> ? 32 : 16;
}  // namespace detail

/// How W lanes of T sit in registers: `parts` registers of `part_bytes` each, of which the first
/// `used_bytes` hold lanes (less than the register only when all W lanes take under 16 bytes).
template <class T, std::size_t W>
struct lane_layout {
  static constexpr std::size_t bytes = W * sizeof(T);
  static constexpr std::size_t part_bytes =
      bytes <= 16 ? 16 : bytes < detail::widest_register ? bytes : detail::widest_register;
  static constexpr std::size_t parts = bytes <= part_bytes ? 1 : bytes / part_bytes;
  static constexpr std::size_t used_bytes = bytes < part_bytes ? bytes : part_bytes;
  using part = xsimd::batch<T, typename detail::arch_for_bytes<part_bytes>::type>;
  static_assert(W > 0 && (W & (W - 1)) == 0, "loom internal: a lane count is a power of two");
};

template <class T, std::size_t W>
struct lanes;
template <class T, std::size_t W>
struct lanes_bool;

template <class V>
inline constexpr bool is_lanes = false;
template <class T, std::size_t W>
inline constexpr bool is_lanes<lanes<T, W>> = true;
template <class T, std::size_t W>
inline constexpr bool is_lanes<lanes_bool<T, W>> = true;

/// W lanes of T: the xsimd batch where one register holds exactly that, else lanes<T, W>.
template <class T, std::size_t W>
using vec = std::conditional_t<width_available<T, W>, batch<T, W>, lanes<T, W>>;

namespace detail {
template <class P, std::size_t W>
struct lanes_of;
template <class T, class A, std::size_t W>
struct lanes_of<xsimd::batch<T, A>, W> {
  using type = lanes<T, W>;
};
template <class T, class A, std::size_t W>
struct lanes_of<xsimd::batch_bool<T, A>, W> {
  using type = lanes_bool<T, W>;
};

/// The low `Bytes` bytes of a 16-byte register from p, the rest zero (loads of lanes under 16
/// bytes must not read past the last lane).
template <std::size_t Bytes>
LOOM_INLINE __m128i load_low(const void* p) {
  if constexpr (Bytes == 16) {
    return _mm_loadu_si128(static_cast<const __m128i*>(p));
  } else if constexpr (Bytes == 8) {
    return _mm_loadl_epi64(static_cast<const __m128i*>(p));
  } else {
    std::uint32_t v = 0;
    std::memcpy(&v, p, Bytes);
    return _mm_cvtsi32_si128(static_cast<int>(v));
  }
}
template <std::size_t Bytes>
LOOM_INLINE void store_low(void* p, __m128i r) {
  if constexpr (Bytes == 16) {
    _mm_storeu_si128(static_cast<__m128i*>(p), r);
  } else if constexpr (Bytes == 8) {
    _mm_storel_epi64(static_cast<__m128i*>(p), r);
  } else {
    const auto v = static_cast<std::uint32_t>(_mm_cvtsi128_si32(r));
    std::memcpy(p, &v, Bytes);
  }
}
}  // namespace detail

/// x * y in one register, wrapping around in signed integer lanes as loom's integers do: without
/// AVX-512, xsimd 8.1 multiplies 64-bit lanes one at a time in T, a signed overflow (undefined
/// behaviour, reported by UBSan); the same bits multiplied as unsigned lanes wrap.
template <class B>
LOOM_INLINE B multiply_part(const B& x, const B& y) {
  using T = typename B::value_type;
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = xsimd::batch<std::make_unsigned_t<T>, typename B::arch_type>;
    return xsimd::bitwise_cast<B>(xsimd::bitwise_cast<U>(x) * xsimd::bitwise_cast<U>(y));
  } else {
    return x * y;
  }
}

/// f applied to each register of lanes (to a batch itself: one register). f maps parts to parts
/// (batches or batch_bools) of the same lane count; the result has the matching lanes type.
template <class F, class V, class... R>
LOOM_INLINE auto per_part(F&& f, const V& v, const R&... r) {
  if constexpr (!is_lanes<V>) {
    return f(v, r...);
  } else {
    using P = std::remove_cvref_t<decltype(f(v.part[0], r.part[0]...))>;
    using Out = typename detail::lanes_of<P, V::size>::type;
    Out out;
    const auto one = [&](auto j) LOOM_LAMBDA_INLINE { return f(v.part[j.value], r.part[j.value]...); };
    [&]<std::size_t... J>(std::index_sequence<J...>) LOOM_LAMBDA_INLINE {
      ((out.part[J] = one(std::integral_constant<std::size_t, J>{})), ...);
    }(std::make_index_sequence<V::parts>{});
    return out;
  }
}

template <class T, std::size_t W>
struct lanes_bool {
  using layout = lane_layout<T, W>;
  using part_type = typename layout::part::batch_bool_type;
  using value_type = bool;  // as xsimd's batch_bool
  using batch_type = lanes<T, W>;
  static constexpr std::size_t size = W;
  static constexpr std::size_t parts = layout::parts;
  std::array<part_type, parts> part;

  friend LOOM_INLINE lanes_bool operator~(const lanes_bool& a) { return per_part([](const auto& x) { return ~x; }, a); }
  friend LOOM_INLINE lanes_bool operator&(const lanes_bool& a, const lanes_bool& b) {
    return per_part([](const auto& x, const auto& y) { return x & y; }, a, b);
  }
  friend LOOM_INLINE lanes_bool operator|(const lanes_bool& a, const lanes_bool& b) {
    return per_part([](const auto& x, const auto& y) { return x | y; }, a, b);
  }
  friend LOOM_INLINE lanes_bool operator^(const lanes_bool& a, const lanes_bool& b) {
    return per_part([](const auto& x, const auto& y) { return x ^ y; }, a, b);
  }
};

/// W lanes of T in lane_layout<T, W>'s registers, with the interface loom's nodes use on an xsimd
/// batch: broadcast construction, loads and stores, size, value_type, arithmetic and comparisons.
/// Under 16 bytes, loads and stores touch exactly W elements, and the unused lanes of the register
/// are zero after a load (they are computed on, and never stored). simd::load_first and
/// load_strided reach lanes through load_aligned from a buffer; their AVX-512 masked form, chosen
/// by sizeof(B) == 64, never sees lanes there (they take 16 bytes, or 128 and more).
template <class T, std::size_t W>
struct lanes {
  using layout = lane_layout<T, W>;
  using part_type = typename layout::part;
  using value_type = T;
  using batch_bool_type = lanes_bool<T, W>;
  static constexpr std::size_t size = W;
  static constexpr std::size_t parts = layout::parts;
  static constexpr std::size_t part_size = part_type::size;  // lanes per register
  std::array<part_type, parts> part;

  lanes() = default;
  // Implicit, as xsimd's batch(T): a scalar operand of an operator broadcasts.
  LOOM_INLINE lanes(T v) {  // NOLINT(google-explicit-constructor)
    const part_type b(v);
    part.fill(b);
  }

  static LOOM_INLINE lanes load_unaligned(const T* p) {
    lanes r;
    if constexpr (layout::used_bytes < 16) {
      r.part[0] = part_type(xsimd::bitwise_cast<part_type>(
          xsimd::batch<std::uint8_t, typename part_type::arch_type>(detail::load_low<layout::used_bytes>(p))));
    } else {
      [&]<std::size_t... J>(std::index_sequence<J...>) LOOM_LAMBDA_INLINE {
        ((r.part[J] = part_type::load_unaligned(p + J * part_size)), ...);
      }(std::make_index_sequence<parts>{});
    }
    return r;
  }
  static LOOM_INLINE lanes load_aligned(const T* p) { return load_unaligned(p); }
  LOOM_INLINE void store_unaligned(T* p) const {
    if constexpr (layout::used_bytes < 16) {
      detail::store_low<layout::used_bytes>(
          p, xsimd::bitwise_cast<xsimd::batch<std::uint8_t, typename part_type::arch_type>>(part[0]));
    } else {
      [&]<std::size_t... J>(std::index_sequence<J...>) LOOM_LAMBDA_INLINE {
        (part[J].store_unaligned(p + J * part_size), ...);
      }(std::make_index_sequence<parts>{});
    }
  }
  LOOM_INLINE void store_aligned(T* p) const { store_unaligned(p); }
  T get(std::size_t l) const { return part[l / part_size].get(l % part_size); }

  friend LOOM_INLINE lanes operator+(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x + y; }, a, b);
  }
  friend LOOM_INLINE lanes operator-(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x - y; }, a, b);
  }
  friend LOOM_INLINE lanes operator*(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return multiply_part(x, y); }, a, b);
  }
  // Floating point only: integer lanes divide through loom's op::div (simd/divide.hpp).
  friend LOOM_INLINE lanes operator/(const lanes& a, const lanes& b) {
    static_assert(std::is_floating_point_v<T>, "loom internal: integer lanes divide through simd::divide_lanes");
    return per_part([](const auto& x, const auto& y) { return x / y; }, a, b);
  }
  friend LOOM_INLINE lanes operator&(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x & y; }, a, b);
  }
  friend LOOM_INLINE lanes operator|(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x | y; }, a, b);
  }
  friend LOOM_INLINE lanes operator^(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x ^ y; }, a, b);
  }
  friend LOOM_INLINE lanes operator-(const lanes& a) { return per_part([](const auto& x) { return -x; }, a); }
  friend LOOM_INLINE lanes_bool<T, W> operator<(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x < y; }, a, b);
  }
  friend LOOM_INLINE lanes_bool<T, W> operator<=(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x <= y; }, a, b);
  }
  friend LOOM_INLINE lanes_bool<T, W> operator>(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x > y; }, a, b);
  }
  friend LOOM_INLINE lanes_bool<T, W> operator>=(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x >= y; }, a, b);
  }
  friend LOOM_INLINE lanes_bool<T, W> operator==(const lanes& a, const lanes& b) {
    return per_part([](const auto& x, const auto& y) { return x == y; }, a, b);
  }
};

// ---- Functions on batches and lanes alike: xsimd's for a batch, part by part for lanes. ----

/// An xsimd batch or lanes (of values, not masks).
template <class V>
concept Vector = xsimd::is_batch<V>::value || (is_lanes<V> && !std::is_same_v<typename V::value_type, bool>);

// (A batch calls xsimd directly: no lambda to instantiate where most code runs.)
template <Vector V>
LOOM_INLINE V min(const V& a, const V& b) {
  if constexpr (is_lanes<V>) return per_part([](const auto& x, const auto& y) { return xsimd::min(x, y); }, a, b);
  else return xsimd::min(a, b);
}
template <Vector V>
LOOM_INLINE V max(const V& a, const V& b) {
  if constexpr (is_lanes<V>) return per_part([](const auto& x, const auto& y) { return xsimd::max(x, y); }, a, b);
  else return xsimd::max(a, b);
}
namespace detail {
#if XSIMD_WITH_AVX512F
/// a where m, else b, for 64-byte integer batches: the blend on the registers themselves. xsimd
/// 8.1's AVX-512 select passes the batches (class objects) to _mm512_mask_blend_epi8/16, which
/// g++ defines as macros with C casts when not optimizing (-O0): every integer select failed to
/// compile there, whatever the element size (the macros sit in a switch on it).
template <class T, class A>
LOOM_INLINE xsimd::batch<T, A> blend_avx512(const xsimd::batch_bool<T, A>& m, const xsimd::batch<T, A>& a,
                                            const xsimd::batch<T, A>& b) {
  const __m512i x = a, y = b;
  const auto k = static_cast<typename xsimd::batch_bool<T, A>::register_type>(m);
  if constexpr (sizeof(T) == 1) return _mm512_mask_blend_epi8(k, y, x);
  else if constexpr (sizeof(T) == 2) return _mm512_mask_blend_epi16(k, y, x);
  else if constexpr (sizeof(T) == 4) return _mm512_mask_blend_epi32(k, y, x);
  else return _mm512_mask_blend_epi64(k, y, x);
}
template <class V>
inline constexpr bool blends_avx512 = std::is_integral_v<typename V::value_type> &&
                                      std::is_base_of_v<xsimd::avx512f, typename V::arch_type> &&
                                      (sizeof(typename V::value_type) >= 4 || XSIMD_WITH_AVX512BW);
#else
template <class V>
inline constexpr bool blends_avx512 = false;
#endif
}  // namespace detail

template <class M, Vector V>
LOOM_INLINE V select(const M& m, const V& a, const V& b) {
  if constexpr (is_lanes<V>) return per_part([](const auto& c, const auto& x, const auto& y) { return simd::select(c, x, y); }, m, a, b);
#if XSIMD_WITH_AVX512F
  else if constexpr (detail::blends_avx512<V>) return detail::blend_avx512(m, a, b);
#endif
  else return xsimd::select(m, a, b);
}
template <Vector V>
LOOM_INLINE V abs(const V& a) {
  if constexpr (is_lanes<V>) return per_part([](const auto& x) { return xsimd::abs(x); }, a);
  else return xsimd::abs(a);
}
template <Vector V>
LOOM_INLINE V sqrt(const V& a) {
  if constexpr (is_lanes<V>) return per_part([](const auto& x) { return xsimd::sqrt(x); }, a);
  else return xsimd::sqrt(a);
}
template <class T, std::size_t W>
LOOM_INLINE lanes<T, W> fma(const lanes<T, W>& x, const lanes<T, W>& y, const lanes<T, W>& z) {
  return per_part([](const auto& a, const auto& b, const auto& c) { return simd::fma(a, b, c); }, x, y, z);
}
template <class T, std::size_t W>
LOOM_INLINE lanes<T, W> fnma(const lanes<T, W>& x, const lanes<T, W>& y, const lanes<T, W>& z) {
  return per_part([](const auto& a, const auto& b, const auto& c) { return simd::fnma(a, b, c); }, x, y, z);
}

}  // namespace loom::simd
