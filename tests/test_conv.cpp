// tests/test_conv.cpp — loom::conv2d (kernels/conv.hpp) against a plain-loop reference of this
// file accumulated in double (not the library's conv2d_reference): random shapes, strides,
// dilations, paddings (wider than the kernel too) and groups; depthwise with one and two output
// channels per channel; packed weights reused across inputs (bit-identical to the unpacked call,
// and to itself on 1 and 2 threads); operands in any layout (NCHW and OIHW tensors seen through
// permuted views, strided, reversed and blocked views); an epilogue (bias + ReLU + a per-pixel
// term) that checks its own contract; outputs overlapping the input or the weights; every
// shape_error, naming the tensor, with nothing written.
//
// Few template instantiations on purpose (the file must compile quickly in CI): every operand is
// a loom::TensorView<T, 4>, T is float or double, and there are two epilogues (none and one).
#include "support.hpp"

#include <atomic>
#include <optional>

#include <loom/kernels/conv.hpp>

using loom::index_t;
using lt::idx_t;

namespace {

template <class T>
using view4 = loom::TensorView<T, 4>;

/// A convolution's shape and parameters (in N x H x W x C, weights KH x KW x C/groups x CO).
struct conv_case {
  index_t N = 1, H = 1, W = 1, C = 1, KH = 1, KW = 1, CO = 1, groups = 1;
  index_t sh = 1, sw = 1, dh = 1, dw = 1;
  index_t pt = 0, pl = 0, pb = 0, pr = 0;

  index_t Cg() const { return C / groups; }
  index_t COg() const { return CO / groups; }
  static index_t extent(index_t in, index_t lo, index_t hi, index_t k, index_t stride, index_t dil) {
    const index_t room = in + lo + hi - dil * (k - 1) - 1;
    return room < 0 ? 0 : room / stride + 1;
  }
  index_t OH() const { return extent(H, pt, pb, KH, sh, dh); }
  index_t OW() const { return extent(W, pl, pr, KW, sw, dw); }
  /// Multiply-adds of the reference (its run time).
  double macs() const { return double(N) * double(OH()) * double(OW()) * double(CO) * double(KH * KW * Cg()); }
  loom::conv2d_params params() const {
    return {.stride = {sh, sw}, .padding = {pt, pl, pb, pr}, .dilation = {dh, dw}, .groups = groups};
  }
  idx_t<4> in_ext() const { return {N, H, W, C}; }
  idx_t<4> w_ext() const { return {KH, KW, Cg(), CO}; }
  idx_t<4> out_ext() const { return {N, OH(), OW(), CO}; }
  std::string describe() const {
    return lt::str("N = ", N, ", H = ", H, ", W = ", W, ", C = ", C, ", CO = ", CO, ", kernel ", KH, " x ", KW, ", groups ", groups,
                   ", stride (", sh, ", ", sw, "), dilation (", dh, ", ", dw, "), padding (top ", pt, ", left ", pl, ", bottom ", pb,
                   ", right ", pr, ") -> OH = ", OH(), ", OW = ", OW());
  }
};

/// out(n, oy, ox, co) in double, row-major over (N, OH, OW, CO), straight from the definition.
template <class IV, class WV>
std::vector<double> reference(const conv_case& cs, const IV& in, const WV& w) {
  const index_t OH = cs.OH(), OW = cs.OW(), Cg = cs.Cg(), COg = cs.COg();
  std::vector<double> ref;
  ref.reserve(std::size_t(cs.N * OH * OW * cs.CO));
  for (index_t n = 0; n < cs.N; ++n)
    for (index_t oy = 0; oy < OH; ++oy)
      for (index_t ox = 0; ox < OW; ++ox)
        for (index_t co = 0; co < cs.CO; ++co) {
          const index_t g = co / COg;
          double acc = 0;
          for (index_t ky = 0; ky < cs.KH; ++ky) {
            const index_t iy = oy * cs.sh + ky * cs.dh - cs.pt;
            if (iy < 0 || iy >= cs.H) continue;
            for (index_t kx = 0; kx < cs.KW; ++kx) {
              const index_t ix = ox * cs.sw + kx * cs.dw - cs.pl;
              if (ix < 0 || ix >= cs.W) continue;
              for (index_t c = 0; c < Cg; ++c) acc += double(in(n, iy, ix, g * Cg + c)) * double(w(ky, kx, c, co));
            }
          }
          ref.push_back(acc);
        }
  return ref;
}

/// Relative tolerance (x max(1, |expected|)) of a sum of taps x Cg products against the double
/// reference.
template <class T>
double conv_tolerance(const conv_case& cs) {
  return lt::tolerance<T>(cs.KH * cs.KW * cs.Cg());
}

/// The test's epilogue: max(v + bias(channel), 0) + pixel_step * (pixel % 5). A pixel_step of 0
/// is plain bias + ReLU; otherwise a wrong pixel index shows in the result. It counts calls that
/// break the epilogue contract (lanes outside [1, B::size], channels or pixels out of range) and
/// then loads nothing.
template <class T>
struct bias_relu {
  const T* bias;
  double pixel_step;
  index_t pixels, channels;
  std::atomic<int>* violations;

  template <class B>
  B apply(B v, index_t pixel, index_t channel, index_t lanes) const {
    if (lanes < 1 || lanes > index_t(B::size) || channel < 0 || channel + lanes > channels || pixel < 0 || pixel >= pixels) {
      violations->fetch_add(1, std::memory_order_relaxed);
      return v;
    }
    const B b = loom::simd::load_first<B>(bias + channel, lanes);
    return xsimd::max(v + b, B(T(0))) + B(T(pixel_step * double(pixel % 5)));
  }
  double scalar(double v, index_t pixel, index_t channel) const {
    return std::max(v + double(bias[channel]), 0.0) + pixel_step * double(pixel % 5);
  }
};

/// A bias (exactly CO values: a sanitizer sees any load past them) and the violation counter.
template <class T>
struct epilogue_state {
  std::vector<T> bias;
  std::atomic<int> violations{0};
  double pixel_step = 0;
  conv_case cs;

  epilogue_state(lt::rng_t& g, const conv_case& c, double step) : pixel_step(step), cs(c) {
    for (index_t co = 0; co < c.CO; ++co) bias.push_back(lt::random_value<T>(g));
  }
  bias_relu<T> epilogue() { return {bias.data(), pixel_step, cs.N * cs.OH() * cs.OW(), cs.CO, &violations}; }
  /// The reference (row-major N, OH, OW, CO) passed through the epilogue.
  void apply(std::vector<double>& ref) {
    const auto e = epilogue();
    for (std::size_t q = 0; q < ref.size(); ++q)
      ref[q] = e.scalar(ref[q], index_t(q) / cs.CO, index_t(q) % cs.CO);
  }
};

/// Operands of one case: random input and weights, an output of NaN (every element must be
/// written), each in its own storage whose elements outside the view are a sentinel.
template <class T>
struct conv_data {
  conv_case cs;
  lt::buffer<T, 4> in, w, out;
  std::vector<double> ref;
  std::string info;
};

template <class T>
conv_data<T> make_data(lt::rng_t& g, const conv_case& cs, bool any_layout) {
  conv_data<T> d;
  d.cs = cs;
  auto lay = [&] { return any_layout ? lt::pick_layout(g) : lt::layout::row_major; };
  d.in = lt::random_buffer<T, 4>(cs.in_ext(), lay(), "in", g);
  d.w = lt::random_buffer<T, 4>(cs.w_ext(), lay(), "w", g);
  d.out = lt::make_buffer<T, 4>(cs.out_ext(), lay(), "out");
  lt::fill(d.out.view, std::numeric_limits<T>::quiet_NaN());
  d.ref = reference(cs, d.in.view, d.w.view);
  d.info = lt::str(lt::type_name<T>(), " ", cs.describe(), "; ", d.in.describe(), "; ", d.w.describe(), "; ", d.out.describe());
  return d;
}

/// Runs conv2d on d (weights packed first or not, with the epilogue or none).
template <class T>
void run_conv(conv_data<T>& d, bool packed, const bias_relu<T>* epi) {
  const loom::conv2d_params p = d.cs.params();
  if (packed) {
    const auto pw = loom::pack_conv2d_weights(d.w.view, p);
    CHECK(pw.groups() == p.groups);
    if (epi) loom::conv2d(d.out.view, d.in.view, pw, p, *epi);
    else loom::conv2d(d.out.view, d.in.view, pw, p);
  } else {
    if (epi) loom::conv2d(d.out.view, d.in.view, d.w.view, p, *epi);
    else loom::conv2d(d.out.view, d.in.view, d.w.view, p);
  }
}

/// One case end to end: conv2d against the reference (with the epilogue when asked), nothing
/// outside the output written, the epilogue's contract kept.
template <class T>
void check_case(lt::rng_t& g, const conv_case& cs, bool any_layout, bool packed, bool with_epilogue) {
  auto d = make_data<T>(g, cs, any_layout);
  epilogue_state<T> es(g, cs, lt::coin(g) ? 0.25 : 0.0);
  const bias_relu<T> epi = es.epilogue();
  if (with_epilogue) es.apply(d.ref);
  run_conv(d, packed, with_epilogue ? &epi : nullptr);
  INFO(d.info << (packed ? "; weights packed first" : "; weights unpacked")
              << (with_epilogue ? lt::str("; epilogue bias + ReLU + ", es.pixel_step, " x (pixel % 5)") : std::string()));
  const lt::result r = lt::compare(d.out.view, d.ref, conv_tolerance<T>(cs));
  INFO(r.message);
  REQUIRE(r.ok);
  const lt::result u = d.out.untouched();
  INFO(u.message);
  REQUIRE(u.ok);
  REQUIRE(es.violations.load() == 0);
}

/// A row-major copy of a view.
template <class T>
loom::Tensor<T, 4> copy_of(const view4<T>& v) {
  loom::Tensor<T, 4> t(lt::extents_of(v));
  for (index_t a = 0; a < v.extent(0); ++a)
    for (index_t b = 0; b < v.extent(1); ++b)
      for (index_t c = 0; c < v.extent(2); ++c)
        for (index_t e = 0; e < v.extent(3); ++e) t(a, b, c, e) = v(a, b, c, e);
  return t;
}

template <class V>
V pick(lt::rng_t& g, std::initializer_list<V> from) {
  return *(from.begin() + lt::uniform(g, 0, index_t(from.size()) - 1));
}

/// Random spatial parameters (N, H, W, kernel, stride, dilation, padding) for channels already set.
void random_spatial(lt::rng_t& g, conv_case& cs, std::initializer_list<index_t> sizes) {
  cs.N = lt::uniform(g, 1, 2);
  cs.H = pick(g, sizes);
  cs.W = pick(g, sizes);
  cs.KH = pick<index_t>(g, {1, 2, 3, 5});
  cs.KW = lt::coin(g, 0.7) ? cs.KH : pick<index_t>(g, {1, 2, 3, 5});
  cs.sh = lt::uniform(g, 1, 3);
  cs.sw = lt::coin(g, 0.7) ? cs.sh : lt::uniform(g, 1, 3);
  cs.dh = lt::coin(g, 0.6) ? 1 : lt::uniform(g, 2, 3);
  cs.dw = lt::coin(g, 0.7) ? cs.dh : lt::uniform(g, 1, 3);
  if (lt::coin(g, 0.5)) {  // "same"-style symmetric padding, or more than half the kernel
    cs.pt = cs.pb = lt::uniform(g, 0, 3);
    cs.pl = cs.pr = lt::uniform(g, 0, 3);
  } else {
    cs.pt = lt::uniform(g, 0, 3), cs.pl = lt::uniform(g, 0, 3), cs.pb = lt::uniform(g, 0, 3), cs.pr = lt::uniform(g, 0, 3);
  }
}

constexpr double max_macs = 3e6;  // keeps the double reference of one case well under 0.1 s

/// A dense or grouped case with OH, OW >= 1.
conv_case random_dense_case(lt::rng_t& g) {
  for (;;) {
    conv_case cs;
    cs.C = pick<index_t>(g, {1, 3, 7, 13, 16, 17, 32, 40, 64, 70});
    cs.CO = pick<index_t>(g, {1, 3, 7, 13, 16, 17, 32, 40, 64, 70});
    cs.groups = pick<index_t>(g, {1, 1, 2, 4});
    if (cs.C % cs.groups != 0 || cs.CO % cs.groups != 0) cs.groups = 1;
    random_spatial(g, cs, {1, 2, 3, 5, 7, 11, 13, 17});
    if (cs.OH() >= 1 && cs.OW() >= 1 && cs.macs() <= max_macs) return cs;
  }
}

/// A depthwise case: groups = C, CO = multiplier x C.
conv_case random_depthwise_case(lt::rng_t& g, index_t C, index_t multiplier) {
  for (;;) {
    conv_case cs;
    cs.C = cs.groups = C;
    cs.CO = multiplier * C;
    random_spatial(g, cs, {1, 2, 5, 7, 9, 13, 17, 20});
    if (cs.OH() >= 1 && cs.OW() >= 1 && cs.macs() <= max_macs) return cs;
  }
}

template <class T>
void random_cases(const char* key, int cases) {
  auto g = lt::make_rng(key);
  for (int n = 0; n < cases; ++n) {
    const conv_case cs = random_dense_case(g);
    check_case<T>(g, cs, true, n % 2 == 1, n % 3 == 2);
  }
}

}  // namespace

TEST_CASE("conv2d: random shapes, strides, dilations, paddings, groups and layouts", "[conv]") {
  random_cases<float>("conv random float", 40);
  random_cases<double>("conv random double", 40);
}

TEST_CASE("conv2d: every tile width of the dense kernel and its row tails", "[conv]") {
  // Output channels per group at and around each count of vectors (1 to 4 of this target's
  // widest), rows of 1 to 2 tiles and a tail; 3 x 3, stride 1, padding 1.
  auto g = lt::make_rng("conv tile widths");
  const index_t L = lt::native_width<float>;
  for (index_t co : {index_t(1), L - 1, L, L + 1, 2 * L, 2 * L + 1, 3 * L, 3 * L + 1, 4 * L, 4 * L + 3, 5 * L + 1})
    for (index_t w : {index_t(5), index_t(8), index_t(13), index_t(17)}) {
      conv_case cs;
      cs.N = 1, cs.H = 3, cs.W = w, cs.C = 5, cs.CO = co, cs.KH = cs.KW = 3, cs.pt = cs.pl = cs.pb = cs.pr = 1;
      check_case<float>(g, cs, false, w % 2 == 1, co % 2 == 1);
    }
}

TEST_CASE("conv2d: depthwise, one and two output channels per channel", "[conv][depthwise]") {
  auto g = lt::make_rng("conv depthwise");
  int n = 0;
  for (index_t C : {1, 7, 16, 17, 33, 96})
    for (index_t multiplier : {1, 2})
      for (int rep = 0; rep < 3; ++rep, ++n) {
        const conv_case cs = random_depthwise_case(g, C, multiplier);
        const bool packed = n % 2 == 0;
        if (packed && multiplier == 1 && C > 1) {
          // The shape that takes the depthwise kernel does (and two channels per channel do not).
          loom::Tensor<float, 4> w(cs.KH, cs.KW, 1, cs.CO);
          CHECK(loom::pack_conv2d_weights(w, cs.params()).depthwise());
        }
        check_case<float>(g, cs, rep == 2, packed, rep == 1);
      }
  {
    conv_case cs = random_depthwise_case(g, 16, 2);
    loom::Tensor<float, 4> w(cs.KH, cs.KW, 1, cs.CO);
    CHECK(!loom::pack_conv2d_weights(w, cs.params()).depthwise());
  }
  // Fixed shapes: a 3 x 3 "same" depthwise conv over rows of 1, 2 and 3 tiles, and a strided,
  // dilated one with uneven padding, in float and double, with and without the epilogue.
  for (index_t C : {7, 16, 33, 96}) {
    conv_case cs;
    cs.N = 2, cs.H = 5, cs.W = 19, cs.C = cs.CO = cs.groups = C, cs.KH = cs.KW = 3, cs.pt = cs.pl = cs.pb = cs.pr = 1;
    check_case<float>(g, cs, false, false, C % 2 == 1);
    check_case<double>(g, cs, false, true, C % 2 == 0);
    cs.sh = 2, cs.sw = 3, cs.dh = 2, cs.dw = 1, cs.pt = 0, cs.pl = 3, cs.pb = 2, cs.pr = 0, cs.KW = 5;
    check_case<float>(g, cs, true, true, true);
    check_case<double>(g, cs, false, false, false);
  }
}

TEST_CASE("conv2d: packed weights are reusable and give the unpacked call's bits", "[conv][packed]") {
  auto g = lt::make_rng("conv packed reuse");
  std::vector<conv_case> shapes;
  {
    conv_case cs;  // dense, 3 x 3 "same"
    cs.N = 1, cs.H = 6, cs.W = 9, cs.C = 13, cs.CO = 70, cs.KH = cs.KW = 3, cs.pt = cs.pl = cs.pb = cs.pr = 1;
    shapes.push_back(cs);
    cs.C = 16, cs.CO = 40, cs.groups = 4, cs.sh = cs.sw = 2;  // grouped, strided
    shapes.push_back(cs);
    cs.C = cs.CO = cs.groups = 33, cs.sh = 1, cs.dw = 2;  // depthwise, dilated
    shapes.push_back(cs);
    cs.CO = 66;  // two output channels per channel
    shapes.push_back(cs);
    cs = conv_case{};  // 1 x 1
    cs.N = 2, cs.H = 4, cs.W = 11, cs.C = 17, cs.CO = 17;
    shapes.push_back(cs);
  }
  for (const conv_case& a : shapes)
    for (int with_epilogue = 0; with_epilogue < 2; ++with_epilogue) {
      // A second input of other spatial extents and batch, under another stride and padding
      // (the same groups: all that the packing depends on besides the weights).
      conv_case b = a;
      b.N = 3 - a.N, b.H = a.H + 3, b.W = a.W - 2, b.sh = 1, b.sw = 2, b.pt = 2, b.pl = 0, b.pb = 0, b.pr = 1;
      auto da = make_data<float>(g, a, false);
      auto db = make_data<float>(g, b, true);
      for (index_t q0 = 0; q0 < a.KH; ++q0)  // the same weights in both
        for (index_t q1 = 0; q1 < a.KW; ++q1)
          for (index_t q2 = 0; q2 < a.Cg(); ++q2)
            for (index_t q3 = 0; q3 < a.CO; ++q3) db.w.view(q0, q1, q2, q3) = da.w.view(q0, q1, q2, q3);
      db.ref = reference(b, db.in.view, db.w.view);
      epilogue_state<float> ea(g, a, 0.25), eb(g, b, 0.25);
      eb.bias = ea.bias;
      const bias_relu<float> epa = ea.epilogue(), epb = eb.epilogue();
      if (with_epilogue) ea.apply(da.ref), eb.apply(db.ref);
      INFO(a.describe() << "\nreused for\n" << b.describe() << (with_epilogue ? "\nwith the epilogue" : ""));

      const auto pw = loom::pack_conv2d_weights(da.w.view, a.params());
      lt::result r;
      loom::Tensor<float, 4> ua(a.out_ext()), ub(b.out_ext());  // the unpacked call's results
      view4<float> ua_v = ua.view(), ub_v = ub.view();
      std::optional<loom::Tensor<float, 4>> first_a, first_b;  // the results on one thread
      for (int threads : {1, 2}) {
        lt::thread_scope ts(threads);
        INFO("threads = " << threads);
        if (with_epilogue) {
          loom::conv2d(da.out.view, da.in.view, pw, a.params(), epa);
          loom::conv2d(db.out.view, db.in.view, pw, b.params(), epb);
          loom::conv2d(ua_v, da.in.view, da.w.view, a.params(), epa);
          loom::conv2d(ub_v, db.in.view, db.w.view, b.params(), epb);
        } else {
          loom::conv2d(da.out.view, da.in.view, pw, a.params());
          loom::conv2d(db.out.view, db.in.view, pw, b.params());
          loom::conv2d(ua_v, da.in.view, da.w.view, a.params());
          loom::conv2d(ub_v, db.in.view, db.w.view, b.params());
        }
        r = lt::compare(da.out.view, da.ref, conv_tolerance<float>(a));
        INFO(r.message);
        REQUIRE(r.ok);
        r = lt::compare(db.out.view, db.ref, conv_tolerance<float>(b));
        INFO(r.message);
        REQUIRE(r.ok);
        r = lt::compare_bits(da.out.view, ua_v);
        INFO("first input, packed vs unpacked: " << r.message);
        REQUIRE(r.ok);
        r = lt::compare_bits(db.out.view, ub_v);
        INFO("second input, packed vs unpacked: " << r.message);
        REQUIRE(r.ok);
        REQUIRE(da.out.untouched().ok);
        REQUIRE(db.out.untouched().ok);
        if (threads == 1) {
          first_a.emplace(copy_of(da.out.view));
          first_b.emplace(copy_of(db.out.view));
        } else {
          r = lt::compare_bits(da.out.view, first_a->view());
          INFO("first input, 2 threads vs 1: " << r.message);
          REQUIRE(r.ok);
          r = lt::compare_bits(db.out.view, first_b->view());
          INFO("second input, 2 threads vs 1: " << r.message);
          REQUIRE(r.ok);
        }
      }
      REQUIRE(ea.violations.load() == 0);
      REQUIRE(eb.violations.load() == 0);
    }
}

namespace {

/// NCHW activations and OIHW weights seen as NHWC and HWIO through permuted views.
template <class T>
void nchw_case(lt::rng_t& g, const conv_case& cs, bool packed, bool with_epilogue) {
  loom::Tensor<T, 4> in_t("in", cs.N, cs.C, cs.H, cs.W), w_t("w", cs.CO, cs.Cg(), cs.KH, cs.KW),
      out_t("out", cs.N, cs.CO, cs.OH(), cs.OW());
  const view4<T> in = in_t.template permuted<0, 2, 3, 1>(), w = w_t.template permuted<2, 3, 1, 0>();
  view4<T> out = out_t.template permuted<0, 2, 3, 1>();
  lt::fill_random(in, g);
  lt::fill_random(w, g);
  lt::fill(out, std::numeric_limits<T>::quiet_NaN());
  REQUIRE(lt::extents_of(in) == cs.in_ext());
  REQUIRE(lt::extents_of(w) == cs.w_ext());
  REQUIRE(lt::extents_of(out) == cs.out_ext());
  std::vector<double> ref = reference(cs, in, w);
  epilogue_state<T> es(g, cs, 0.25);
  const bias_relu<T> epi = es.epilogue();
  if (with_epilogue) es.apply(ref);
  const loom::conv2d_params p = cs.params();
  if (packed) {
    const auto pw = loom::pack_conv2d_weights(w, p);
    if (with_epilogue) loom::conv2d(out, in, pw, p, epi);
    else loom::conv2d(out, in, pw, p);
  } else {
    if (with_epilogue) loom::conv2d(out, in, w, p, epi);
    else loom::conv2d(out, in, w, p);
  }
  INFO(lt::type_name<T>() << " NCHW in, OIHW weights, NCHW out: " << cs.describe() << (packed ? ", packed" : "")
                          << (with_epilogue ? ", with the epilogue" : ""));
  const lt::result r = lt::compare(out, ref, conv_tolerance<T>(cs));
  INFO(r.message);
  REQUIRE(r.ok);
  REQUIRE(es.violations.load() == 0);
}

}  // namespace

TEST_CASE("conv2d: NCHW tensors seen as NHWC (and OIHW weights as HWIO) through permuted views", "[conv][layouts]") {
  auto g = lt::make_rng("conv nchw");
  conv_case cs;
  cs.N = 2, cs.H = 7, cs.W = 10, cs.C = 6, cs.CO = 20, cs.KH = cs.KW = 3, cs.pt = cs.pl = cs.pb = cs.pr = 1;
  nchw_case<float>(g, cs, false, false);
  nchw_case<float>(g, cs, true, true);
  cs.groups = 2, cs.sh = cs.sw = 2, cs.pr = 3;
  nchw_case<float>(g, cs, false, true);
  cs.C = cs.CO = cs.groups = 24, cs.sh = 1, cs.dh = 2;
  nchw_case<float>(g, cs, true, false);
  nchw_case<double>(g, cs, false, true);
  cs = conv_case{};
  cs.N = 1, cs.H = 1, cs.W = 13, cs.C = 17, cs.CO = 33, cs.KW = 5, cs.pl = 2, cs.pr = 2;
  nchw_case<double>(g, cs, true, false);
  // Random shapes, mixed: the other layouts (strided, reversed, blocked, column-major) are in
  // the random cases above.
  for (int n = 0; n < 6; ++n) nchw_case<float>(g, random_dense_case(g), n % 2 == 0, n % 3 == 0);
}

TEST_CASE("conv2d: the epilogue sees each pixel and channel once, in range, on every path", "[conv][epilogue]") {
  // Bias + ReLU alone (pixel_step 0) on dense, grouped and depthwise shapes whose channel counts
  // leave partial vectors, each output element written once through the epilogue.
  auto g = lt::make_rng("conv epilogue");
  for (index_t C : {3, 17, 33})
    for (index_t CO : {1, 5, 17, 40, 70}) {
      conv_case cs;
      cs.N = 2, cs.H = 4, cs.W = 9, cs.C = C, cs.CO = CO, cs.KH = cs.KW = 2, cs.pb = cs.pr = 1;
      auto d = make_data<float>(g, cs, false);
      epilogue_state<float> es(g, cs, 0.0);
      es.apply(d.ref);
      const bias_relu<float> epi = es.epilogue();
      run_conv(d, CO % 2 == 0, &epi);
      INFO(d.info);
      const lt::result r = lt::compare(d.out.view, d.ref, conv_tolerance<float>(cs));
      INFO(r.message);
      REQUIRE(r.ok);
      REQUIRE(es.violations.load() == 0);
    }
  for (index_t C : {5, 16, 31, 64}) {
    conv_case cs;
    cs.N = 1, cs.H = 3, cs.W = 11, cs.C = cs.CO = cs.groups = C, cs.KH = cs.KW = 3, cs.pt = cs.pl = cs.pb = cs.pr = 1;
    check_case<float>(g, cs, false, true, true);
    check_case<double>(g, cs, false, false, true);
  }
}

namespace {

/// conv2d(out, in, w) where out and in share memory (out == in, or shifted by `shift` rows),
/// against the reference of the input as it was before.
void overlap_case(lt::rng_t& g, conv_case cs, index_t shift, bool packed, bool with_epilogue) {
  REQUIRE(cs.OH() == cs.H);
  REQUIRE(cs.OW() == cs.W);
  REQUIRE(cs.CO == cs.C);
  loom::Tensor<float, 4> store("io", cs.N, cs.H + shift, cs.W, cs.C), w_t(cs.w_ext(), "w");
  const view4<float> all = store.view();
  lt::fill_random(all, g);
  const view4<float> w = w_t.view();
  lt::fill_random(w, g);
  const view4<float> in = all.block({0, 0, 0, 0}, cs.in_ext());
  view4<float> out = all.block({0, shift, 0, 0}, cs.out_ext());
  const loom::Tensor<float, 4> in0 = copy_of(in);
  std::vector<double> ref = reference(cs, in0, w);
  epilogue_state<float> es(g, cs, 0.25);
  const bias_relu<float> epi = es.epilogue();
  if (with_epilogue) es.apply(ref);
  const loom::conv2d_params p = cs.params();
  if (packed) {
    const auto pw = loom::pack_conv2d_weights(w, p);
    if (with_epilogue) loom::conv2d(out, in, pw, p, epi);
    else loom::conv2d(out, in, pw, p);
  } else {
    if (with_epilogue) loom::conv2d(out, in, w, p, epi);
    else loom::conv2d(out, in, w, p);
  }
  INFO(cs.describe() << "; out = in shifted by " << shift << " rows" << (packed ? ", packed" : "")
                     << (with_epilogue ? ", with the epilogue" : ""));
  const lt::result r = lt::compare(out, ref, conv_tolerance<float>(cs));
  INFO(r.message);
  REQUIRE(r.ok);
  // Rows of the storage before the output's are the input's and must be as they were.
  for (index_t n = 0; n < cs.N; ++n)
    for (index_t y = 0; y < shift; ++y)
      for (index_t x = 0; x < cs.W; ++x)
        for (index_t c = 0; c < cs.C; ++c) REQUIRE(all(n, y, x, c) == in0(n, y, x, c));
  REQUIRE(es.violations.load() == 0);
}

}  // namespace

TEST_CASE("conv2d: an output overlapping the input or the weights", "[conv][alias]") {
  auto g = lt::make_rng("conv overlap");
  conv_case cs;  // 1 x 1, C == CO, stride 1: out is in
  cs.N = 2, cs.H = 5, cs.W = 9, cs.C = cs.CO = 17;
  overlap_case(g, cs, 0, false, false);
  overlap_case(g, cs, 0, true, true);
  overlap_case(g, cs, 1, false, true);
  cs.KH = cs.KW = 3, cs.pt = cs.pl = cs.pb = cs.pr = 1;  // 3 x 3 "same": each output reads its neighbours
  overlap_case(g, cs, 0, false, false);
  overlap_case(g, cs, 2, true, false);
  cs.groups = 17;  // depthwise
  overlap_case(g, cs, 0, false, true);
  overlap_case(g, cs, 1, true, false);
  cs.C = cs.CO = cs.groups = 40, cs.KH = 5, cs.pt = cs.pb = 2, cs.dw = 2, cs.pl = cs.pr = 2;
  overlap_case(g, cs, 0, false, false);

  // The weights inside the output's storage: read before anything is written.
  for (index_t co : {index_t(3), index_t(20)}) {
    conv_case c1;
    c1.N = 1, c1.H = 4, c1.W = 6, c1.C = 5, c1.CO = co, c1.KH = c1.KW = 2, c1.pb = c1.pr = 1;
    loom::Tensor<float, 4> in_t(c1.in_ext(), "in"), out_t(c1.out_ext(), "out");
    const view4<float> in = in_t.view();
    view4<float> out = out_t.view();
    lt::fill_random(in, g);
    lt::fill_random(out, g);
    REQUIRE(c1.KH * c1.KW * c1.C * co <= out.size());
    const view4<float> w = loom::view(out_t.data(), c1.w_ext(), loom::row_major_strides<4>(c1.w_ext()), "w");
    const std::vector<double> ref = reference(c1, in, copy_of(w));
    loom::conv2d(out, in, w, c1.params());
    INFO(c1.describe() << "; weights in the output's storage");
    const lt::result r = lt::compare(out, ref, conv_tolerance<float>(c1));
    INFO(r.message);
    REQUIRE(r.ok);
  }
}

namespace {

/// The message of the shape_error f throws ("no shape_error" when it throws none).
template <class F>
std::string shape_message(F&& f) {
  try {
    f();
  } catch (const loom::shape_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return lt::str("another exception: ", e.what());
  }
  return "no shape_error";
}

bool all_equal(const view4<float>& v, float value) {
  bool same = true;
  lt::for_each_index(lt::extents_of(v), [&](const auto& idx) { same = same && lt::at(v, idx) == value; });
  return same;
}

struct bad_case {
  const char* what;
  loom::conv2d_params p;
  idx_t<4> w_ext, out_ext;
  std::vector<std::string> says;  // substrings of the message
};

}  // namespace

TEST_CASE("conv2d: bad parameters and shapes throw shape_error naming the tensor, nothing written", "[conv][errors]") {
  // in: 1 x 6 x 5 x 4; a 3 x 3 kernel without padding gives 4 x 3.
  loom::Tensor<float, 4> in_t("in", 1, 6, 5, 4);
  const view4<float> in = in_t.view();
  lt::fill(in, 1.f);
  const idx_t<4> w_ok{3, 3, 4, 8}, out_ok{1, 4, 3, 8};
  const std::vector<bad_case> cases = {
      {"groups 0", {.groups = 0}, w_ok, out_ok, {"groups is 0"}},
      {"groups -2", {.groups = -2}, w_ok, out_ok, {"groups is -2"}},
      {"groups not dividing C", {.groups = 3}, {3, 3, 1, 6}, {1, 4, 3, 6}, {"groups 3", "4 channels", "input 'in'"}},
      {"groups not dividing CO", {.groups = 2}, {3, 3, 2, 5}, {1, 4, 3, 5}, {"groups 2", "5 output channels", "weights 'w'"}},
      {"weights dimension 2 != C", {}, {3, 3, 3, 8}, out_ok, {"weights 'w' dimension 2", "extent 3", "input 'in'"}},
      {"weights dimension 2 != C / groups", {.groups = 2}, w_ok, out_ok, {"weights 'w' dimension 2", "2 per group"}},
      {"an empty window", {}, {0, 3, 4, 8}, out_ok, {"weights 'w'", "empty window"}},
      {"output batch", {}, w_ok, {2, 4, 3, 8}, {"output 'out' dimension 0", "input 'in'"}},
      {"output height", {}, w_ok, {1, 5, 3, 8}, {"output 'out' dimension 1", "should be 4"}},
      {"output width", {}, w_ok, {1, 4, 4, 8}, {"output 'out' dimension 2", "should be 3"}},
      {"output channels", {}, w_ok, {1, 4, 3, 7}, {"output 'out' dimension 3", "weights 'w'", "8 output channels"}},
      {"output of a kernel larger than the input", {}, {7, 3, 4, 8}, {1, 1, 3, 8}, {"output 'out' dimension 1", "should be 0"}},
      {"output height under padding and stride", {.stride = {2, 1}, .padding = {1, 0, 0, 0}}, w_ok, out_ok,
       {"output 'out' dimension 1", "should be 3"}},
      {"output width under dilation", {.dilation = {1, 2}}, w_ok, out_ok, {"output 'out' dimension 2", "should be 1"}},
      {"stride 0", {.stride = {0, 1}}, w_ok, out_ok, {"stride (0, 1)", ">= 1"}},
      {"stride < 0", {.stride = {1, -2}}, w_ok, out_ok, {"stride (1, -2)"}},
      {"dilation 0", {.dilation = {1, 0}}, w_ok, out_ok, {"dilation (1, 0)", ">= 1"}},
      {"dilation < 0", {.dilation = {-1, 1}}, w_ok, out_ok, {"dilation (-1, 1)"}},
      {"padding < 0", {.padding = {0, -1, 0, 0}}, w_ok, out_ok, {"padding (top 0, left -1, bottom 0, right 0)", ">= 0"}},
      {"padding < 0 (bottom)", {.padding = {1, 1, -3, 1}}, w_ok, out_ok, {"bottom -3"}},
  };
  for (const bad_case& bc : cases) {
    INFO(bc.what);
    loom::Tensor<float, 4> w_t(bc.w_ext, "w"), out_t(bc.out_ext, "out");
    const view4<float> w = w_t.view();
    view4<float> out = out_t.view();
    lt::fill(w, 0.5f);
    lt::fill(out, 42.f);
    const std::string m = shape_message([&] { loom::conv2d(out, in, w, bc.p); });
    INFO("message: " << m);
    CHECK_THAT(m, Catch::Contains("loom::conv2d"));
    for (const std::string& s : bc.says) CHECK_THAT(m, Catch::Contains(s));
    CHECK(all_equal(out, 42.f));
    // Packed weights: packing checks the groups; the call checks the rest the same way.
    if (bc.p.groups >= 1 && bc.w_ext[3] % bc.p.groups == 0) {
      const auto pw = loom::pack_conv2d_weights(w, bc.p);
      const std::string mp = shape_message([&] { loom::conv2d(out, in, pw, bc.p); });
      INFO("packed: " << mp);
      CHECK_THAT(mp, Catch::Contains("loom::conv2d"));
      for (std::string s : bc.says) {
        // The packed weights are named as such, not by the view they were packed from.
        if (const auto at = s.find("weights 'w'"); at != std::string::npos) s.replace(at, 11, "weights 'packed weights'");
        CHECK_THAT(mp, Catch::Contains(s));
      }
      CHECK(all_equal(out, 42.f));
    } else {
      const std::string mp = shape_message([&] { (void)loom::pack_conv2d_weights(w, bc.p); });
      INFO("packing: " << mp);
      CHECK_THAT(mp, Catch::Contains(bc.p.groups < 1 ? lt::str("groups is ", bc.p.groups) : std::string("weights 'w'")));
    }
  }

  // Weights packed for other groups than the call's.
  {
    loom::Tensor<float, 4> w_t("w", 3, 3, 2, 8), out_t("out", 1, 4, 3, 8);
    const view4<float> w = w_t.view();
    view4<float> out = out_t.view();
    lt::fill(out, 42.f);
    const auto pw = loom::pack_conv2d_weights(w, {.groups = 2});
    const std::string m = shape_message([&] { loom::conv2d(out, in, pw, {.groups = 1}); });
    CHECK_THAT(m, Catch::Contains("packed for 2 group(s)") && Catch::Contains("ask for 1"));
    CHECK(all_equal(out, 42.f));
    loom::conv2d(out, in, pw, {.groups = 2});  // and with its own groups it runs
    CHECK(!all_equal(out, 42.f));
  }

  // Nothing to compute: an empty batch, and a kernel that does not fit (OH = 0), are no-ops.
  {
    loom::Tensor<float, 4> in0("in0", 0, 6, 5, 4), w_t("w", 3, 3, 4, 8), out0("out0", 0, 4, 3, 8), out_t("out", 1, 0, 3, 8);
    const view4<float> i0 = in0.view(), w = w_t.view();
    view4<float> o0 = out0.view(), o1 = out_t.view();
    CHECK_NOTHROW(loom::conv2d(o0, i0, w));
    CHECK_NOTHROW(loom::conv2d(o1, in, w, {.padding = {0, 0, 0, 0}, .dilation = {3, 1}}));
  }
}

TEST_CASE("conv2d: double, fixed shapes", "[conv][double]") {
  auto g = lt::make_rng("conv double");
  conv_case cs;
  cs.N = 2, cs.H = 9, cs.W = 11, cs.C = 17, cs.CO = 33, cs.KH = cs.KW = 3, cs.sh = cs.sw = 2, cs.pt = cs.pl = cs.pb = cs.pr = 1;
  check_case<double>(g, cs, false, false, false);
  check_case<double>(g, cs, true, true, true);
  cs.C = 24, cs.CO = 40, cs.groups = 4, cs.sh = cs.sw = 1, cs.dh = cs.dw = 2, cs.KH = 5, cs.pt = 4, cs.pb = 0;
  check_case<double>(g, cs, false, true, false);
  check_case<double>(g, cs, true, false, true);
  cs = conv_case{};
  cs.N = 1, cs.H = 7, cs.W = 7, cs.C = 64, cs.CO = 64, cs.pt = cs.pl = cs.pb = cs.pr = 3;  // 1 x 1 with padding: zero rims
  check_case<double>(g, cs, false, false, false);
  check_case<double>(g, cs, false, true, true);
}
