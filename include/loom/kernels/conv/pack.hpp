// SPDX-License-Identifier: MIT
// loom/kernels/conv/pack.hpp — weights in the order the direct kernels read them, packed once.
//
// Dense and grouped: for each group g and block b of `channels` output channels,
//   packed[((g * blocks + b) * KH * KW + ky * KW + kx) * Cg * channels + c * channels + j]
//     = w(ky, kx, c, g * COg + b * channels + j)          (0 past the group's last channel)
// so a tile's k loop (taps, then input channels) reads one contiguous stream of `channels`
// values per step. Depthwise: packed[(ky * KW + kx) * CO + co] = w(ky, kx, 0, co), one vector of
// channels per tap.
#pragma once
#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <array>

#include "../../core/config.hpp"
#include "params.hpp"
#include "policy.hpp"

namespace loom {

namespace conv_detail {

struct aligned_delete {
  void operator()(void* p) const { ::operator delete(p, std::align_val_t{64}); }
};

/// Vectors per tile for output channel groups of COg channels: as many as the policy's tile has,
/// fewer when a group has fewer channels (a 16-channel group in a 64-channel tile would compute
/// three vectors of zeros).
template <class P>
constexpr index_t tile_vectors(index_t COg) {
  return std::clamp<index_t>((COg + P::lanes - 1) / P::lanes, 1, P::vectors);
}

/// G g for one column g (3 values) -> 6: the weight transform's 1-D step.
template <class T>
constexpr std::array<T, 6> winograd_g(T g0, T g1, T g2) {
  return {g0 / T(4), -(g0 + g1 + g2) / T(6), -(g0 - g1 + g2) / T(6), g0 / T(24) + g1 / T(12) + g2 / T(6),
          g0 / T(24) - g1 / T(12) + g2 / T(6), g2};
}

/// The weights transformed and packed: for each block b of NR output channels, 36 matrices
/// C x NR (one per position xi of the 6 x 6 tile), U[((b * 36 + xi) * C + c) * NR + j].
template <class P, class WR>
void winograd_pack(const WR& w, index_t C, index_t CO, index_t NR, typename P::value_type* dst) {
  using T = typename P::value_type;
  const index_t blocks = (CO + NR - 1) / NR;
  for (index_t b = 0; b < blocks; ++b)
    for (index_t j = 0; j < NR; ++j) {
      const index_t co = b * NR + j;
      for (index_t c = 0; c < C; ++c) {
        std::array<std::array<double, 6>, 6> u{};
        if (co < CO) {
          std::array<std::array<double, 3>, 6> gt{};  // G g: 6 x 3
          for (index_t kx = 0; kx < 3; ++kx) {
            const auto col = winograd_g<double>(double(w(0, kx, c, co)), double(w(1, kx, c, co)), double(w(2, kx, c, co)));
            for (std::size_t i = 0; i < 6; ++i) gt[i][std::size_t(kx)] = col[i];
          }
          for (std::size_t i = 0; i < 6; ++i) u[i] = winograd_g<double>(gt[i][0], gt[i][1], gt[i][2]);  // (G g) G^T
        }
        for (std::size_t xi = 0; xi < 36; ++xi) dst[((b * 36 + index_t(xi)) * C + c) * NR + j] = T(u[xi / 6][xi % 6]);
      }
    }
}

}  // namespace conv_detail

/// Weights packed for policy P (loom::pack_conv2d_weights). Reusable across calls with the same
/// parameters' groups and any input of C = Cg x groups channels; the call checks it.
template <class P>
class conv2d_packed_weights {
 public:
  using value_type = typename P::value_type;
  using policy = P;

  conv2d_packed_weights() = default;

  index_t kh() const { return kh_; }
  index_t kw() const { return kw_; }
  index_t channels_per_group() const { return cg_; }
  index_t out_channels() const { return co_; }
  index_t groups() const { return groups_; }
  /// Vectors per tile the packing was made for (conv_detail::tile_vectors).
  index_t vectors() const { return vectors_; }
  bool depthwise() const { return depthwise_; }
  /// Whether the weights are also transformed for Winograd F(4 x 4, 3 x 3) (winograd.hpp).
  bool winograd() const { return wino_ != nullptr; }
  /// The direct kernels' layout.
  const value_type* data() const { return data_.get(); }
  /// The Winograd layout (null when not packed for it), with vectors() vectors per tile.
  const value_type* winograd_data() const { return wino_.get(); }
  std::size_t bytes() const { return (size_ + wino_size_) * sizeof(value_type); }

  /// Packs w (KH x KW x Cg x CO, any strides) for `groups` groups, and with `winograd` (a 3 x 3
  /// window, one group) transformed for Winograd as well: which one runs is chosen per call.
  template <class WV>
  static conv2d_packed_weights pack(const WV& w, index_t groups, bool winograd = false) {
    conv2d_packed_weights r;
    r.kh_ = w.extent(0), r.kw_ = w.extent(1), r.cg_ = w.extent(2), r.co_ = w.extent(3), r.groups_ = groups;
    const index_t C = r.cg_ * groups, COg = r.co_ / groups;
    r.depthwise_ = groups == C && groups > 1 && r.cg_ == 1 && COg == 1;
    const index_t taps = r.kh_ * r.kw_;
    if (winograd) {
      const index_t NR = conv_detail::tile_vectors<P>(r.co_) * P::lanes, blocks = (r.co_ + NR - 1) / NR;
      r.wino_size_ = std::size_t(blocks * 36 * r.cg_ * NR);
      r.wino_.reset(static_cast<value_type*>(::operator new(std::max<std::size_t>(r.wino_size_, 1) * sizeof(value_type), std::align_val_t{64})));
      conv_detail::winograd_pack<P>(w, r.cg_, r.co_, NR, r.wino_.get());
    }
    if (r.depthwise_) {
      r.vectors_ = 1;
      r.allocate(std::size_t(taps * r.co_));
      value_type* d = r.data_.get();
      for (index_t ky = 0; ky < r.kh_; ++ky)
        for (index_t kx = 0; kx < r.kw_; ++kx)
          for (index_t co = 0; co < r.co_; ++co) d[(ky * r.kw_ + kx) * r.co_ + co] = w(ky, kx, 0, co);
      return r;
    }
    r.vectors_ = conv_detail::tile_vectors<P>(COg);
    const index_t NR = r.vectors_ * P::lanes;
    const index_t blocks = (COg + NR - 1) / NR;
    r.allocate(std::size_t(groups * blocks * taps * r.cg_ * NR));
    value_type* d = r.data_.get();
    for (index_t g = 0; g < groups; ++g)
      for (index_t b = 0; b < blocks; ++b)
        for (index_t ky = 0; ky < r.kh_; ++ky)
          for (index_t kx = 0; kx < r.kw_; ++kx)
            for (index_t c = 0; c < r.cg_; ++c) {
              value_type* dst = d + (((g * blocks + b) * taps + ky * r.kw_ + kx) * r.cg_ + c) * NR;
              for (index_t j = 0; j < NR; ++j) {
                const index_t co = b * NR + j;
                dst[j] = co < COg ? value_type(w(ky, kx, c, g * COg + co)) : value_type(0);
              }
            }
    return r;
  }

 private:
  void allocate(std::size_t n) {
    size_ = n;
    data_.reset(static_cast<value_type*>(::operator new(std::max<std::size_t>(n, 1) * sizeof(value_type), std::align_val_t{64})));
  }
  std::unique_ptr<value_type[], conv_detail::aligned_delete> data_;
  std::size_t size_ = 0;
  index_t kh_ = 0, kw_ = 0, cg_ = 0, co_ = 0, groups_ = 1, vectors_ = 1;
  bool depthwise_ = false;
  std::unique_ptr<value_type[], conv_detail::aligned_delete> wino_;
  std::size_t wino_size_ = 0;
};

}  // namespace loom
