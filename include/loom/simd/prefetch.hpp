// SPDX-License-Identifier: MIT
// loom/simd/prefetch.hpp — a software prefetch into L2 at an element offset from a pointer, for
// the prefetch<> directive. The address is formed as an integer: the element ahead may lie past
// the end of the tensor, where a prefetch does nothing (it never faults) but pointer arithmetic
// would be undefined.
#pragma once
#include <cstdint>

#include "../core/config.hpp"
#include "cache.hpp"

namespace loom::simd {

/// Whether loom's default schedules read ahead by software (prefetch<>) where a run outgrows the
/// cache. The user's own prefetch<> directives always run; this only steers the defaults.
/// It pays where the hardware prefetchers follow many row streams too slowly (the AVX-512 parts
/// measured) and costs where they keep up (AVX2 ones: software prefetches take their fill
/// buffers); nothing at compile time tells them apart but the vector extension, so AVX-512 builds
/// read ahead and others do not (figures: docs/tuning.md#software-read-ahead). Define
/// LOOM_SOFTWARE_READ_AHEAD to 1 or 0 to choose for the machine at hand.
#if defined(LOOM_SOFTWARE_READ_AHEAD)
inline constexpr bool default_read_ahead = LOOM_SOFTWARE_READ_AHEAD != 0;
#elif defined(__AVX512F__)
inline constexpr bool default_read_ahead = true;
#else
inline constexpr bool default_read_ahead = false;
#endif

/// How far ahead of a read a prefetch into L2 may land: half the L2 cache. A line requested
/// further ahead is evicted before its read comes (docs/tuning.md#software-read-ahead).
/// prefetch_reach_floor: the least it is taken to be, for distances fixed at compile time.
inline index_t prefetch_reach_bytes() { return l2_cache_bytes() / 2; }
inline constexpr index_t prefetch_reach_floor = index_t{128} << 10;
/// What a prefetch beyond the reach reads instead: this many bytes ahead of the read (2 KiB: for a
/// read along a row-major row, 2 KiB further along it).
inline constexpr index_t prefetch_fallback_bytes = 2048;

/// Asks for the cache line at `address` to be brought into L2 (x86: prefetcht1), for reading.
LOOM_INLINE void prefetch_l2(std::uintptr_t address) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(reinterpret_cast<const void*>(address), 0, 2);  // read, locality 2: L2 and outwards
#else
  (void)address;
#endif
}

/// Asks for the line at `address` for writing (PREFETCHW where the target has it, a read
/// prefetch into L1 elsewhere): a store to it then finds it in cache, owned.
LOOM_INLINE void prefetch_for_write(std::uintptr_t address) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(reinterpret_cast<const void*>(address), 1, 3);
#else
  (void)address;
#endif
}

/// The address of p[ahead], formed as an integer (see above).
template <class T>
LOOM_INLINE std::uintptr_t address_ahead(const T* p, index_t ahead) {
  return reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(ahead) * sizeof(T);
}

/// Asks for the cache line holding p[ahead] to be brought into L2.
template <class T>
LOOM_INLINE void prefetch_l2(const T* p, index_t ahead) {
  prefetch_l2(address_ahead(p, ahead));
}

}  // namespace loom::simd
