// SPDX-License-Identifier: MIT
// loom/core/scratch.hpp — grow-only, 64-byte aligned buffers, one per thread and purpose, reused
// from call to call: a steady stream of runs allocates (and page-faults) nothing. A fresh buffer
// of a few hundred KiB costs a page fault per 4 KiB on every call once the allocator hands such
// sizes back to the OS, which is a few per cent of a millisecond-long memory-bound run.
#pragma once
#include <cstddef>
#include <memory>
#include <new>

#include "config.hpp"

namespace loom::detail {

/// What a scratch buffer is for: one buffer per purpose, so two live at once never share.
enum class scratch_use { gemm_a, gemm_b, gemm_b_sliver, reduction_partials };

/// At least n elements of T, 64-byte aligned, this thread's buffer for `Use` (contents undefined;
/// valid until this thread asks for the same Use again).
template <class T, scratch_use Use>
T* scratch(std::size_t n) {
  struct buffer {
    struct release {
      void operator()(T* p) const { ::operator delete(p, std::align_val_t{64}); }
    };
    std::unique_ptr<T, release> p;
    std::size_t size = 0;
  };
  thread_local buffer b;
  if (b.size < n) {
    b.p.reset(static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})));
    b.size = n;
  }
  return b.p.get();
}

}  // namespace loom::detail
