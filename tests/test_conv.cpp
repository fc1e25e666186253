// tests/test_conv.cpp — loom::conv2d (kernels/conv.hpp) against a plain-loop reference of this
// file accumulated in double (not the library's conv2d_reference): random shapes, strides,
// dilations, paddings (wider than the kernel too) and groups; depthwise with one and two output
// channels per channel; packed weights reused across inputs (bit-identical to the unpacked call,
// and to itself on 1 and 2 threads); operands in any layout (NCHW and OIHW tensors seen through
// permuted views, strided, reversed and blocked views); an epilogue (bias + ReLU + a per-pixel
// term) that checks its own contract; outputs overlapping the input or the weights; every
// shape_error, naming the tensor, with nothing written. Winograd F(4 x 4, 3 x 3): forced on random
// 3 x 3 shapes (partial tiles, images smaller than a tile) within an error bound relative to the
// case's largest output; the automatic choice, seen in the result's bits; its shape errors; and
// its independence of the thread count.
//
// Few template instantiations on purpose (the file must compile quickly in CI): every operand is
// a loom::TensorView<T, 4>, T is float or double, and there are two epilogues (none and one).
#include "conv_case.hpp"
#include "support.hpp"

#include <atomic>
#include <cstdint>
#include <optional>

#include <loom/kernels/conv.hpp>

using loom::index_t;
using lt::bias_relu;
using lt::conv_case;
using lt::idx_t;

namespace {

template <class T>
using view4 = loom::TensorView<T, 4>;


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
  for (int n = 0, all = lt::cases_per_schedule(cases); n < all; ++n) {
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
  // Depthwise 3 x 3 on channel planes, float and double: rows whose padding fits one vector (read
  // in place), rows of two vectors or more at stride 1 and 2 (a padded copy per plane, the shifted
  // kernels with AVX-512), padding 0, 1 and 2, and one with the epilogue (the copies).
  for (const auto& [W, pad, stride] : {std::array<index_t, 3>{5, 1, 1}, {6, 0, 1}, {4, 2, 1}, {12, 2, 1}, {20, 1, 1}, {33, 1, 2}, {37, 0, 2}}) {
    cs = conv_case{};
    cs.N = 2, cs.H = 6, cs.W = W, cs.C = cs.CO = cs.groups = 5, cs.KH = cs.KW = 3, cs.pt = cs.pl = cs.pb = cs.pr = pad, cs.sh = cs.sw = stride;
    nchw_case<float>(g, cs, true, false);
    nchw_case<double>(g, cs, true, false);
  }
  nchw_case<float>(g, cs, true, true);
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
      // Spans whose arithmetic would wrap around to a small, matching extent (4 (2^62 + 1) + 1 = 5).
      {"dilation overflowing the window's span", {.dilation = {(std::int64_t{1} << 62) + 1, 1}}, w_ok, {1, 1, 3, 8},
       {"overflow 64-bit indices", "weights 'w'", "input 'in'"}},
      {"padding overflowing the padded extent",
       {.padding = {INT64_MAX, 0, INT64_MAX, 0}}, w_ok, out_ok, {"overflow 64-bit indices", "top 9223372036854775807"}},
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

// ---------------------------------------------------------------------------------------------
// Winograd F(4 x 4, 3 x 3) (conv/winograd.hpp; docs/conv.md, "Winograd").
// ---------------------------------------------------------------------------------------------

namespace {

/// Winograd's error bound, absolute, as a fraction of max(1, the case's largest |output|):
/// float 5e-5 (docs/conv.md measured 3e-6 to 1.4e-5 up to C = 512), double 1e-12.
template <class T>
constexpr double winograd_bound = std::is_same_v<T, float> ? 5e-5 : 1e-12;

/// got against the reference: |got - ref| <= winograd_bound<T> x max(1, max |ref|) everywhere.
template <class T>
lt::result compare_winograd(const view4<T>& got, const std::vector<double>& ref) {
  double scale = 1;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  // compare's test is |got - ref| <= tol x max(floor, |ref|); with floor = scale >= |ref| that is
  // tol x scale for every element.
  lt::result r = lt::compare(got, ref, winograd_bound<T>, scale);
  if (!r.ok) r.message += lt::str("; Winograd's bound: ", winograd_bound<T>, " x max(1, max |expected| = ", scale, ")");
  return r;
}

using winograd_sizes = std::array<index_t, 10>;
constexpr winograd_sizes winograd_extents{1, 2, 3, 4, 5, 7, 8, 9, 13, 17};  // partial tiles, less than a tile
constexpr std::array<index_t, 8> winograd_channels{1, 2, 7, 16, 17, 33, 64, 70};

template <std::size_t K>
index_t pick_of(lt::rng_t& g, const std::array<index_t, K>& from) {
  return from[std::size_t(lt::uniform(g, 0, index_t(K) - 1))];
}

/// A 3 x 3, stride 1 case of H x W x C -> CO: random batch 1..3 and padding 0..2 per side
/// (symmetric or not), redrawn until the output is not empty.
conv_case winograd_shape(lt::rng_t& g, index_t H, index_t W, index_t C, index_t CO) {
  conv_case cs;
  cs.H = H, cs.W = W, cs.C = C, cs.CO = CO, cs.KH = cs.KW = 3;
  do {
    cs.N = lt::uniform(g, 1, 3);
    if (lt::coin(g)) {
      cs.pt = cs.pb = lt::uniform(g, 0, 2);
      cs.pl = cs.pr = lt::uniform(g, 0, 2);
    } else {
      cs.pt = lt::uniform(g, 0, 2), cs.pl = lt::uniform(g, 0, 2), cs.pb = lt::uniform(g, 0, 2), cs.pr = lt::uniform(g, 0, 2);
    }
  } while (cs.OH() < 1 || cs.OW() < 1);
  return cs;
}

/// One case under conv_algorithm::winograd end to end (check_case with Winograd's bound).
template <class T>
void check_winograd_case(lt::rng_t& g, conv_case cs, bool any_layout, bool packed, bool with_epilogue,
                         loom::conv_algorithm algorithm = loom::conv_algorithm::winograd) {
  cs.algorithm = algorithm;
  auto d = make_data<T>(g, cs, any_layout);
  epilogue_state<T> es(g, cs, lt::coin(g) ? 0.25 : 0.0);
  const bias_relu<T> epi = es.epilogue();
  if (with_epilogue) es.apply(d.ref);
  run_conv(d, packed, with_epilogue ? &epi : nullptr);
  INFO(d.info << (algorithm == loom::conv_algorithm::winograd ? "; F(4 x 4, 3 x 3)" : "; F(2 x 2, 3 x 3)")
              << (packed ? "; weights packed first" : "; weights unpacked")
              << (with_epilogue ? lt::str("; epilogue bias + ReLU + ", es.pixel_step, " x (pixel % 5)") : std::string()));
  const lt::result r = compare_winograd(d.out.view, d.ref);
  INFO(r.message);
  REQUIRE(r.ok);
  const lt::result u = d.out.untouched();
  INFO(u.message);
  REQUIRE(u.ok);
  REQUIRE(es.violations.load() == 0);
}

constexpr double winograd_max_macs = 3e6;

/// Every pair of channel counts, random spatial shapes; packed or not and the epilogue or not
/// alternate over the grid (both ways for every C and every CO), flipped by the seed.
template <class T>
void winograd_channel_grid(const char* key) {
  auto g = lt::make_rng(key);
  const bool flip_packed = lt::coin(g), flip_epilogue = lt::coin(g);
  for (std::size_t ci = 0; ci < winograd_channels.size(); ++ci)
    for (std::size_t oi = 0; oi < winograd_channels.size(); ++oi) {
      conv_case cs;
      do {
        cs = winograd_shape(g, pick_of(g, winograd_extents), pick_of(g, winograd_extents), winograd_channels[ci], winograd_channels[oi]);
      } while (cs.macs() > winograd_max_macs);
      const bool packed = ((ci + oi) % 2 == 1) != flip_packed, with_epilogue = ((ci / 2 + oi) % 2 == 1) != flip_epilogue;
      check_winograd_case<T>(g, cs, (ci * 8 + oi) % 5 == 4, packed, with_epilogue);
    }
}

/// Every H x W of winograd_extents, random channels (and batch, padding).
template <class T>
void winograd_extent_grid(const char* key) {
  auto g = lt::make_rng(key);
  int n = 0;
  for (index_t H : winograd_extents)
    for (index_t W : winograd_extents) {
      conv_case cs;
      do {
        cs = winograd_shape(g, H, W, pick_of(g, winograd_channels), pick_of(g, winograd_channels));
      } while (cs.macs() > winograd_max_macs / 2);
      check_winograd_case<T>(g, cs, n % 7 == 3, n % 2 == 0, n % 3 == 1);
      check_winograd_case<T>(g, cs, n % 7 == 4, n % 2 == 1, n % 3 == 2, loom::conv_algorithm::winograd_2x2);
      ++n;
    }
}

}  // namespace

TEST_CASE("conv2d: Winograd F(4 x 4) and F(2 x 2) forced on random 3 x 3 stride-1 shapes, within the error bound", "[conv][winograd]") {
  winograd_channel_grid<float>("conv winograd channels float");
  winograd_channel_grid<double>("conv winograd channels double");
  winograd_extent_grid<float>("conv winograd extents float");
  winograd_extent_grid<double>("conv winograd extents double");
}

namespace {

template <class T>
using packed_weights_t = decltype(loom::pack_conv2d_weights(std::declval<const view4<T>&>()));

/// Whether a case applies to Winograd at all (a 3 x 3 window, stride 1, dilation 1, one group).
bool winograd_applies(const conv_case& cs) {
  return cs.KH == 3 && cs.KW == 3 && cs.sh == 1 && cs.sw == 1 && cs.dh == 1 && cs.dw == 1 && cs.groups == 1;
}

/// The automatic choice as docs/conv.md states it: Winograd F(4 x 4) where it applies, with C and
/// CO >= 16, and >= 16 output tiles in the batch or transformed weights (36 C CO values) of at most
/// half the last-level cache.
template <class T>
bool expect_winograd(const conv_case& cs) {
  const index_t tiles = cs.N * ((cs.OH() + 3) / 4) * ((cs.OW() + 3) / 4);
  return winograd_applies(cs) && cs.C >= 16 && cs.CO >= 16 &&
         (tiles >= 16 || 36.0 * double(cs.C) * double(cs.CO) * double(sizeof(T)) <= double(loom::simd::last_level_cache_bytes()) / 2);
}

/// Where F(4 x 4) does not pay, F(2 x 2) where the batch has >= 16 of its 2 x 2 tiles.
template <class T>
bool expect_winograd_2x2(const conv_case& cs) {
  const index_t tiles = cs.N * ((cs.OH() + 1) / 2) * ((cs.OW() + 1) / 2);
  return winograd_applies(cs) && cs.C >= 16 && cs.CO >= 16 && !expect_winograd<T>(cs) && tiles >= 16;
}

/// d (algorithm automatic, reference without the epilogue yet) through conv2d with unpacked
/// weights and with pw (packed from d's weights under automatic): both match the reference and
/// have the bits of the algorithm docs/conv.md says is chosen (the unpacked call forced to it).
/// pw called with conv_algorithm::direct (and winograd, where it holds that layout) gives the bits
/// of that algorithm too.
template <class T>
void check_automatic(lt::rng_t& g, conv_data<T>& d, const packed_weights_t<T>& pw, bool with_epilogue) {
  const conv_case& cs = d.cs;
  REQUIRE(cs.algorithm == loom::conv_algorithm::automatic);
  epilogue_state<T> es(g, cs, 0.25);
  const bias_relu<T> epi = es.epilogue();
  if (with_epilogue) es.apply(d.ref);
  const bool wino = expect_winograd<T>(cs), wino2 = expect_winograd_2x2<T>(cs);
  INFO(d.info << "; automatic, expected " << (wino ? "Winograd" : wino2 ? "Winograd F(2 x 2)" : "direct")
              << (with_epilogue ? "; with the epilogue" : "") << "; the packed weights hold "
              << (pw.winograd() ? "the F(4 x 4) layout" : "no F(4 x 4) layout") << (pw.winograd2() ? " and F(2 x 2)'s" : ""));
  const auto call = [&](view4<T>& out, const auto& w, loom::conv_algorithm a) {
    loom::conv2d_params p = cs.params();
    p.algorithm = a;
    if (with_epilogue) loom::conv2d(out, d.in.view, w, p, epi);
    else loom::conv2d(out, d.in.view, w, p);
  };
  loom::Tensor<T, 4> direct_t(cs.out_ext()), wino_t(cs.out_ext()), packed_t(cs.out_ext()), other_t(cs.out_ext());
  view4<T> direct_v = direct_t.view(), wino_v = wino_t.view(), packed_v = packed_t.view(), other_v = other_t.view();
  call(d.out.view, d.w.view, loom::conv_algorithm::automatic);
  call(packed_v, pw, loom::conv_algorithm::automatic);
  call(direct_v, d.w.view, loom::conv_algorithm::direct);
  if (winograd_applies(cs)) {
    call(wino_v, d.w.view, loom::conv_algorithm::winograd);
    // Otherwise equal bits would not tell which one ran.
    INFO("forced direct and forced Winograd give the same bits: the case cannot tell them apart");
    REQUIRE(!lt::compare_bits(direct_v, wino_v).ok);
  }
  lt::result r = compare_winograd(d.out.view, d.ref);
  INFO("unpacked: " << r.message);
  REQUIRE(r.ok);
  r = compare_winograd(packed_v, d.ref);
  INFO("packed: " << r.message);
  REQUIRE(r.ok);
  loom::Tensor<T, 4> wino2_t(cs.out_ext());
  view4<T> wino2_v = wino2_t.view();
  if (wino2) call(wino2_v, d.w.view, loom::conv_algorithm::winograd_2x2);
  const view4<T>& chosen = wino ? wino_v : wino2 ? wino2_v : direct_v;
  r = lt::compare_bits(d.out.view, chosen);
  INFO("unpacked automatic vs forced " << (wino ? "Winograd" : wino2 ? "Winograd F(2 x 2)" : "direct") << ": " << r.message);
  REQUIRE(r.ok);
  r = lt::compare_bits(packed_v, chosen);
  INFO("packed automatic vs forced " << (wino ? "Winograd" : wino2 ? "Winograd F(2 x 2)" : "direct") << ": " << r.message);
  REQUIRE(r.ok);
  call(other_v, pw, loom::conv_algorithm::direct);
  r = lt::compare_bits(other_v, direct_v);
  INFO("packed weights called with conv_algorithm::direct vs the unpacked direct call: " << r.message);
  REQUIRE(r.ok);
  if (pw.winograd()) {
    call(other_v, pw, loom::conv_algorithm::winograd);
    r = lt::compare_bits(other_v, wino_v);
    INFO("packed weights called with conv_algorithm::winograd vs the unpacked Winograd call: " << r.message);
    REQUIRE(r.ok);
  }
  REQUIRE(d.out.untouched().ok);
  REQUIRE(es.violations.load() == 0);
}

/// check_automatic for one shape, its weights packed for it.
template <class T>
void automatic_case(lt::rng_t& g, const conv_case& cs, bool with_epilogue) {
  auto d = make_data<T>(g, cs, false);
  const auto pw = loom::pack_conv2d_weights(d.w.view, cs.params());
  INFO(d.info);
  CHECK(pw.winograd() == (winograd_applies(cs) && cs.C >= 16 && cs.CO >= 16));
  CHECK(pw.winograd2() == (winograd_applies(cs) && cs.C >= 16 && cs.CO >= 16 &&
                           36.0 * double(cs.C) * double(cs.CO) * double(sizeof(T)) > double(loom::simd::last_level_cache_bytes()) / 2));
  check_automatic(g, d, pw, with_epilogue);
}

conv_case shape3x3(index_t N, index_t H, index_t W, index_t C, index_t CO, index_t pad) {
  conv_case cs;
  cs.N = N, cs.H = H, cs.W = W, cs.C = C, cs.CO = CO, cs.KH = cs.KW = 3, cs.pt = cs.pl = cs.pb = cs.pr = pad;
  return cs;
}

/// Weights packed under `packed_for` (3 x 3, stride 1: both layouts) and called for cs, whose
/// parameters differ (stride, dilation, padding, algorithm): the reference, and the bits of the
/// unpacked call under cs's parameters.
template <class T>
void reuse_case(lt::rng_t& g, const conv_case& cs, const loom::conv2d_params& packed_for) {
  auto d = make_data<T>(g, cs, false);
  const auto pw = loom::pack_conv2d_weights(d.w.view, packed_for);
  REQUIRE(pw.winograd());
  loom::Tensor<T, 4> u_t(cs.out_ext());
  view4<T> u = u_t.view();
  loom::conv2d(d.out.view, d.in.view, pw, cs.params());
  loom::conv2d(u, d.in.view, d.w.view, cs.params());
  INFO(d.info << "; weights packed for stride 1, dilation 1 (both layouts), called with these parameters");
  lt::result r = lt::compare(d.out.view, d.ref, conv_tolerance<T>(cs));
  INFO(r.message);
  CHECK(r.ok);
  r = lt::compare_bits(d.out.view, u);
  INFO("packed vs unpacked: " << r.message);
  CHECK(r.ok);
  REQUIRE(d.out.untouched().ok);
}

struct pack_case {
  const char* what;
  idx_t<4> w_ext;
  loom::conv2d_params p;
  bool winograd;  // whether the packed weights hold the Winograd layout
};

template <class T>
void check_pack_layouts() {
  const auto direct = loom::conv_algorithm::direct, winograd = loom::conv_algorithm::winograd;
  const std::vector<pack_case> cases = {
      {"3 x 3, C = CO = 16", {3, 3, 16, 16}, {.padding = 1}, true},
      {"3 x 3, C = 64, CO = 70", {3, 3, 64, 70}, {.padding = 1}, true},
      {"3 x 3, C = 17, CO = 128, no padding", {3, 3, 17, 128}, {}, true},
      {"C = 8", {3, 3, 8, 32}, {.padding = 1}, false},
      {"C = 15", {3, 3, 15, 64}, {.padding = 1}, false},
      {"CO = 8", {3, 3, 32, 8}, {.padding = 1}, false},
      {"stride 2", {3, 3, 32, 32}, {.stride = {2, 2}, .padding = 1}, false},
      {"stride (1, 2)", {3, 3, 32, 32}, {.stride = {1, 2}, .padding = 1}, false},
      {"dilation 2", {3, 3, 32, 32}, {.padding = 1, .dilation = {2, 2}}, false},
      {"dilation (2, 1)", {3, 3, 32, 32}, {.padding = 1, .dilation = {2, 1}}, false},
      {"groups 2", {3, 3, 16, 32}, {.padding = 1, .groups = 2}, false},
      {"5 x 5", {5, 5, 32, 32}, {.padding = 1}, false},
      {"1 x 3", {1, 3, 32, 32}, {.padding = 1}, false},
      {"3 x 3, C = CO = 32, algorithm direct", {3, 3, 32, 32}, {.padding = 1, .algorithm = direct}, false},
      {"3 x 3, C = 8, CO = 4, algorithm winograd", {3, 3, 8, 4}, {.padding = 1, .algorithm = winograd}, true},
  };
  for (const pack_case& pc : cases) {
    INFO(lt::type_name<T>() << " weights " << lt::to_string(pc.w_ext) << ": " << pc.what);
    loom::Tensor<T, 4> w_t(pc.w_ext, "w");
    const view4<T> w = w_t.view();
    lt::fill(w, 0.5);
    const auto pw = loom::pack_conv2d_weights(w, pc.p);
    CHECK(pw.winograd() == pc.winograd);
    CHECK((pw.winograd_data() != nullptr) == pc.winograd);
    CHECK(!pw.winograd2());  // F(2 x 2) only when asked for, or for weights beyond the cache limit
    CHECK(pw.direct());
  }
  // conv_algorithm::winograd_2x2: the direct layout and F(2 x 2)'s, not F(4 x 4)'s.
  loom::Tensor<T, 4> w_t(std::array<index_t, 4>{3, 3, 20, 24}, "w");
  lt::fill(w_t.view(), 0.5);
  const auto pw = loom::pack_conv2d_weights(w_t.view(), {.padding = 1, .algorithm = loom::conv_algorithm::winograd_2x2});
  CHECK(pw.winograd2());
  CHECK(pw.winograd2_data() != nullptr);
  CHECK(!pw.winograd());
  CHECK(pw.direct());
}

}  // namespace

TEST_CASE("conv2d: the automatic choice of Winograd, seen in the result's bits", "[conv][winograd]") {
  check_pack_layouts<float>();
  check_pack_layouts<double>();
  auto g = lt::make_rng("conv winograd automatic");
  // automatic_case(g, shape, with the epilogue); expect_winograd says what automatic must choose.
  // The weights' limit is half the last-level cache (16 MiB where it is 32 MiB): C CO <= lim(T).
  const auto limit_case = [&]<class T>(std::type_identity<T>, index_t N) {
    const double half = double(loom::simd::last_level_cache_bytes()) / 2;
    const index_t C = 256, fit = index_t(half / (36.0 * double(sizeof(T)) * double(C)));  // largest CO that fits
    automatic_case<T>(g, shape3x3(N, 1, 1, C, fit, 1), true);      // at the limit: Winograd on one-pixel tiles
    automatic_case<T>(g, shape3x3(N, 1, 1, C, fit + 1, 1), false); // one channel beyond: direct below 16 tiles
    REQUIRE(expect_winograd<T>(shape3x3(N, 1, 1, C, fit, 1)));
    REQUIRE(expect_winograd<T>(shape3x3(N, 1, 1, C, fit + 1, 1)) == (N >= 16));
  };
  limit_case(std::type_identity<float>{}, 1);
  limit_case(std::type_identity<float>{}, 15);   // 15 tiles: direct beyond the limit
  limit_case(std::type_identity<float>{}, 16);   // 16: Winograd beyond it too
  limit_case(std::type_identity<double>{}, 1);
  {  // beyond the limit, 4 F(4 x 4) tiles but 16 of F(2 x 2): F(2 x 2), from weights packed under automatic too
    const index_t C = 256, CO = index_t(double(loom::simd::last_level_cache_bytes()) / 2 / (36.0 * 4 * double(C))) + 1;
    const conv_case cs = shape3x3(1, 8, 8, C, CO, 1);
    REQUIRE(expect_winograd_2x2<float>(cs));
    automatic_case<float>(g, cs, true);
  }
  automatic_case<float>(g, shape3x3(1, 7, 7, 128, 128, 1), false);    // 4 tiles, weights within the limit: Winograd
  automatic_case<float>(g, shape3x3(3, 1, 17, 128, 128, 1), false);   // 3 x 5 partial tiles
  automatic_case<float>(g, shape3x3(4, 1, 15, 128, 128, 1), true);    // 4 x 4
  automatic_case<float>(g, shape3x3(1, 1, 1, 16, 16, 1), true);       // small weights: Winograd on one pixel
  automatic_case<float>(g, shape3x3(2, 9, 13, 16, 70, 1), false);     // Winograd
  automatic_case<float>(g, shape3x3(1, 17, 17, 8, 32, 1), true);      // C = 8: direct
  automatic_case<float>(g, shape3x3(1, 17, 17, 16, 15, 1), false);    // CO = 15: direct
  automatic_case<float>(g, shape3x3(1, 17, 17, 15, 16, 1), false);    // C = 15: direct
  {
    conv_case cs = shape3x3(1, 17, 17, 32, 32, 1);
    cs.sh = cs.sw = 2;  // direct: stride 2, dilation 2, groups 2, 5 x 5, 3 x 1
    automatic_case<float>(g, cs, true);
    cs.sh = cs.sw = 1, cs.dh = cs.dw = 2;
    automatic_case<float>(g, cs, false);
    cs.dh = cs.dw = 1, cs.groups = 2;
    automatic_case<float>(g, cs, true);
    cs.groups = 1, cs.KH = cs.KW = 5;
    automatic_case<float>(g, cs, false);
    cs.KH = 3, cs.KW = 1;
    automatic_case<float>(g, cs, true);
  }
  automatic_case<double>(g, shape3x3(1, 7, 7, 96, 96, 1), true);     // 4 tiles, weights within the limit: Winograd
  automatic_case<double>(g, shape3x3(3, 5, 6, 17, 33, 2), true);     // Winograd
  automatic_case<double>(g, shape3x3(2, 9, 9, 7, 64, 1), false);     // C = 7: direct

  // One set of packed weights with both layouts (float, weights just beyond the limit): Winograd
  // on a batch of 16 tiles, direct on a one-pixel image.
  {
    const index_t C = 256, CO = index_t(double(loom::simd::last_level_cache_bytes()) / 2 / (36.0 * 4 * double(C))) + 1;
    const conv_case big = shape3x3(16, 1, 1, C, CO, 1), pixel = shape3x3(1, 1, 1, C, CO, 1);
    REQUIRE(expect_winograd<float>(big));
    REQUIRE(!expect_winograd<float>(pixel));
    auto db = make_data<float>(g, big, false);
    auto dp = make_data<float>(g, pixel, true);
    for (index_t ky = 0; ky < 3; ++ky)  // the same weights in both
      for (index_t kx = 0; kx < 3; ++kx)
        for (index_t c = 0; c < C; ++c)
          for (index_t co = 0; co < CO; ++co) dp.w.view(ky, kx, c, co) = db.w.view(ky, kx, c, co);
    dp.ref = reference(pixel, dp.in.view, dp.w.view);
    const auto pw = loom::pack_conv2d_weights(db.w.view, {.padding = 1});
    REQUIRE(pw.winograd());
    check_automatic(g, db, pw, true);
    check_automatic(g, dp, pw, false);
  }

  // Weights packed with both layouts for a 3 x 3 stride-1 layer, called with a stride, a
  // dilation or conv_algorithm::direct: the direct kernel runs (Winograd does not apply, or was
  // not asked for).
  {
    const loom::conv2d_params packed_for{.padding = 1};
    conv_case cs = shape3x3(2, 9, 9, 32, 32, 1);
    cs.sh = cs.sw = 2;
    reuse_case<float>(g, cs, packed_for);
    cs.sh = 1, cs.sw = 2;
    reuse_case<float>(g, cs, packed_for);
    cs.sw = 1, cs.dh = cs.dw = 2, cs.pt = cs.pl = cs.pb = cs.pr = 2;
    reuse_case<float>(g, cs, packed_for);
    cs.dh = cs.dw = 1, cs.pt = cs.pl = cs.pb = cs.pr = 1, cs.algorithm = loom::conv_algorithm::direct;
    reuse_case<float>(g, cs, packed_for);
    cs = shape3x3(2, 9, 9, 17, 33, 1);
    cs.sh = cs.sw = 2;
    reuse_case<double>(g, cs, packed_for);
  }
}

TEST_CASE("conv2d: conv_algorithm::winograd where it does not apply, or with weights not packed for it, throws; nothing written",
          "[conv][winograd][errors]") {
  // in: 1 x 6 x 5 x 4.
  loom::Tensor<float, 4> in_t("in", 1, 6, 5, 4);
  const view4<float> in = in_t.view();
  lt::fill(in, 1.f);
  const auto winograd = loom::conv_algorithm::winograd;
  const std::vector<bad_case> cases = {
      {"a 5 x 5 window", {.padding = 1, .algorithm = winograd}, {5, 5, 4, 8}, {1, 4, 3, 8}, {"conv_algorithm::winograd", "5 x 5"}},
      {"a 3 x 1 window", {.algorithm = winograd}, {3, 1, 4, 8}, {1, 4, 5, 8}, {"conv_algorithm::winograd", "3 x 1"}},
      {"stride 2", {.stride = {2, 2}, .algorithm = winograd}, {3, 3, 4, 8}, {1, 2, 2, 8}, {"conv_algorithm::winograd", "stride (2, 2)"}},
      {"stride (1, 2)", {.stride = {1, 2}, .algorithm = winograd}, {3, 3, 4, 8}, {1, 4, 2, 8}, {"conv_algorithm::winograd", "stride (1, 2)"}},
      {"dilation 2", {.dilation = {2, 2}, .algorithm = winograd}, {3, 3, 4, 8}, {1, 2, 1, 8},
       {"conv_algorithm::winograd", "dilation (2, 2)"}},
      {"groups 2", {.groups = 2, .algorithm = winograd}, {3, 3, 2, 8}, {1, 4, 3, 8}, {"conv_algorithm::winograd", "groups 2"}},
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
    // Packing for Winograd refuses the same parameters.
    const std::string mp = shape_message([&] { (void)loom::pack_conv2d_weights(w, bc.p); });
    INFO("packing: " << mp);
    CHECK_THAT(mp, Catch::Contains("loom::conv2d") && Catch::Contains("conv_algorithm::winograd"));
    // Weights packed under automatic, then called with conv_algorithm::winograd.
    loom::conv2d_params automatic = bc.p;
    automatic.algorithm = loom::conv_algorithm::automatic;
    const auto pw = loom::pack_conv2d_weights(w, automatic);
    const std::string mc = shape_message([&] { loom::conv2d(out, in, pw, bc.p); });
    INFO("packed under automatic, called with winograd: " << mc);
    CHECK_THAT(mc, Catch::Contains("loom::conv2d"));
    for (const std::string& s : bc.says) CHECK_THAT(mc, Catch::Contains(s));
    CHECK(all_equal(out, 42.f));
  }

  // Weights packed without the Winograd layout (conv_algorithm::direct, or automatic with C < 16),
  // called with conv_algorithm::winograd.
  {
    loom::Tensor<float, 4> in16_t("in", 1, 6, 5, 16), w_t("w", 3, 3, 16, 16), w4_t("w", 3, 3, 4, 16), out_t("out", 1, 4, 3, 16);
    const view4<float> in16 = in16_t.view(), w = w_t.view(), w4 = w4_t.view();
    view4<float> out = out_t.view();
    lt::fill(in16, 1.f);
    lt::fill(w, 0.5f);
    lt::fill(w4, 0.5f);
    lt::fill(out, 42.f);
    const auto pw_direct = loom::pack_conv2d_weights(w, {.algorithm = loom::conv_algorithm::direct});
    REQUIRE(!pw_direct.winograd());
    std::string m = shape_message([&] { loom::conv2d(out, in16, pw_direct, {.algorithm = winograd}); });
    INFO("packed with algorithm direct: " << m);
    CHECK_THAT(m, Catch::Contains("loom::conv2d") && Catch::Contains("not packed for Winograd"));
    CHECK(all_equal(out, 42.f));
    const auto pw_small = loom::pack_conv2d_weights(w4);  // automatic, C = 4: the direct layout only
    REQUIRE(!pw_small.winograd());
    m = shape_message([&] { loom::conv2d(out, in, pw_small, {.algorithm = winograd}); });
    INFO("packed under automatic with C = 4: " << m);
    CHECK_THAT(m, Catch::Contains("not packed for Winograd"));
    CHECK(all_equal(out, 42.f));
    // F(2 x 2) needs its own layout: packed under automatic, it throws.
    m = shape_message([&] { loom::conv2d(out, in16, pw_direct, {.algorithm = loom::conv_algorithm::winograd_2x2}); });
    INFO("packed with algorithm direct, called with winograd_2x2: " << m);
    CHECK_THAT(m, Catch::Contains("conv_algorithm::winograd_2x2") && Catch::Contains("not packed for Winograd F(2 x 2"));
    CHECK(all_equal(out, 42.f));
    // And where it does not apply, as F(4 x 4).
    m = shape_message([&] { loom::conv2d(out, in16, w, {.stride = {2, 2}, .algorithm = loom::conv_algorithm::winograd_2x2}); });
    INFO("winograd_2x2 at stride 2: " << m);
    CHECK_THAT(m, Catch::Contains("conv_algorithm::winograd_2x2 needs a 3 x 3 window") && Catch::Contains("stride (2, 2)"));
    CHECK(all_equal(out, 42.f));
    // The same weights packed under automatic (C = CO = 16: both layouts) run.
    const auto pw = loom::pack_conv2d_weights(w);
    REQUIRE(pw.winograd());
    loom::conv2d(out, in16, pw, {.algorithm = winograd});
    CHECK(!all_equal(out, 42.f));
  }
}

TEST_CASE("conv2d: Winograd gives the same bits on 1 and 2 threads", "[conv][winograd][threads]") {
  auto g = lt::make_rng("conv winograd threads");
  const auto winograd = loom::conv_algorithm::winograd;
  std::vector<conv_case> shapes;
  {
    conv_case cs = shape3x3(2, 13, 13, 33, 70, 1);  // several runs of tiles and blocks of channels
    cs.algorithm = winograd;
    shapes.push_back(cs);
    cs = shape3x3(3, 5, 5, 17, 16, 0);  // runs spanning images; automatic takes Winograd
    cs.pt = 1, cs.pl = 2, cs.pb = 2;
    shapes.push_back(cs);
    cs = shape3x3(1, 13, 9, 64, 7, 2);
    cs.algorithm = winograd;
    shapes.push_back(cs);
  }
  const auto run_threads = [&]<class T>(const conv_case& cs, T) {
    for (int packed = 0; packed < 2; ++packed)
      for (int with_epilogue = 0; with_epilogue < 2; ++with_epilogue) {
        auto d = make_data<T>(g, cs, packed == 1 && with_epilogue == 1);
        epilogue_state<T> es(g, cs, 0.25);
        const bias_relu<T> epi = es.epilogue();
        if (with_epilogue) es.apply(d.ref);
        if (cs.algorithm == loom::conv_algorithm::automatic) REQUIRE(expect_winograd<T>(cs));
        INFO(d.info << (packed ? "; packed" : "; unpacked") << (with_epilogue ? "; with the epilogue" : ""));
        std::optional<loom::Tensor<T, 4>> first;
        for (int threads : {1, 2}) {
          lt::thread_scope ts(threads);
          INFO("threads = " << threads);
          run_conv(d, packed == 1, with_epilogue ? &epi : nullptr);
          const lt::result r = compare_winograd(d.out.view, d.ref);
          INFO(r.message);
          REQUIRE(r.ok);
          if (threads == 1) {
            first.emplace(copy_of(d.out.view));
          } else {
            const lt::result b = lt::compare_bits(d.out.view, first->view());
            INFO("2 threads vs 1: " << b.message);
            REQUIRE(b.ok);
          }
        }
        REQUIRE(d.out.untouched().ok);
        REQUIRE(es.violations.load() == 0);
      }
  };
  for (const conv_case& cs : shapes) {
    run_threads(cs, 0.f);
    run_threads(cs, 0.0);
  }
}
