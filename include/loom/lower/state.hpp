// SPDX-License-Identifier: MIT
// loom/lower/state.hpp — the run-time state of an emitted loop nest: each variable's value and
// extent, the current range of every split's inner loop, the live lanes of a masked vector, and
// the choices made once per run.
// Expression nodes read it through coord<V>() / extent<V>().
#pragma once
#include <array>
#include <type_traits>

#include "../core/config.hpp"
#include "../core/meta.hpp"
#include "../expr/access.hpp"

namespace loom {

template <class Vars, std::size_t NS>
struct loop_state {
  static constexpr bool has_reduction_value = false;
  std::array<index_t, Vars::size> at{};
  std::array<index_t, Vars::size> ext{};
  std::array<index_t, NS == 0 ? 1 : NS> lo{};
  std::array<index_t, NS == 0 ? 1 : NS> n{};
  index_t active = 0;
  // Choices made once per run from the bytes it touches: large_blocks<> (the split's large block
  // length) and interleave<K, MinBytes> (walk K parts at once).
  bool large_blocks = false;
  bool interleaved = true;
  // The run outgrows the cache: an unrolled reduction loop runs a vector at a time into one
  // accumulator (emit.hpp's reduction_blocks says why).
  bool from_memory = false;

  template <class V>
  LOOM_INLINE index_t coord() const { return at[meta::index_of<Vars, V>]; }
  template <class V>
  LOOM_INLINE index_t extent() const { return ext[meta::index_of<Vars, V>]; }
  template <class V>
  LOOM_INLINE void set(index_t t) { at[meta::index_of<Vars, V>] = t; }
};

/// State S in a strip whose accesses have the terms of the variables Fixed folded into their base
/// pointers (access::rebase; emit.hpp's strip): coordinates are still the true ones, and
/// accesses add only the terms of their other variables.
template <class S, class Fixed>
struct rebased_state : S {
  using rebased_vars = Fixed;
  LOOM_INLINE explicit rebased_state(const S& s) : S(s) {}
};

/// Row U of a block unrolled along variable V, seen from the state at the block's first row. The
/// emitter's folded loops (emit.hpp) evaluate their rows this way, so that an access can address
/// row U as its address at the first row plus U strides along V (access::address): one pointer
/// per step and a few multiples of the stride, rather than a base per row.
template <class S, class V, index_t U>
struct block_row {
  static constexpr bool has_reduction_value = false;
  using rebased_vars = loom::rebased_vars<S>;
  using var = V;
  static constexpr index_t row = U;
  S first;
  index_t active;
  template <class W>
  LOOM_INLINE index_t coord() const {
    return first.template coord<W>() + (std::is_same_v<W, V> ? U : 0);
  }
  template <class W>
  LOOM_INLINE index_t extent() const { return first.template extent<W>(); }
};

/// A state seen together with the finished value of the scheduled reduction (the epilogue).
template <class S, class R>
struct with_reduction_value {
  static constexpr bool has_reduction_value = true;
  using rebased_vars = loom::rebased_vars<S>;
  const S& s;
  R value;
  index_t active;
  template <class V>
  LOOM_INLINE index_t coord() const { return s.template coord<V>(); }
  template <class V>
  LOOM_INLINE index_t extent() const { return s.template extent<V>(); }
  LOOM_INLINE const R& reduction_value() const { return value; }
};

/// Scalar evaluation (no lanes); Contig is carried so a vector loop below can inherit it.
template <bool Contig>
struct scalar_mode {
  static constexpr bool is_vector = false;
  static constexpr bool contiguous = Contig;
};

}  // namespace loom
