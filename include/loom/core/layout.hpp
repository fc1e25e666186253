// SPDX-License-Identifier: MIT
// loom/core/layout.hpp — what a view's type says about its strides.
#pragma once
#include <type_traits>

namespace loom {

/// Every stride is a run-time value: transposed, strided and column-major views, user memory
/// with strides.
struct layout_stride {};

/// The last dimension is unit-stride by type (rows of a row-major tensor, and blocks of them);
/// the other strides are run-time values. An access that walks such a row with the vector lanes
/// is contiguous at compile time, so the emitter needs no gather version of its loop nest.
struct layout_right {};

template <class L>
inline constexpr bool is_layout = std::is_same_v<L, layout_stride> || std::is_same_v<L, layout_right>;

}  // namespace loom
