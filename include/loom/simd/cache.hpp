// SPDX-License-Identifier: MIT
// loom/simd/cache.hpp — the cache sizes the run-time choices depend on (streaming stores, reading
// ahead, specialize on the bytes a run touches), as the OS reports them, read once.
#pragma once
#include <algorithm>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "../core/config.hpp"

namespace loom::simd {

namespace detail {
/// sysconf's figure for a cache (0 when the OS does not say).
inline index_t os_cache_bytes([[maybe_unused]] int name) {
#if defined(__unix__) || defined(__APPLE__)
  const long bytes = sysconf(name);
  return bytes > 0 ? index_t(bytes) : 0;
#else
  return 0;
#endif
}
}  // namespace detail

/// The last-level cache one core can use, taken as what the OS reports but at most 32 MiB — a VM
/// often reports the host's whole L3 rather than the slice its cores see, and a core rarely owns
/// more. 32 MiB when the OS does not say.
inline index_t last_level_cache_bytes() {
  static const index_t bytes = [] {
    index_t llc = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE)
    llc = detail::os_cache_bytes(_SC_LEVEL3_CACHE_SIZE);
    if (llc == 0) llc = detail::os_cache_bytes(_SC_LEVEL2_CACHE_SIZE);
#endif
    constexpr index_t cap = index_t{32} << 20;
    return llc > 0 ? std::min(llc, cap) : cap;
  }();
  return bytes;
}

/// One core's L2 cache (at least 256 KiB; 1 MiB when the OS does not say).
inline index_t l2_cache_bytes() {
  static const index_t bytes = [] {
    index_t l2 = 0;
#if defined(_SC_LEVEL2_CACHE_SIZE)
    l2 = detail::os_cache_bytes(_SC_LEVEL2_CACHE_SIZE);
#endif
    return l2 > 0 ? std::max(l2, index_t{256} << 10) : index_t{1} << 20;
  }();
  return bytes;
}

/// The bytes a run must touch before prefetch<> and touches_at_least<> (loom::beyond_cache) act:
/// more than the last-level cache holds. Reading ahead into L2 is for data that comes from memory;
/// in cache it only takes load slots (docs/tuning.md#software-read-ahead).
inline index_t outgrows_cache_bytes() { return last_level_cache_bytes() + 1; }

}  // namespace loom::simd
