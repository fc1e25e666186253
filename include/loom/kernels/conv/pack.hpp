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
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>
#include <array>

#include "../../core/config.hpp"
#include "../../core/scratch.hpp"
#include "items.hpp"
#include "params.hpp"
#include "policy.hpp"

namespace loom {

namespace conv_detail {

/// The scratch purposes of weights packed by a call for itself (pack's in_scratch).
struct direct_layout_scratch {};
struct winograd_layout_scratch {};
struct winograd2_layout_scratch {};

struct aligned_delete {
  void operator()(void* p) const { ::operator delete(p, std::align_val_t{64}); }
};

/// Whether a tile of V vectors is compiled for policy P: the policy's own and, below it, half of it
/// or (for a tile of at most two vectors) every width. Each width is a copy of every kernel (a
/// quarter of a convolution's compile time per width); 4 and 2 on AVX-512 cover 16- and 32-channel
/// layers without wasting half the tile, and 48 channels waste a quarter.
template <class P>
constexpr bool tile_width_compiled(index_t V) {
  return V == P::vectors || (P::vectors <= 2 ? V >= 1 : V == P::vectors / 2);
}

/// Vectors per tile for output channel groups of COg channels: the narrowest compiled tile that
/// holds them, else the policy's (a 16-channel group in a 64-channel tile would compute three
/// vectors of zeros).
template <class P>
constexpr index_t tile_vectors(index_t COg) {
  const index_t need = std::clamp<index_t>((COg + P::lanes - 1) / P::lanes, 1, P::vectors);
  for (index_t v = need; v <= P::vectors; ++v)
    if (tile_width_compiled<P>(v)) return v;
  return P::vectors;
}

/// w(ky, kx, c, co ...) as a pointer where the output channels are contiguous in w (HWIO), else
/// null: packing then copies runs of channels instead of reading value by value through four
/// strides (docs/tuning.md#weight-packing).
template <class WV>
auto channel_run(const WV& w, index_t ky, index_t kx, index_t c, index_t co) {
  if constexpr (requires { w.channel_run(ky, kx, c, co); }) return w.channel_run(ky, kx, c, co);
  else return w.stride(3) == 1 ? &w(ky, kx, c, co) : nullptr;
}

/// Whether n values are all finite (neither infinite nor NaN): by their exponent bits, a loop the
/// compiler vectorizes.
template <class T>
bool all_finite(const T* p, std::size_t n) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  constexpr U exponent = sizeof(T) == 4 ? U(0x7F800000u) : U(0x7FF0000000000000ull);
  U all_ones = 0;  // (nonzero when some value has every exponent bit set)
  for (std::size_t q = 0; q < n; ++q) {
    U b;
    std::memcpy(&b, p + q, sizeof(T));
    all_ones |= U((b & exponent) == exponent);
  }
  return all_ones == 0;
}

/// Whether packing this many weights is worth waking loom's team for (a 64 x 64 3 x 3 layer's
/// Winograd packing took longer on two threads than on one: docs/tuning.md#weight-packing).
inline bool worth_a_team(index_t weights) { return weights >= index_t{1} << 18; }

/// Channels c0 .. c1 - 1 of block b of winograd_pack: G g G^T for NR output channels at once,
/// innermost in every loop, so the arithmetic vectorizes and each row a channel writes is
/// contiguous (one pair at a time ran 90 ns per pair). The loops over the NR lanes are marked
/// LOOM_SIMD_LOOP (core/config.hpp).
template <class P, index_t M, class WR>
void winograd_pack_channels(const WR& w, index_t C, index_t CO, index_t NR, typename P::value_type* dst, index_t b, index_t c0,
                            index_t c1) {
  using T = typename P::value_type;
  constexpr index_t A = M + 2, A2 = A * A;
  constexpr std::size_t a = std::size_t(A), most = std::size_t(P::vectors * P::lanes);  // NR <= most
  const index_t live = std::min(NR, CO - b * NR);
  const std::size_t nr = std::size_t(NR);
  alignas(64) std::array<double, 9 * most> g;
  alignas(64) std::array<double, 3 * a * most> gt;
  alignas(64) std::array<double, a * a * most> u;
  // G applied to 3 values (x0, x1, x2) on NR lanes at a time.
  auto step = [nr](const double* x0, const double* x1, const double* x2, double* out, std::size_t stride) {
    // Multiplications by the reciprocals (in double, within an ulp of the quotients): the
    // divisions made packing cost as much as the layer's products.
    constexpr double r2 = 1.0 / 2, r4 = 1.0 / 4, r6 = 1.0 / 6, r12 = 1.0 / 12, r24 = 1.0 / 24;
    LOOM_SIMD_LOOP
    for (std::size_t j = 0; j < nr; ++j) {
      const double p0 = x0[j], p1 = x1[j], p2 = x2[j];
      if constexpr (M == 4) {
        out[0 * stride + j] = p0 * r4;
        out[1 * stride + j] = -(p0 + p1 + p2) * r6;
        out[2 * stride + j] = -(p0 - p1 + p2) * r6;
        out[3 * stride + j] = p0 * r24 + p1 * r12 + p2 * r6;
        out[4 * stride + j] = p0 * r24 - p1 * r12 + p2 * r6;
        out[5 * stride + j] = p2;
      } else {
        out[0 * stride + j] = p0;
        out[1 * stride + j] = (p0 + p1 + p2) * r2;
        out[2 * stride + j] = (p0 - p1 + p2) * r2;
        out[3 * stride + j] = p2;
      }
    }
  };
  for (index_t c = c0; c < c1; ++c) {
    for (index_t k = 0; k < 9; ++k) {
      double* gk = &g[std::size_t(k) * nr];
      if (const auto* p = channel_run(w, k / 3, k % 3, c, b * NR)) {
        LOOM_SIMD_LOOP
        for (index_t j = 0; j < live; ++j) gk[j] = double(p[j]);
      } else {
        for (index_t j = 0; j < live; ++j) gk[j] = double(w(k / 3, k % 3, c, b * NR + j));
      }
      for (index_t j = live; j < NR; ++j) gk[j] = 0.0;
    }
    // G g (A x 3) then (G g) G^T (A x A).
    for (std::size_t kx = 0; kx < 3; ++kx)  // column kx of g -> column kx of G g: gt[(i * 3 + kx)]
      step(&g[(0 + kx) * nr], &g[(3 + kx) * nr], &g[(6 + kx) * nr], &gt[kx * nr], 3 * nr);
    for (std::size_t i = 0; i < a; ++i)  // row i of G g -> row i of U: u[(i * A + k)]
      step(&gt[(i * 3 + 0) * nr], &gt[(i * 3 + 1) * nr], &gt[(i * 3 + 2) * nr], &u[i * a * nr], nr);
    for (index_t xi = 0; xi < A2; ++xi) {
      T* to = dst + ((b * A2 + xi) * C + c) * NR;
      const double* from = &u[std::size_t(xi) * nr];
      LOOM_SIMD_LOOP
      for (index_t j = 0; j < NR; ++j) to[j] = T(from[j]);
    }
  }
}

/// The weights transformed for F(M x M, 3 x 3) (M = 4 or 2; A = M + 2) and packed: for each
/// block b of NR output channels, A^2 matrices C x NR (one per position xi of the A x A tile),
/// U[((b * A^2 + xi) * C + c) * NR + j]. Work items: a block's input channels in runs of 16.
template <class P, index_t M, class WR>
void winograd_pack(const WR& w, index_t C, index_t CO, index_t NR, typename P::value_type* dst) {
  constexpr index_t run = 16;
  const index_t blocks = (CO + NR - 1) / NR, runs = (C + run - 1) / run;
  for_items(blocks * runs, [&](index_t item) {
    const index_t b = item / runs, c0 = item % runs * run;
    winograd_pack_channels<P, M>(w, C, CO, NR, dst, b, c0, std::min(C, c0 + run));
  }, worth_a_team(9 * C * blocks * NR));
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
  /// A moved-from object is empty, as a default-constructed one (a call with it throws
  /// shape_error): it must not keep pointers to the buffers it gave away.
  conv2d_packed_weights(conv2d_packed_weights&& o) noexcept { swap(o); }
  conv2d_packed_weights& operator=(conv2d_packed_weights&& o) noexcept {
    conv2d_packed_weights taken(std::move(o));
    swap(taken);
    return *this;
  }
  conv2d_packed_weights(const conv2d_packed_weights&) = delete;
  conv2d_packed_weights& operator=(const conv2d_packed_weights&) = delete;
  ~conv2d_packed_weights() = default;

  index_t kh() const { return kh_; }
  index_t kw() const { return kw_; }
  index_t channels_per_group() const { return cg_; }
  index_t out_channels() const { return co_; }
  index_t groups() const { return groups_; }
  /// Vectors per tile the packing was made for (conv_detail::tile_vectors).
  index_t vectors() const { return vectors_; }
  bool depthwise() const { return depthwise_; }
  /// Whether every weight is finite. The kernels multiply the taps that fall in the padding by the
  /// padding's value (or skip them for a whole tile), which gives the skipped taps' sum only for
  /// finite weights: calls with others run the plain loops (conv2d skips padded taps, as
  /// conv2d_reference does; index notation multiplies them, as the definition says).
  bool finite() const { return finite_; }
  /// Weight (ky, kx, c, co) read back from the direct layout (direct() must hold).
  value_type weight(index_t ky, index_t kx, index_t c, index_t co) const {
    const index_t tap = ky * kw_ + kx;
    if (depthwise_) return direct_[tap * co_ + co];
    const index_t COg = co_ / groups_, NR = vectors_ * P::lanes, blocks = (COg + NR - 1) / NR, taps = kh_ * kw_;
    const index_t g = co / COg, b = co % COg / NR, j = co % COg % NR;
    return direct_[(((g * blocks + b) * taps + tap) * cg_ + c) * NR + j];
  }
  /// Whether the weights are also transformed for Winograd F(4 x 4, 3 x 3) (winograd.hpp).
  bool winograd() const { return wino_ != nullptr; }
  /// Whether they are also transformed for F(2 x 2, 3 x 3).
  bool winograd2() const { return wino2_ != nullptr; }
  /// Whether they hold the direct kernels' layout.
  bool direct() const { return direct_ != nullptr; }
  /// The direct kernels' layout.
  const value_type* data() const { return direct_; }
  /// The F(4 x 4, 3 x 3) layout (null when not packed for it), with vectors() vectors per tile.
  const value_type* winograd_data() const { return wino_; }
  /// The F(2 x 2, 3 x 3) layout (null when not packed for it).
  const value_type* winograd2_data() const { return wino2_; }
  /// A 1 x 1's weights as the plain C x CO matrix (row-major), the GEMM engine's operand for
  /// channel planes (pointwise.hpp); null for other windows and for weights packed by the call.
  const value_type* plain_data() const { return plain_.get(); }
  std::size_t bytes() const { return (size_ + wino_size_ + wino2_size_ + plain_size_) * sizeof(value_type); }

  /// Packs w (KH x KW x Cg x CO, any strides) for `groups` groups in the layouts `which` asks for
  /// (the Winograd ones need a 3 x 3 window and one group): the call chooses among them.
  ///
  /// With `in_scratch` (a call that packs for itself: unpacked conv2d, index notation, which pack
  /// only the layout they run) the layouts live in the calling thread's grow-only scratch, reused
  /// from call to call, rather than in a fresh allocation whose first touch page-faults on every
  /// call (docs/tuning.md#convolution-layouts); the object is then valid until the thread packs
  /// again.
  ///
  /// F4, F2: whether the Winograd layouts are compiled at all (index notation never asks for F(2 x 2),
  /// nor a depthwise definition for either: each is a transform compiled per weights type).
  template <bool F4 = true, bool F2 = true, class WV>
  static conv2d_packed_weights pack(const WV& w, index_t groups, conv_detail::conv_layouts which, bool in_scratch = false) {
    conv2d_packed_weights r;
    r.in_scratch_ = in_scratch;
    r.kh_ = w.extent(0), r.kw_ = w.extent(1), r.cg_ = w.extent(2), r.co_ = w.extent(3), r.groups_ = groups;
    const index_t C = r.cg_ * groups, COg = r.co_ / groups;
    r.depthwise_ = groups == C && groups > 1 && r.cg_ == 1 && COg == 1;
    const index_t taps = r.kh_ * r.kw_;
    if (which.winograd4 || which.winograd2) r.vectors_ = conv_detail::tile_vectors<P>(r.co_);
    const index_t NRw = r.vectors_ * P::lanes, wblocks = (r.co_ + NRw - 1) / NRw;
    if (F4 && which.winograd4) {
      r.wino_size_ = std::size_t(wblocks * 36 * r.cg_ * NRw);
      r.wino_ = r.template storage<conv_detail::winograd_layout_scratch>(r.owned_wino_, r.wino_size_);
      if constexpr (F4) conv_detail::winograd_pack<P, 4>(w, r.cg_, r.co_, NRw, r.wino_);
      r.finite_ = r.finite_ && conv_detail::all_finite(r.wino_, r.wino_size_);  // (a transform keeps a non-finite weight so)
    }
    if (F2 && which.winograd2) {
      r.wino2_size_ = std::size_t(wblocks * 16 * r.cg_ * NRw);
      r.wino2_ = r.template storage<conv_detail::winograd2_layout_scratch>(r.owned_wino2_, r.wino2_size_);
      if constexpr (F2) conv_detail::winograd_pack<P, 2>(w, r.cg_, r.co_, NRw, r.wino2_);
      r.finite_ = r.finite_ && conv_detail::all_finite(r.wino2_, r.wino2_size_);
    }
    if (!which.direct) return r;
    if (r.depthwise_) {
      r.vectors_ = 1;
      value_type* d = r.allocate(std::size_t(taps * r.co_));
      for (index_t ky = 0; ky < r.kh_; ++ky)
        for (index_t kx = 0; kx < r.kw_; ++kx)
          for (index_t co = 0; co < r.co_; ++co) {
            const value_type v = w(ky, kx, 0, co);
            r.finite_ = r.finite_ && std::isfinite(v);
            d[(ky * r.kw_ + kx) * r.co_ + co] = v;
          }
      return r;
    }
    if (taps == 1 && groups == 1 && !in_scratch) {
      r.plain_size_ = std::size_t(r.cg_ * r.co_);
      r.plain_.reset(static_cast<value_type*>(::operator new(std::max<std::size_t>(r.plain_size_, 1) * sizeof(value_type), std::align_val_t{64})));
      for (index_t c = 0; c < r.cg_; ++c) {
        value_type* dst = r.plain_.get() + c * r.co_;
        if (const auto* p = conv_detail::channel_run(w, 0, 0, c, 0)) std::copy(p, p + r.co_, dst);
        else
          for (index_t co = 0; co < r.co_; ++co) dst[co] = value_type(w(0, 0, c, co));
      }
    }
    r.vectors_ = conv_detail::tile_vectors<P>(COg);
    const index_t NR = r.vectors_ * P::lanes;
    const index_t blocks = (COg + NR - 1) / NR;
    value_type* d = r.allocate(std::size_t(groups * blocks * taps * r.cg_ * NR));
    // Work items: one tap of one block of output channels, in parallel, each checking its values.
    std::vector<unsigned char> item_finite(std::size_t(groups * blocks * taps), 1);
    conv_detail::for_items(groups * blocks * taps, [&](index_t item) {
      const index_t tap = item % taps, gb = item / taps, g = gb / blocks, b = gb % blocks;
      const index_t ky = tap / r.kw_, kx = tap % r.kw_, live = std::min(NR, COg - b * NR), co0 = g * COg + b * NR;
      for (index_t c = 0; c < r.cg_; ++c) {
        value_type* dst = d + ((gb * taps + tap) * r.cg_ + c) * NR;
        if (const auto* p = conv_detail::channel_run(w, ky, kx, c, co0)) {
          std::copy(p, p + live, dst);
        } else {
          for (index_t j = 0; j < live; ++j) dst[j] = value_type(w(ky, kx, c, co0 + j));
        }
        std::fill(dst + live, dst + NR, value_type(0));
      }
      item_finite[std::size_t(item)] = conv_detail::all_finite(d + gb * taps * r.cg_ * NR + tap * r.cg_ * NR, std::size_t(r.cg_ * NR));
    }, conv_detail::worth_a_team(taps * r.cg_ * r.co_));
    r.finite_ = r.finite_ && std::all_of(item_finite.begin(), item_finite.end(), [](unsigned char f) { return f != 0; });
    return r;
  }

 private:
  void swap(conv2d_packed_weights& o) noexcept {
    using std::swap;
    swap(owned_, o.owned_), swap(owned_wino_, o.owned_wino_), swap(owned_wino2_, o.owned_wino2_), swap(plain_, o.plain_);
    swap(direct_, o.direct_), swap(wino_, o.wino_), swap(wino2_, o.wino2_);
    swap(size_, o.size_), swap(wino_size_, o.wino_size_), swap(wino2_size_, o.wino2_size_), swap(plain_size_, o.plain_size_);
    swap(kh_, o.kh_), swap(kw_, o.kw_), swap(cg_, o.cg_), swap(co_, o.co_), swap(groups_, o.groups_), swap(vectors_, o.vectors_);
    swap(depthwise_, o.depthwise_), swap(in_scratch_, o.in_scratch_), swap(finite_, o.finite_);
  }
  value_type* allocate(std::size_t n) {
    size_ = n;
    direct_ = storage<conv_detail::direct_layout_scratch>(owned_, n);
    return direct_;
  }
  /// n values for one layout: the thread's scratch for it, or an allocation the object owns.
  template <class Layout>
  value_type* storage(std::unique_ptr<value_type[], conv_detail::aligned_delete>& owned, std::size_t n) {
    if (in_scratch_) return detail::scratch<value_type, Layout>(std::max<std::size_t>(n, 1));
    owned.reset(static_cast<value_type*>(::operator new(std::max<std::size_t>(n, 1) * sizeof(value_type), std::align_val_t{64})));
    return owned.get();
  }
  std::unique_ptr<value_type[], conv_detail::aligned_delete> owned_, owned_wino_, owned_wino2_, plain_;
  value_type* direct_ = nullptr;
  value_type* wino_ = nullptr;
  value_type* wino2_ = nullptr;
  std::size_t size_ = 0, wino_size_ = 0, wino2_size_ = 0, plain_size_ = 0;
  index_t kh_ = 0, kw_ = 0, cg_ = 0, co_ = 0, groups_ = 1, vectors_ = 1;
  bool depthwise_ = false, in_scratch_ = false, finite_ = true;
};

}  // namespace loom
