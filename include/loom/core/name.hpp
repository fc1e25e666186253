// SPDX-License-Identifier: MIT
// loom/core/name.hpp — a tensor's name, stored inline so views copy it without allocation and
// without lifetime ties to the tensor that named them. Used in error messages and printed nests.
#pragma once
#include <algorithm>
#include <atomic>
#include <string>
#include <string_view>

#include "message.hpp"

namespace loom {

class tensor_name {
 public:
  static constexpr std::size_t capacity = 31;

  tensor_name() {
    // Unnamed tensors get a stable, distinct name ("t0", "t1", ...) so errors still say which one.
    static std::atomic<unsigned> counter{0};
    const detail::message_piece number(counter.fetch_add(1, std::memory_order_relaxed));
    buf_[len_++] = 't';
    for (char digit : number.text()) buf_[len_++] = digit;
  }
  explicit tensor_name(std::string_view s) { set(s); }

  void set(std::string_view s) {
    len_ = static_cast<unsigned char>(std::min(s.size(), capacity));
    std::copy_n(s.data(), len_, buf_);
  }
  std::string_view view() const { return {buf_, len_}; }
  std::string str() const { return std::string(view()); }

 private:
  char buf_[capacity]{};
  unsigned char len_ = 0;
};

}  // namespace loom
