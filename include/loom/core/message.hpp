// SPDX-License-Identifier: MIT
// loom/core/message.hpp — text built from pieces without streams: error messages (detail::cat),
// the numbered names of unnamed tensors, and one out-of-line stream for what objects print.
#pragma once
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

#include "config.hpp"

namespace loom::detail {
/// One piece of a message: a view of text, or an integer written into the piece itself.
class message_piece {
 public:
  message_piece(std::string_view text) : text_(text) {}  // literals and std::string convert
  message_piece(char c) : own_(1) { digits_[0] = c; }
  template <std::integral I>
  message_piece(I v) {
    // Digits from the right, then the sign; the magnitude as unsigned, so the minimum is exact.
    bool negative = false;
    auto m = static_cast<unsigned long long>(v);
    if constexpr (std::is_signed_v<I>) {
      negative = v < 0;
      if (negative) m = 0ull - m;
    }
    unsigned at = sizeof digits_;
    do {
      digits_[--at] = static_cast<char>('0' + m % 10);
      m /= 10;
    } while (m != 0);
    if (negative) digits_[--at] = '-';
    first_ = static_cast<unsigned char>(at);
    own_ = static_cast<unsigned char>(sizeof digits_ - at);
  }
  std::string_view text() const { return own_ ? std::string_view(digits_ + first_, own_) : text_; }

 private:
  std::string_view text_;
  char digits_[24];  // 20 digits and a sign at most
  unsigned char first_ = 0, own_ = 0;
};

/// The pieces joined, out of line: a message costs the function that throws it one call.
LOOM_COLD inline std::string join_pieces(std::initializer_list<message_piece> pieces) {
  std::size_t size = 0;
  for (const message_piece& p : pieces) size += p.text().size();
  std::string s;
  s.reserve(size);
  for (const message_piece& p : pieces) s.append(p.text());
  return s;
}

/// What print(os) of an object writes, through one out-of-line stream for every type: a stream
/// built in each to_string<E> was compiled again for every access type of every definition.
using print_function = void (*)(const void*, std::ostream&);
LOOM_COLD inline std::string printed(const void* object, print_function print) {
  std::ostringstream os;
  print(object, os);
  return os.str();
}
template <class X>
std::string printed(const X& x) {
  return printed(static_cast<const void*>(&x), [](const void* p, std::ostream& os) { static_cast<const X*>(p)->print(os); });
}

/// Builds a message from text and integers. Not an ostringstream: its inlined insertions, each
/// with exception edges, cost every definition compile time (docs/tuning.md#compile-time). Not
/// operator+ chains either: GCC 12's -Wrestrict at -O3.
template <class... A>
std::string cat(const A&... a) {
  return join_pieces({message_piece(a)...});
}
}  // namespace loom::detail
