// SPDX-License-Identifier: MIT
// loom/kernels/conv/run_convolution.hpp — runs a convolution definition (convolution.hpp) as one
// call of the convolution engine, with the checks of every loom::run (extents, bounds, aliasing)
// before anything is written, and the definition's epilogue applied to each register tile.
#pragma once
#include <type_traits>

#include "../../lower/find_reduction.hpp"
#include "../../lower/run.hpp"
#include "../../lower/state.hpp"
#include "../../simd/prefetch.hpp"
#include "convolution.hpp"
#include "depthwise.hpp"
#include "direct.hpp"
#include "pack.hpp"
#include "winograd.hpp"
#include "policy.hpp"

namespace loom {

/// A schedule that demands the convolution engine (a compile error says what is not a
/// convolution).
template <class Policy = void>
struct conv_schedule {
  using policy = Policy;
};

namespace conv_detail {

template <class S>
inline constexpr bool is_conv_schedule = false;
template <class P>
inline constexpr bool is_conv_schedule<conv_schedule<P>> = true;

/// The roles of a convolution definition's variables and operands (only for one that matches).
template <class Def>
struct roles {
  using CV = convolution<Def>;
  using ops = typename CV::ops;
  using In = typename ops::In;
  using Wt = typename ops::Wt;
  using in_idx = typename input_read<In>::indices;
  using N = typename CV::N;
  using Y = typename CV::Y;
  using X = typename CV::X;
  using CO = typename CV::CO;
  using C = meta::at<in_idx, 3>;
  using RY = window_partner<typename meta::at<in_idx, 1>::vars, Y>;
  using RX = window_partner<typename meta::at<in_idx, 2>::vars, X>;
  static constexpr bool depthwise = ops::kind == 2;
};

/// The weights access read as (ky, kx, c, co) whatever the order of its dimensions (depthwise:
/// c is 0 and the access has no channel dimension of its own): the stride of each, found once.
template <class Def, class A>
struct weight_reader {
  using R = roles<Def>;
  using value_type = typename A::value_type;
  const A* a;
  std::array<index_t, 4> ext;
  const typename A::element_type* base = nullptr;  // the element at (0, 0, 0, 0)
  std::array<index_t, 4> stride{};                  // along ky, kx, c, co
  weight_reader(const A* acc, std::array<index_t, 4> e) : a(acc), ext(e) {
    index_t off = 0;
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((off -= origin_of(a->view, D) * a->view.stride(D),
        stride[role<meta::at<typename A::index_types, D>>] += a->view.stride(D)), ...);
    }(std::make_index_sequence<A::rank>{});
    base = a->view.data() + off;
  }
  index_t extent(std::size_t d) const { return ext[d]; }
  value_type operator()(index_t ky, index_t kx, index_t c, index_t co) const { return *at(ky, kx, c, co); }
  /// (ky, kx, c, co) as a pointer where the output channels are contiguous, else null.
  const typename A::element_type* channel_run(index_t ky, index_t kx, index_t c, index_t co) const {
    return stride[3] == 1 ? at(ky, kx, c, co) : nullptr;
  }
  const typename A::element_type* at(index_t ky, index_t kx, index_t c, index_t co) const {
    return base + ky * stride[0] + kx * stride[1] + c * stride[2] + co * stride[3];
  }
  /// Which of (ky, kx, c, co) variable V of the access is.
  template <class V>
  static constexpr std::size_t role = std::is_same_v<V, typename R::RY>   ? 0
                                      : std::is_same_v<V, typename R::RX> ? 1
                                      : std::is_same_v<V, typename R::CO> ? 3
                                                                          : 2;
};

/// The definition's right side evaluated on a vector of the tile: the reduction's value from the
/// registers, the other reads at the tile's pixel and channels (bias(co), skip(n, y, x, co), ...).
template <class Def, class State>
struct expression_epilogue {
  using R = roles<Def>;
  using pixel_vars = meta::list<typename R::N, typename R::Y, typename R::X>;
  // The right side with the reduction's operands left out (a reduction over a constant: its value
  // comes from the tile), so that a pixel's copy holds the epilogue's own reads only.
  static auto epilogue_side(const Def& d) {
    using Red = std::remove_cvref_t<decltype(lower::scheduled_reduction(d.rhs))>;
    using T = typename Def::value_type;
    using Stub = reduce_node<typename Red::op_type, typename Red::rvars, constant<T>>;
    return lower::replace_reduction(d.rhs, Stub(constant<T>(T(0))));
  }
  using Side = decltype(epilogue_side(std::declval<const Def&>()));
  using Out = typename Def::lhs_type;
  Def def;         // accesses bound (a copy: its strides stay in registers, not behind a pointer)
  State at;        // extents set; coordinates set per call
  Side side = epilogue_side(def);

  /// The epilogue at one output pixel, for its vectors of channels: a copy whose accesses hold the
  /// pixel's (n, y, x) in their base pointers, so that each vector adds only its channel's term
  /// (with the whole address per vector, skip(n, y, x, co) cost more than Winograd's output
  /// transform; docs/tuning.md#fused-epilogues).
  struct at_one_pixel {
    Side rhs;
    Out lhs;
    rebased_state<State, pixel_vars> s;
    template <class B>
    LOOM_INLINE B apply(const B& v, index_t j, index_t lanes) {
      using VM = vmode<typename R::CO, B::size, false, true>;
      s.template set<typename R::CO>(j);
      s.active = lanes;
      with_reduction_value<rebased_state<State, pixel_vars>, B> c{s, v, lanes};
      auto r = rhs.template eval_v<VM>(c);
      if constexpr (convolution<Def>::accumulates) r = r + lhs.template eval_v<VM>(c);
      return r;
    }
  };
  LOOM_INLINE at_one_pixel pixel(const out_point& p) const {
    at_one_pixel r{side, def.lhs, rebased_state<State, pixel_vars>(at_pixel(p))};
    if constexpr (convolution<Def>::accumulates) r.lhs.template rebase<pixel_vars>(r.s);
    r.rhs.for_each_access([&](auto& a) LOOM_LAMBDA_INLINE { a.template rebase<pixel_vars>(r.s); });
    return r;
  }
  /// Asks for the lines of channels [j, j + count) at pixel p of every read that moves with the
  /// pixel (skip(n, y, x, co); not bias(co), nor the reduction's own operands) to come into L2.
  void prefetch_at(const out_point& p, index_t j, index_t count) const {
    State s = at_pixel(p);
    s.template set<typename R::CO>(j);
    auto ask = [&](const auto& a) {
      using A = std::remove_cvref_t<decltype(a)>;
      if constexpr (moves_with_pixel<A> && requires { a.address(s); }) {
        constexpr index_t line = index_t(64 / sizeof(typename A::value_type));
        const auto* first = a.address(s);
        const index_t step = a.template stride_along<typename R::CO>();
        for (index_t c = 0; c < count; c += line) simd::prefetch_l2(first + c * step, 0);
      }
    };
    def.rhs.for_each_access(ask);
    if constexpr (convolution<Def>::accumulates) ask(def.lhs);
  }
  /// The state at pixel p (its channel still to set).
  LOOM_INLINE State at_pixel(const out_point& p) const {
    State s = at;
    s.template set<typename R::N>(p.n);
    s.template set<typename R::Y>(p.y);
    s.template set<typename R::X>(p.x);
    return s;
  }
  template <class A>
  static constexpr bool moves_with_pixel =
      !meta::contains<typename A::vars, typename R::RY> && !meta::contains<typename A::vars, typename R::RX> &&
      (meta::contains<typename A::vars, typename R::N> || meta::contains<typename A::vars, typename R::Y> ||
       meta::contains<typename A::vars, typename R::X>);
};

/// Every point by the definition's own scalar evaluation: where the engine's kernels do not apply
/// at run time (a stride or dilation below 1, channels that are not contiguous).
template <class Def, class State>
void plain_points(const Def& d, State s) {
  using R = roles<Def>;
  using T = typename Def::value_type;
  const index_t n_ = s.template extent<typename R::N>(), h = s.template extent<typename R::Y>(), w = s.template extent<typename R::X>(),
                c_ = s.template extent<typename R::CO>();
  for (index_t n = 0; n < n_; ++n)
    for (index_t y = 0; y < h; ++y)
      for (index_t x = 0; x < w; ++x)
        for (index_t co = 0; co < c_; ++co) {
          s.template set<typename R::N>(n);
          s.template set<typename R::Y>(y);
          s.template set<typename R::X>(x);
          s.template set<typename R::CO>(co);
          T v = d.rhs.eval(s);
          if constexpr (convolution<Def>::accumulates) v = d.lhs.eval(s) + v;
          d.lhs.store(s, v);
        }
}

/// Policy void: the default for the element type.
template <class Policy, class Def>
void run_convolution(const Def& def) {
  using R = roles<Def>;
  using CV = convolution<Def>;
  using T = typename Def::value_type;
  using P = std::conditional_t<std::is_void_v<Policy>, default_conv_policy<T>, Policy>;
  using State = loop_state<typename Def::vars, 0>;
  State st;
  index_t points = 0;
  if (!detail::check_run(def, st, points)) return;  // extents, an empty output, every read in bounds
  detail::run_bound(def, CV::accumulates, [&](const Def& d) {
    const auto& red = lower::scheduled_reduction(d.rhs);
    const auto& in = [&]() -> const auto& {
      if constexpr (R::ops::p_is_input) return red.body.a;
      else return red.body.b;
    }();
    const auto& w = [&]() -> const auto& {
      if constexpr (R::ops::p_is_input) return red.body.b;
      else return red.body.a;
    }();
    conv2d_shape s{};
    s.N = st.template extent<typename R::N>();
    s.OH = st.template extent<typename R::Y>(), s.OW = st.template extent<typename R::X>();
    s.CO = st.template extent<typename R::CO>();
    s.KH = st.template extent<typename R::RY>(), s.KW = st.template extent<typename R::RX>();
    s.H = in.view.extent(1), s.W = in.view.extent(2);
    const auto& iy = std::get<1>(in.idx);
    const auto& ix = std::get<2>(in.idx);
    s.sh = iy.template coef<typename R::Y>(), s.dh = iy.template coef<typename R::RY>(), s.pt = -iy.offset();
    s.sw = ix.template coef<typename R::X>(), s.dw = ix.template coef<typename R::RX>(), s.pl = -ix.offset();
    if constexpr (input_read<typename R::In>::padded) s.pad_value = double(in.exterior);
    if constexpr (R::depthwise) {
      s.C = s.CO, s.Cg = 1, s.groups = s.CO, s.COg = 1;
    } else {
      s.C = st.template extent<typename R::C>(), s.Cg = s.C, s.groups = 1, s.COg = s.CO;
    }
    const auto& iv = in.view;
    const auto& ov = d.lhs.view;
    const bool kernels_apply = s.sh >= 1 && s.sw >= 1 && s.dh >= 1 && s.dw >= 1 && iv.stride(3) == 1 && ov.stride(3) == 1 &&
                               origin_of(iv, 0) == 0 && origin_of(iv, 1) == 0 && origin_of(iv, 2) == 0 && origin_of(iv, 3) == 0;
    if (!kernels_apply) {
      plain_points(d, st);
      return;
    }
    const weight_reader<Def, std::remove_cvref_t<decltype(w)>> reader(&w, {s.KH, s.KW, s.Cg, s.CO});
    const nhwc<const T> src{iv.data(), iv.stride(0), iv.stride(1), iv.stride(2)};
    const nhwc<T> dst{ov.data(), ov.stride(0), ov.stride(1), ov.stride(2)};
    // Only the kernels this definition's form can reach are compiled: depthwise, or dense
    // (Winograd or direct, a run-time choice by the extents). A 1 x 1 layer takes the direct
    // kernel, which reads the input in place as the GEMM engine would (no copy), and keeps the
    // engine's instantiation out of every convolution's compile time (docs/conv.md, "Status").
    auto go = [&](const auto& epi) {
      if constexpr (R::depthwise) {
        const auto packed = conv2d_packed_weights<P>::template pack<false, false>(reader, s.groups, conv_layouts{}, true);
        if (!packed.finite()) plain_points(d, st);  // a NaN or infinite weight: padded taps multiplied, as written
        else if (packed.depthwise()) run_depthwise<P>(s, src, packed, dst, epi);
        else run_dense<P>(s, src, packed, dst, epi);  // one channel: a dense 1-channel layer
      } else {
        // F(4 x 4) or direct: F(2 x 2) (chosen for few large tiles) is not compiled here, for the
        // compile time of every convolution written in index notation.
        conv_path path = chosen_path<T>(s, conv_algorithm::automatic);
        if (path == conv_path::winograd2) path = conv_path::direct;
        const auto packed = conv2d_packed_weights<P>::template pack<true, false>(reader, s.groups, layout_for(path), true);
        if (!packed.finite()) plain_points(d, st);  // (see above)
        else if (path == conv_path::winograd4) run_winograd<4, P>(s, src, packed.vectors(), packed.winograd_data(), dst, epi);
        else run_dense<P>(s, src, packed, dst, epi);
      }
    };
    if constexpr (CV::bare && !CV::accumulates) go(identity_epilogue{});
    else go(expression_epilogue<Def, State>{d, st});
  });
}

}  // namespace conv_detail
}  // namespace loom
