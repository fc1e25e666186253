// loom/simd/prefetch.hpp — a software prefetch into L2 at an element offset from a pointer, for
// the prefetch<> directive. The address is formed as an integer: the element ahead may lie past
// the end of the tensor, where a prefetch does nothing (it never faults) but pointer arithmetic
// would be undefined.
#pragma once
#include <cstdint>

#include "../core/config.hpp"

namespace loom::simd {

/// Asks for the cache line holding p[ahead] to be brought into L2 (x86: prefetcht1), for reading.
template <class T>
LOOM_INLINE void prefetch_l2(const T* p, index_t ahead) {
#if defined(__GNUC__) || defined(__clang__)
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(ahead) * sizeof(T);
  __builtin_prefetch(reinterpret_cast<const void*>(at), 0, 2);  // read, locality 2: L2 and outwards
#else
  (void)p;
  (void)ahead;
#endif
}

}  // namespace loom::simd
