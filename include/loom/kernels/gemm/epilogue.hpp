// SPDX-License-Identifier: MIT
// loom/kernels/gemm/epilogue.hpp — what the GEMM engine may apply to each micro-tile after the
// last K block, while the tile is still in registers: value -> f(value, i, j).
//
// An epilogue is a type with
//     template <class B> B apply(B v, index_t i, index_t j, index_t lanes) const;
// where v holds C(i, j : j + lanes) (lanes <= B::size; the lanes past `lanes` are unused and must
// not be loaded from memory). Index notation builds one from the expression around a contraction
// (e.g. max(sum(k, A(i, k) * B(k, j)) + bias(j), 0)); an app may write its own.
#pragma once
#include <type_traits>

#include "../../core/config.hpp"

namespace loom {

/// C = alpha * A B + beta * C, nothing else.
struct identity_epilogue {
  template <class B>
  LOOM_INLINE B apply(const B& v, index_t, index_t, index_t) const {
    return v;
  }
};

namespace gemm_detail {
template <class E>
inline constexpr bool is_identity_epilogue = std::is_same_v<E, identity_epilogue>;
}  // namespace gemm_detail

}  // namespace loom
