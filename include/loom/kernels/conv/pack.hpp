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
  const value_type* data() const { return data_.get(); }
  std::size_t bytes() const { return size_ * sizeof(value_type); }

  /// Packs w (KH x KW x Cg x CO, any strides) for `groups` groups.
  template <class WV>
  static conv2d_packed_weights pack(const WV& w, index_t groups) {
    conv2d_packed_weights r;
    r.kh_ = w.extent(0), r.kw_ = w.extent(1), r.cg_ = w.extent(2), r.co_ = w.extent(3), r.groups_ = groups;
    const index_t C = r.cg_ * groups, COg = r.co_ / groups;
    r.depthwise_ = groups == C && groups > 1 && r.cg_ == 1 && COg == 1;
    const index_t taps = r.kh_ * r.kw_;
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
};

}  // namespace loom
