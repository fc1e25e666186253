// SPDX-License-Identifier: MIT
// loom/schedule/directives.hpp — the schedule language: one type per directive, composed into
// loom::schedule<...>. Loops are named by variables (i), or by the loops a split creates
// (outer<i>, inner<i>, inner<inner<j>>), or by a fused pair (fused<i, j>).
#pragma once
#include "../core/config.hpp"
#include "../expr/var.hpp"

namespace loom {

/// What a split loop does when its factor does not divide the extent (Halide's TailStrategy).
namespace tail {
/// loom picks: shift_inwards where legal, else guard (masked for a vector inside a reduction).
struct automatic {
  static constexpr const char* name = "auto";
};
/// The last block moves back so it ends at the extent and recomputes a few points. Branch-free
/// full vectors; legal only where computing a point twice is harmless: pure variables of an
/// `=` definition, and not across a parallel loop (two threads would write the same point).
struct shift_inwards {
  static constexpr const char* name = "shift inwards";
};
/// The last block runs only its remaining points, one at a time (a scalar epilogue). Always legal.
struct guard {
  static constexpr const char* name = "guard";
};
/// The last vector runs with lanes past the extent switched off (AVX-512 mask registers; a
/// buffered load/store elsewhere). Always legal; vectorized loops only.
struct masked {
  static constexpr const char* name = "masked";
};
}  // namespace tail

template <class T>
concept TailStrategy = std::is_same_v<T, tail::automatic> || std::is_same_v<T, tail::shift_inwards> ||
                       std::is_same_v<T, tail::guard> || std::is_same_v<T, tail::masked>;

/// The vector width the element type has on the widest enabled target.
inline constexpr index_t native = 0;

/// split<V, F>: loop V becomes outer<V> (blocks of F) and inner<V> (within a block), in place.
template <auto V, index_t F, TailStrategy Tail = tail::automatic>
struct split {
  using loop = loop_t<V>;
  static constexpr index_t factor = F;
  using tail_type = Tail;
};
/// tile<V1, V2, F1, F2>: splits both and orders outer<V1>, outer<V2>, inner<V1>, inner<V2>.
template <auto V1, auto V2, index_t F1, index_t F2, TailStrategy Tail = tail::automatic>
struct tile {
  using loop1 = loop_t<V1>;
  using loop2 = loop_t<V2>;
};
/// reorder<A, B, ...>: the named loops take the positions they occupy, in this order
/// (outermost first); loops not named stay where they are.
template <auto... Vs>
struct reorder {};
/// fuse<V1, V2>: two adjacent loops (V1 immediately outside V2) become one, fused<V1, V2>.
template <auto V1, auto V2>
struct fuse {
  using loop1 = loop_t<V1>;
  using loop2 = loop_t<V2>;
};
/// unroll<V, F>: splits V by F and unrolls inner<V> completely; unroll<inner<V>> unrolls the
/// inner loop of an earlier split.
template <auto V, index_t F = 0, TailStrategy Tail = tail::automatic>
struct unroll {
  using loop = loop_t<V>;
};
/// vectorize<V, W>: V's consecutive values become the W lanes of a SIMD register (W = native
/// by default), splitting V by W unless V is already an inner loop of exactly W. Loops inside a
/// vectorized loop run on whole vectors.
template <auto V, index_t W = native, TailStrategy Tail = tail::automatic>
struct vectorize {
  using loop = loop_t<V>;
};
/// parallel<V>: V's iterations are shared among OpenMP threads (static schedule). With
/// MinPoints > 0 the loop runs in parallel only when the nest has at least that many points.
template <auto V, index_t MinPoints = 0>
struct parallel {
  using loop = loop_t<V>;
};

/// The default threshold of stream_stores: the bytes one run touches exceed what the last-level
/// cache can keep (see simd::streaming_threshold_bytes()).
inline constexpr index_t beyond_cache = -1;

/// stream_stores<MinBytes>: the output's full, aligned vectors are written with non-temporal
/// (streaming) stores, which skip the cache: a normal store first reads the line it writes (the
/// read-for-ownership) and later evicts it, so an output that will not be read from cache soon
/// costs three line transfers per line instead of one. Chosen at run time, when the run touches
/// at least MinBytes (inputs and output; beyond_cache: more than the last-level cache holds).
/// For `out(...) = e` without reductions, on a vectorized nest; results never change.
template <index_t MinBytes = beyond_cache>
struct stream_stores {
  static_assert(MinBytes >= 0 || MinBytes == beyond_cache, "loom::stream_stores<MinBytes>: MinBytes must be >= 0 (or loom::beyond_cache)");
  static constexpr index_t min_bytes = MinBytes;
};

/// prefetch<V, Distance, MinBytes>: every read of an input that moves along variable V also asks
/// for the element Distance steps of V further on to be brought into the L2 cache (Halide's
/// prefetch, with its non-faulting bound strategy: a prefetch never faults, so near the end it
/// may point past the tensor; no result changes). One core's loads alone keep too few misses in
/// flight to read at the memory's bandwidth; requests issued ahead add more, so a read-only stream
/// (a sum over a large matrix) gets closer to it. (Into L2, not L1: docs/tuning.md#software-read-ahead.)
/// Chosen at run time, when the run touches at least
/// MinBytes (beyond_cache: more than the last-level cache holds); in cache it only takes load slots.
/// A request that would land more than half the L2 cache ahead of its read (prefetch<i, 8> over
/// rows of 256 KiB) would be evicted before the read comes: it reads 2 KiB ahead instead, which
/// for a read along a row-major row is 2 KiB further along the row.
template <auto V, index_t Distance, index_t MinBytes = beyond_cache>
struct prefetch {
  static_assert(Distance != 0, "loom::prefetch<V, Distance>: Distance (in steps of V) must not be 0");
  static_assert(MinBytes >= 0 || MinBytes == beyond_cache, "loom::prefetch<V, Distance, MinBytes>: MinBytes must be >= 0 (or loom::beyond_cache)");
  using variable = loop_t<V>;
  static constexpr index_t distance = Distance;
  static constexpr index_t min_bytes = MinBytes;
};

/// prefetch_stores<Consumer>: in a pipeline, for a stage computed at a loop of Consumer, which
/// reads it at Consumer's own points: every point the stage computes also asks for the cache line
/// Consumer will store at that point, for writing. A store to a line that is not in the cache
/// first reads it from memory (the read-for-ownership), and a consumer that only combines values
/// already in cache (a softmax's e(i, j) / s(i)) waits for those reads in a pass of its own;
/// asked for while the stage computes (its exp), they overlap that arithmetic. Consumer writes a
/// tensor; the stage has no reduction. Results never change (docs/tuning.md#store-prefetch).
template <auto Consumer>
struct prefetch_stores {
  using consumer = std::remove_cvref_t<decltype(Consumer)>;
};

namespace plan_directives {
template <class D>
inline constexpr bool is_prefetch_stores = false;
template <auto C>
inline constexpr bool is_prefetch_stores<prefetch_stores<C>> = true;
}  // namespace plan_directives

/// interleave<Parts, MinBytes>: the vector loop of a strip-mined block (outer<V>, then vectorized
/// inner<V>) walks Parts equal parts of the block at once, one vector from each in turn, then what
/// is left. One core keeps more reads in flight on Parts streams than on one: the hardware
/// prefetchers follow each (docs/tuning.md#interleaved-streams). The parts should be far apart (tens of KiB at least); the
/// emitter keeps them off a power of two apart (the same cache sets). Chosen at run time, when the
/// run touches at least MinBytes (0: every run; beyond_cache: more than the last-level cache
/// holds); otherwise the vectors run in order. Results never change.
template <int Parts, index_t MinBytes = 0>
struct interleave {
  static_assert(Parts >= 1 && Parts <= 16, "loom::interleave<Parts>: Parts must be in [1, 16]");
  static_assert(MinBytes >= 0 || MinBytes == beyond_cache, "loom::interleave<Parts, MinBytes>: MinBytes must be >= 0 (or loom::beyond_cache)");
  static constexpr int parts = Parts;
  static constexpr index_t min_bytes = MinBytes;
};

/// large_blocks<V, F, MinBytes>: outer<V> takes blocks of F points instead of V's split factor
/// when the run touches at least MinBytes (beyond_cache: more than the last-level cache holds).
/// Small blocks share a run that fits in the cache among threads; a run beyond it wants blocks
/// long enough to read as a few long streams (with interleave<>). Chosen at run time, so one nest
/// serves both (a specialize<> would compile two). V must be split, and inner<V> must not need a
/// block length known at compile time: it is not the vector lanes, nor unrolled, and V is not a
/// reduction variable.
template <auto V, index_t F, index_t MinBytes = beyond_cache>
struct large_blocks {
  static_assert(F >= 1, "loom::large_blocks<V, F>: the block length F must be at least 1");
  static_assert(MinBytes >= 0 || MinBytes == beyond_cache, "loom::large_blocks<V, F, MinBytes>: MinBytes must be >= 0 (or loom::beyond_cache)");
  using loop = loop_t<V>;
  static constexpr index_t factor = F;
  static constexpr index_t min_bytes = MinBytes;
};

namespace detail {
/// (The default schedule's, not a user directive.) A chunked reduction over V (split, its outer
/// loop parallel) whose extent is under Below takes chunks of F points (F at most the split's
/// factor) instead of the split's, so that threads have chunks to share. Chosen per run: the
/// chunks' nest is compiled once for both lengths (a specialize<> compiles two).
template <auto V, index_t F, index_t Below>
struct short_extent_chunks {
  using loop = loop_t<V>;
  static constexpr index_t factor = F;
  static constexpr index_t below = Below;
};
}  // namespace detail

/// Use the default schedule (loom::run(def) and loom::run<loom::auto_schedule>(def) are the same;
/// in a pipeline, a stage without loop directives gets it).
struct auto_schedule {};

/// A schedule: directives applied in order.
template <class... Directives>
struct schedule {};

}  // namespace loom
