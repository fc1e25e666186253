// SPDX-License-Identifier: MIT
// loom/simd/arch.hpp — which xsimd batch holds W lanes of T. loom picks the widest target the
// compiler was allowed (xsimd::default_arch), on purpose: g++ may prefer 256-bit vectors for its
// own auto-vectorizer on some AVX-512 parts, but loom's explicit batches always use the full width.
#pragma once
#include <cstddef>
#include <type_traits>
// GCC 12 reports -W(maybe-)uninitialized inside its own AVX-512 intrinsic headers (the
// `__m512 __Y = __Y;` of _mm512_undefined_*) when they are inlined into xsimd's kernels; the
// diagnostic is attributed to those lines, so it is silenced for them only, where they are first
// included (fixed in GCC 13). Every loom header reaches xsimd through this one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop
#else
#include <xsimd/xsimd.hpp>
#endif

namespace loom::simd {

/// The native arch: the widest xsimd target enabled by the compiler flags.
using native_arch = xsimd::default_arch;

template <class T>
inline constexpr std::size_t native_width = xsimd::batch<T, native_arch>::size;

namespace detail {
struct no_arch {};
template <std::size_t Bytes>
struct arch_for_bytes {
  using type = no_arch;
};
#if XSIMD_WITH_AVX512BW
template <>
struct arch_for_bytes<64> {
  using type = xsimd::avx512bw;
};
#elif XSIMD_WITH_AVX512F
template <>
struct arch_for_bytes<64> {
  using type = xsimd::avx512f;
};
#endif
#if XSIMD_WITH_FMA3_AVX2
template <>
struct arch_for_bytes<32> {
  using type = xsimd::fma3<xsimd::avx2>;
};
#elif XSIMD_WITH_AVX2
template <>
struct arch_for_bytes<32> {
  using type = xsimd::avx2;
};
#endif
#if XSIMD_WITH_FMA3_SSE
template <>
struct arch_for_bytes<16> {
  using type = xsimd::fma3<xsimd::sse4_2>;
};
#elif XSIMD_WITH_SSE4_2
template <>
struct arch_for_bytes<16> {
  using type = xsimd::sse4_2;
};
#elif XSIMD_WITH_SSE2
template <>
struct arch_for_bytes<16> {
  using type = xsimd::sse2;
};
#endif
}  // namespace detail

/// True when some enabled target has a register of exactly W lanes of T.
template <class T, std::size_t W>
inline constexpr bool width_available =
    !std::is_same_v<typename detail::arch_for_bytes<W * sizeof(T)>::type, detail::no_arch>;

/// The arch whose registers hold W lanes of T (W * sizeof(T) bytes).
template <class T, std::size_t W>
using arch_for = typename detail::arch_for_bytes<W * sizeof(T)>::type;

/// A batch of W lanes of T.
template <class T, std::size_t W>
using batch = xsimd::batch<T, arch_for<T, W>>;

template <class T, std::size_t W>
using batch_bool = xsimd::batch_bool<T, arch_for<T, W>>;

/// Vector registers a kernel of W lanes of T may keep live: x86-64 has 32 with AVX-512 (64-byte
/// vectors), 16 otherwise.
template <class T, std::size_t W>
inline constexpr std::ptrdiff_t vector_registers = W * sizeof(T) == 64 ? 32 : 16;

}  // namespace loom::simd
