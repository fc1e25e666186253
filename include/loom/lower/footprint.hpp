// SPDX-License-Identifier: MIT
// loom/lower/footprint.hpp — the bytes a run touches, which directives with a MinBytes threshold
// (stream_stores, prefetch, interleave, large_blocks) and specialize<touches_at_least<>> ask.
#pragma once
#include <limits>
#include <type_traits>

#include "../core/config.hpp"
#include "../schedule/directives.hpp"

namespace loom::lower {

/// The bytes a run reads and writes at most: the output and every input view, whole. Given the
/// run's `points`, each input counts at most one cache line per point, since each point reads one
/// element of it (a stage computed over a few rows of a large input reads those rows).
template <class Def>
index_t touched_bytes(const Def& d, index_t points = std::numeric_limits<index_t>::max()) {
  index_t bytes = d.lhs.view.size() * index_t(sizeof(typename Def::value_type));
  d.rhs.for_each_access([&](const auto& a) {
    constexpr index_t elem = index_t(sizeof(typename std::remove_cvref_t<decltype(a)>::element_type));
    constexpr index_t per_line = elem >= 64 ? 1 : 64 / elem;
    bytes += (points > a.view.size() / per_line ? a.view.size() : points * per_line) * elem;
  });
  return bytes;
}

/// Does a run of `bytes` reach a threshold of min_bytes? (0: every run; beyond_cache: at least
/// `beyond` bytes, the caller's idea of outgrowing the cache.)
inline bool reaches(index_t bytes, index_t min_bytes, index_t beyond) {
  return min_bytes == 0 || bytes >= (min_bytes == beyond_cache ? beyond : min_bytes);
}

/// Does the run touch at least min_bytes? (For one question; a run that asks several counts its
/// bytes once and asks reaches(). A threshold of 0 answers without counting.)
template <class Def>
bool touches(const Def& d, index_t min_bytes, index_t beyond) {
  return min_bytes == 0 || reaches(touched_bytes(d), min_bytes, beyond);
}

}  // namespace loom::lower
