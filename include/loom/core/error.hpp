// SPDX-License-Identifier: MIT
// loom/core/error.hpp — the exceptions loom throws for bad run-time input. Every one is thrown
// before any loop runs, so a failed run() writes nothing.
#pragma once
#include <stdexcept>
#include <string>

#include "message.hpp"  // detail::cat, which builds the messages

namespace loom {

/// Base of every loom run-time error.
struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An access would read or write outside a tensor: names the access, the dimension, the index
/// range it needs and the tensor's extent.
struct bounds_error : error {
  using error::error;
};

/// Extents that must agree do not (output rank, a reduction variable's extent, tensor sizes).
struct shape_error : error {
  using error::error;
};

/// The output is read at other points than it is written in a way loom cannot make correct.
struct alias_error : error {
  using error::error;
};

}  // namespace loom
