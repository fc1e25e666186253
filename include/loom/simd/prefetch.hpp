// loom/simd/prefetch.hpp — a software prefetch into L2 at an element offset from a pointer, for
// the prefetch<> directive. The address is formed as an integer: the element ahead may lie past
// the end of the tensor, where a prefetch does nothing (it never faults) but pointer arithmetic
// would be undefined.
#pragma once
#include <cstdint>

#include "../core/config.hpp"
#include "cache.hpp"

namespace loom::simd {

/// How far ahead of a read a prefetch into L2 may land: half the L2 cache. A line requested
/// further ahead is evicted before its read comes (on Zen 4, the next block of 8 rows ahead
/// measured 85 against 92 % of copy with 2 KiB ahead instead, at 256 KiB rows).
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
