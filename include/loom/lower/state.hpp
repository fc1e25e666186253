// loom/lower/state.hpp — the run-time state of an emitted loop nest: each variable's value and
// extent, the current range of every split's inner loop, and the live lanes of a masked vector.
// Expression nodes read it through coord<V>() / extent<V>().
#pragma once
#include <array>

#include "../core/config.hpp"
#include "../core/meta.hpp"

namespace loom {

template <class Vars, std::size_t NS>
struct loop_state {
  static constexpr bool has_reduction_value = false;
  std::array<index_t, Vars::size> at{};
  std::array<index_t, Vars::size> ext{};
  std::array<index_t, NS == 0 ? 1 : NS> lo{};
  std::array<index_t, NS == 0 ? 1 : NS> n{};
  index_t active = 0;

  template <class V>
  LOOM_INLINE index_t coord() const { return at[meta::index_of<Vars, V>]; }
  template <class V>
  LOOM_INLINE index_t extent() const { return ext[meta::index_of<Vars, V>]; }
  template <class V>
  LOOM_INLINE void set(index_t t) { at[meta::index_of<Vars, V>] = t; }
};

/// A state seen together with the finished value of the scheduled reduction (the epilogue).
template <class S, class R>
struct with_reduction_value {
  static constexpr bool has_reduction_value = true;
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
