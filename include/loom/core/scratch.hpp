// SPDX-License-Identifier: MIT
// loom/core/scratch.hpp — grow-only, 64-byte aligned buffers, one per thread and purpose, reused
// from call to call: a steady stream of runs allocates (and page-faults) nothing. A fresh buffer
// of a few hundred KiB costs a page fault per 4 KiB on every call once the allocator hands such
// sizes back to the OS, which is a few per cent of a millisecond-long memory-bound run.
//
// Each thread that ran loom holds its own buffers until it exits or calls release_scratch();
// docs/threads.md gives their peak sizes.
#pragma once
#include <cstddef>
#include <new>

#include "config.hpp"

namespace loom {

namespace detail {

/// One buffer of one thread. Every buffer that has held memory is on its thread's list, so that
/// release_scratch() reaches them all without knowing their purposes.
class scratch_buffer {
 public:
  constexpr scratch_buffer() noexcept = default;
  scratch_buffer(const scratch_buffer&) = delete;
  scratch_buffer& operator=(const scratch_buffer&) = delete;
  ~scratch_buffer() {
    release();
    for (scratch_buffer** p = &head(); *p; p = &(*p)->next_)
      if (*p == this) {
        *p = next_;
        break;
      }
  }

  /// At least `bytes`, 64-byte aligned (contents undefined).
  void* get(std::size_t bytes) {
    if (bytes_ < bytes) grow(bytes);
    return p_;
  }
  std::size_t bytes() const noexcept { return bytes_; }
  void release() noexcept {
    if (p_) ::operator delete(p_, std::align_val_t{64});
    p_ = nullptr;
    bytes_ = 0;
  }
  const scratch_buffer* next() const noexcept { return next_; }
  scratch_buffer* next() noexcept { return next_; }

  /// The first buffer of the calling thread's list.
  static scratch_buffer*& head() noexcept {
    thread_local scratch_buffer* first = nullptr;
    return first;
  }

 private:
  void grow(std::size_t bytes) {
    if (!linked_) {
      next_ = head();
      head() = this;
      linked_ = true;
    }
    release();  // the old contents are not kept: free first, so the peak is one buffer
    p_ = ::operator new(bytes, std::align_val_t{64});
    bytes_ = bytes;
  }

  void* p_ = nullptr;
  std::size_t bytes_ = 0;
  scratch_buffer* next_ = nullptr;
  bool linked_ = false;
};

/// At least n elements of T, 64-byte aligned: the calling thread's buffer for Purpose, a tag
/// type of the layer that uses it (one buffer per tag, whatever T; contents undefined; valid
/// until this thread asks for the same Purpose again or calls release_scratch()). Two buffers
/// live at once need two tags.
template <class T, class Purpose>
T* scratch(std::size_t n) {
  thread_local scratch_buffer b;
  if (n > std::size_t(-1) / sizeof(T)) throw std::bad_alloc();
  return static_cast<T*>(b.get(n * sizeof(T)));
}

}  // namespace detail

/// Frees the calling thread's scratch buffers (the next loom call on this thread allocates them
/// again). Other threads keep theirs: see docs/threads.md for the threads of loom's own teams.
/// Not from inside a loom call (a GEMM epilogue).
inline void release_scratch() noexcept {
  for (detail::scratch_buffer* b = detail::scratch_buffer::head(); b; b = b->next()) b->release();
}

/// The bytes the calling thread's scratch buffers hold now.
inline std::size_t scratch_bytes() noexcept {
  std::size_t n = 0;
  for (const detail::scratch_buffer* b = detail::scratch_buffer::head(); b; b = b->next()) n += b->bytes();
  return n;
}

}  // namespace loom
