// SPDX-License-Identifier: MIT
// loom/kernels/conv/policy.hpp — the compile-time blocking of the direct convolution kernels.
//
// The dense kernel keeps a register tile of `pixels` output pixels (along a row) x `vectors`
// vectors of `lanes` output channels: per input channel and tap it loads `vectors` weight vectors
// and broadcasts one input value per pixel, so it does pixels x vectors FMAs for
// pixels + vectors loads. The tile plus the weight vectors and a broadcast must fit the vector
// registers: 32 with AVX-512 (6 x 4 = 24 accumulators, 64 float channels per tile), 16 with AVX2
// (6 x 2 = 12, 16 float channels). Narrower output-channel counts take fewer vectors and more
// pixels (conv_tile_for): the tile is chosen per call from CO, within the same register budget.
#pragma once
#include <algorithm>
#include <type_traits>

#include "../../core/config.hpp"
#include "../../simd/arch.hpp"

namespace loom {

template <class T, index_t Lanes, index_t Pixels, index_t Vectors, index_t DepthwisePixels = 0>
struct conv_policy {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "loom::conv_policy: float or double");
  static_assert(Lanes >= 1 && (Lanes & (Lanes - 1)) == 0, "loom::conv_policy: lanes is a power of two");
  static_assert(simd::width_available<T, std::size_t(Lanes)>,
                "loom::conv_policy: no SIMD target of this build has vectors of that many lanes (build with -march=native?)");
  static_assert(Pixels >= 1 && Vectors >= 1, "loom::conv_policy: a tile has at least one pixel and one vector");
  static_assert(Pixels * Vectors + Vectors + 1 <= simd::vector_registers<T, std::size_t(Lanes)>,
                "loom::conv_policy: the tile (pixels x vectors accumulators, the weight vectors and a broadcast) needs "
                "more vector registers than the target has");
  using value_type = T;
  static constexpr index_t lanes = Lanes, pixels = Pixels, vectors = Vectors;
  static constexpr index_t registers = simd::vector_registers<T, std::size_t(Lanes)>;
  /// The depthwise tile: pixels x depthwise_vectors, the 3 taps' weights for each vector and a
  /// column of input beside them (depthwise.hpp); two vectors where there are 32 registers, one
  /// where 16. DepthwisePixels 0: as many pixels as that leaves registers for, at most 8.
  static constexpr index_t depthwise_vectors = std::min<index_t>(Vectors, registers >= 32 ? 2 : 1);
  static constexpr index_t depthwise_pixels =
      DepthwisePixels > 0 ? DepthwisePixels : std::min<index_t>(8, (registers - 4 * depthwise_vectors) / depthwise_vectors);
  static_assert(DepthwisePixels >= 0 && depthwise_pixels * depthwise_vectors + 4 * depthwise_vectors <= registers,
                "loom::conv_policy: the depthwise tile (pixels x vectors accumulators, 3 taps' weights and a column of "
                "input per vector) needs more vector registers than the target has");
  /// Output channels of one tile (and of one block of packed weights).
  static constexpr index_t channels = Lanes * Vectors;
};

template <class P>
concept ConvPolicy = requires {
  typename P::value_type;
  P::lanes;
  P::pixels;
  P::vectors;
  P::depthwise_pixels;
};

/// The default for element type T on the widest target of this build.
template <class T>
using default_conv_policy = std::conditional_t<simd::native_width<T> * sizeof(T) >= 64,
                                               conv_policy<T, index_t(simd::native_width<T>), 6, 4>,
                                               conv_policy<T, index_t(simd::native_width<T>), 6, 2>>;

}  // namespace loom
