// SPDX-License-Identifier: MIT
// loom/kernels/conv/items.hpp — the convolution kernels and their packing go parallel as
// independent work items on loom's team (core/threads.hpp's for_items).
#pragma once
#include "../../core/threads.hpp"

namespace loom::conv_detail {
using loom::detail::for_items;
}  // namespace loom::conv_detail
