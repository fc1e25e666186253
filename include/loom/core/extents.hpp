// SPDX-License-Identifier: MIT
// loom/core/extents.hpp — per-dimension extents, each static (known to the compiler) or
// dynamic, in the spirit of std::extents. Static extents let a schedule drop tail code.
#pragma once
#include <array>
#include <cstddef>
#include <utility>

#include "config.hpp"
#include "error.hpp"

namespace loom {

/// Marks a dimension whose extent is only known at run time.
inline constexpr index_t dyn = -1;

template <index_t... E>
class extents {
 public:
  static constexpr std::size_t rank = sizeof...(E);
  static constexpr std::array<index_t, rank> static_values{E...};
  static constexpr std::size_t rank_dynamic = ((E == dyn ? 1u : 0u) + ... + 0u);

  /// The extent of dimension d if the compiler knows it, else dyn.
  static constexpr index_t static_extent(std::size_t d) { return static_values[d]; }

  constexpr extents() {
    for (std::size_t d = 0; d < rank; ++d) v_[d] = static_values[d] == dyn ? 0 : static_values[d];
  }
  /// From every extent (static ones must match) or from the dynamic ones only.
  template <class... I>
    requires((sizeof...(I) == rank || sizeof...(I) == rank_dynamic) && (std::is_integral_v<I> && ...))
  constexpr explicit extents(I... e) : extents(std::array<index_t, sizeof...(I)>{static_cast<index_t>(e)...}) {}

  template <std::size_t N>
    requires(N == rank || N == rank_dynamic)
  constexpr explicit extents(const std::array<index_t, N>& e) {
    if constexpr (N == rank && rank != rank_dynamic) {
      for (std::size_t d = 0; d < rank; ++d) {
        if (static_values[d] != dyn && static_values[d] != e[d])
          throw shape_error(detail::cat("loom::extents: dimension ", d, " is static with extent ", static_values[d], " but ", e[d], " was given"));
        v_[d] = e[d];
      }
    } else if constexpr (N == rank) {
      for (std::size_t d = 0; d < rank; ++d) v_[d] = e[d];
    } else {
      std::size_t k = 0;
      for (std::size_t d = 0; d < rank; ++d) v_[d] = static_values[d] == dyn ? e[k++] : static_values[d];
    }
    for (std::size_t d = 0; d < rank; ++d)
      if (v_[d] < 0)
        throw shape_error(detail::cat("loom::extents: dimension ", d, " has negative extent ", v_[d]));
  }

  constexpr index_t extent(std::size_t d) const {
    return static_values[d] != dyn ? static_values[d] : v_[d];
  }
  /// The element count: 0 when any extent is (however large the others), else their product
  /// (a view's constructor has checked that it fits 64 bits).
  constexpr index_t size() const {
    std::uint64_t n = 1;
    for (std::size_t d = 0; d < rank; ++d) n *= std::uint64_t(extent(d));
    return index_t(n);
  }
  constexpr std::array<index_t, rank> values() const { return v_; }

 private:
  std::array<index_t, rank> v_{};
};

namespace detail {
template <std::size_t R, class Seq = std::make_index_sequence<R>>
struct dims_impl;
template <std::size_t R, std::size_t... I>
struct dims_impl<R, std::index_sequence<I...>> {
  using type = extents<((void)I, dyn)...>;
};
}  // namespace detail

/// All-dynamic extents of rank R.
template <std::size_t R>
using dims = typename detail::dims_impl<R>::type;

template <class T>
inline constexpr bool is_extents = false;
template <index_t... E>
inline constexpr bool is_extents<extents<E...>> = true;

}  // namespace loom
