// tests/test_conv_index.cpp — convolutions written in index notation, which loom::run hands to the
// convolution engine (kernels/conv/convolution.hpp says what is recognized, run_convolution.hpp
// how it runs), against plain loops of this file accumulated in double: dense and depthwise, any
// stride, dilation and offset (`y * s + ry * d - p` with run-time ints), the input padded through
// constant_exterior (zero and a nonzero value) or read as it is (a "valid" convolution, and one
// read out of range: bounds_error, nothing written); epilogues fused in index notation (bias +
// ReLU, folded batch norm, a residual, ReLU6); `+=`; weights in other dimension orders and the
// product either way round; an output that is the input; definitions that look like convolutions
// but are not (the default schedule must not give them to the engine, and they must compute the
// right values as loop nests); conv_schedule; float and double.
//
// Few definition types on purpose (each is an instantiation of the engine, and the file must
// compile quickly in CI): shapes, strides, dilations, offsets and padding values vary at run time
// over the same definitions; every operand is a loom::TensorView.
#include "support.hpp"

using loom::index_t;
using lt::idx_t;

namespace {

using loom::vars::c;
using loom::vars::n;
using loom::vars::rx;
using loom::vars::ry;
using loom::vars::x;
using loom::vars::y;
constexpr loom::Var<"co"> co;
constexpr loom::Var<"ci"> ci;

template <class T>
using view1 = loom::TensorView<T, 1>;
template <class T>
using view3 = loom::TensorView<T, 3>;
template <class T>
using view4 = loom::TensorView<T, 4>;

/// A convolution as the definitions write it: out(n, y, x, co) over N x OH x OW x CO reads
/// in(n, y * sh + ry * dh - pt, x * sw + rx * dw - pl, ci) for ry < KH, rx < KW, ci < C (depthwise:
/// channel co, weights KH x KW x C with C == CO).
struct shape {
  index_t N = 1, H = 1, W = 1, C = 1, CO = 1, KH = 1, KW = 1;
  index_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  index_t OH = 1, OW = 1;
  bool depthwise = false;

  index_t taps() const { return KH * KW * (depthwise ? 1 : C); }
  double macs() const { return double(N) * double(OH) * double(OW) * double(CO) * double(taps()); }
  idx_t<4> in_ext() const { return {N, H, W, C}; }
  idx_t<4> out_ext() const { return {N, OH, OW, CO}; }
  std::string describe() const {
    return lt::str(depthwise ? "depthwise " : "dense ", "N = ", N, ", H = ", H, ", W = ", W, ", C = ", C, ", CO = ", CO, ", kernel ", KH,
                   " x ", KW, ", in(n, y * ", sh, " + ry * ", dh, " - ", pt, ", x * ", sw, " + rx * ", dw, " - ", pl, ", .) -> OH = ", OH,
                   ", OW = ", OW);
  }
};

/// The output extent along one axis when the reads span [-lo, in + hi) (a value < 1: none).
index_t out_extent(index_t in, index_t lo, index_t hi, index_t k, index_t stride, index_t dil) {
  const index_t room = in + lo + hi - dil * (k - 1) - 1;
  return room < 0 ? 0 : room / stride + 1;
}

template <class V>
V pick(lt::rng_t& g, std::initializer_list<V> from) {
  return *(from.begin() + lt::uniform(g, 0, index_t(from.size()) - 1));
}

constexpr double max_macs = 1.5e6;  // keeps one case's double reference (and a plain-loop run) short

/// Random spatial extents, kernel, strides and dilations for channels C and CO. padded: offsets
/// 0 to 2 and up to 2 pixels read past the far edge (constant_exterior gives them a value);
/// otherwise every read stays inside the input (offset 0 or -1: a crop).
shape random_shape(lt::rng_t& g, bool depthwise, bool padded, index_t C, index_t CO) {
  for (;;) {
    shape k;
    k.depthwise = depthwise;
    k.N = lt::uniform(g, 1, 2);
    k.H = pick<index_t>(g, {1, 2, 3, 5, 7, 11, 13, 17});
    k.W = pick<index_t>(g, {1, 2, 3, 5, 7, 11, 13, 17, 19});
    k.C = C;
    k.CO = depthwise ? C : CO;
    k.KH = lt::uniform(g, 1, 3);
    k.KW = lt::coin(g, 0.6) ? k.KH : lt::uniform(g, 1, 3);
    k.sh = lt::uniform(g, 1, 2);
    k.sw = lt::coin(g, 0.7) ? k.sh : lt::uniform(g, 1, 2);
    k.dh = lt::uniform(g, 1, 2);
    k.dw = lt::coin(g, 0.7) ? k.dh : lt::uniform(g, 1, 2);
    if (padded) {
      k.pt = lt::uniform(g, 0, 2), k.pl = lt::uniform(g, 0, 2);
      k.OH = out_extent(k.H, k.pt, lt::uniform(g, 0, 2), k.KH, k.sh, k.dh);
      k.OW = out_extent(k.W, k.pl, lt::uniform(g, 0, 2), k.KW, k.sw, k.dw);
    } else {
      k.pt = lt::coin(g, 0.7) ? 0 : -1, k.pl = lt::coin(g, 0.7) ? 0 : -1;
      k.OH = out_extent(k.H, k.pt, 0, k.KH, k.sh, k.dh);
      k.OW = out_extent(k.W, k.pl, 0, k.KW, k.sw, k.dw);
    }
    if (k.OH >= 1 && k.OW >= 1 && k.macs() <= max_macs) return k;
  }
}

/// A 3 x 3 "same" convolution (stride 1, offset 1) with C == CO.
shape same_3x3(index_t N, index_t H, index_t W, index_t C, bool depthwise) {
  shape k;
  k.N = N, k.H = k.OH = H, k.W = k.OW = W, k.C = k.CO = C, k.KH = k.KW = 3, k.pt = k.pl = 1, k.depthwise = depthwise;
  return k;
}

/// Operands of one case: random input and weights, an output of zeros, each in its own storage
/// whose elements outside the view are a sentinel. Dense weights are HWIO (KH, KW, C, CO) or, when
/// asked, OIHW (CO, C, KH, KW); depthwise ones KH x KW x C (or C x KH x KW).
template <class T>
struct conv_data {
  shape k;
  bool oihw = false;
  lt::buffer<T, 4> in, w, out;
  lt::buffer<T, 3> wd;
  std::string info;

  /// The weight of tap (ky, kx), input channel i, output channel o.
  double weight(index_t ky, index_t kx, index_t i, index_t o) const {
    if (k.depthwise) return oihw ? double(wd.view(o, ky, kx)) : double(wd.view(ky, kx, o));
    return oihw ? double(w.view(o, i, ky, kx)) : double(w.view(ky, kx, i, o));
  }
};

template <class T>
conv_data<T> make_data(lt::rng_t& g, const shape& k, bool any_layout, bool oihw = false) {
  conv_data<T> d;
  d.k = k;
  d.oihw = oihw;
  auto lay = [&] { return any_layout ? lt::pick_layout(g) : lt::layout::row_major; };
  d.in = lt::random_buffer<T, 4>(k.in_ext(), lay(), "in", g);
  if (k.depthwise) d.wd = lt::random_buffer<T, 3>(oihw ? idx_t<3>{k.C, k.KH, k.KW} : idx_t<3>{k.KH, k.KW, k.C}, lay(), "wd", g);
  else d.w = lt::random_buffer<T, 4>(oihw ? idx_t<4>{k.CO, k.C, k.KH, k.KW} : idx_t<4>{k.KH, k.KW, k.C, k.CO}, lay(), "w", g);
  d.out = lt::make_buffer<T, 4>(k.out_ext(), lay(), "out");
  d.info = lt::str(lt::type_name<T>(), " ", k.describe(), "; ", d.in.describe(), "; ",
                   k.depthwise ? d.wd.describe() : d.w.describe(), "; ", d.out.describe());
  return d;
}

/// in(b, iy, ix, ch), or `outside` where (iy, ix) is outside the image (NaN for a read that must
/// not happen: a wrong shape shows in the result).
template <class V>
double read(const V& in, index_t b, index_t iy, index_t ix, index_t ch, double outside) {
  if (iy < 0 || iy >= in.extent(1) || ix < 0 || ix >= in.extent(2)) return outside;
  return double(in(b, iy, ix, ch));
}

/// out(b, oy, ox, o) row-major over (N, OH, OW, CO): the sum (or maximum) over the taps and input
/// channels (depthwise: one) of term(b, oy, ox, o, ky, kx, i).
template <class Term>
std::vector<double> reference(const shape& k, Term&& term, bool take_max = false) {
  std::vector<double> ref;
  ref.reserve(std::size_t(k.N * k.OH * k.OW * k.CO));
  const index_t CI = k.depthwise ? 1 : k.C;
  for (index_t b = 0; b < k.N; ++b)
    for (index_t oy = 0; oy < k.OH; ++oy)
      for (index_t ox = 0; ox < k.OW; ++ox)
        for (index_t o = 0; o < k.CO; ++o) {
          double acc = take_max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (index_t ky = 0; ky < k.KH; ++ky)
            for (index_t kx = 0; kx < k.KW; ++kx)
              for (index_t i = 0; i < CI; ++i) {
                const double v = term(b, oy, ox, o, ky, kx, i);
                acc = take_max ? std::max(acc, v) : acc + v;
              }
          ref.push_back(acc);
        }
  return ref;
}

/// The convolution's own term: the input (`outside` where padded) times the weight.
template <class T>
std::vector<double> conv_reference(const conv_data<T>& d, double outside) {
  const shape& k = d.k;
  return reference(k, [&](index_t b, index_t oy, index_t ox, index_t o, index_t ky, index_t kx, index_t i) {
    const index_t iy = oy * k.sh + ky * k.dh - k.pt, ix = ox * k.sw + kx * k.dw - k.pl;
    return read(d.in.view, b, iy, ix, k.depthwise ? o : i, outside) * d.weight(ky, kx, i, o);
  });
}

template <class T>
double tol(const shape& k) {
  return lt::tolerance<T>(k.taps());
}

// ---- the definitions (each distinct type is one instantiation of the engine or of a nest) ----

struct same {
  template <class E>
  E operator()(const E& e) const {
    return e;
  }
};

/// out(n, y, x, co) = f(sum(ry, rx, ci, constant_exterior(in, pad)(n, y * sh + ry * dh - pt, ..., ci) * w(ry, rx, ci, co)))
template <class T, class F = same>
auto dense_padded(view4<T> out, view4<T> in, view4<T> w, T pad, const shape& k, F f = {}) {
  const auto pin = loom::constant_exterior(in, pad);
  return out(n, y, x, co) = f(sum(ry, rx, ci, pin(n, y * k.sh + ry * k.dh - k.pt, x * k.sw + rx * k.dw - k.pl, ci) * w(ry, rx, ci, co)));
}
/// The same, the input read as it is (no boundary).
template <class T>
auto dense_valid(view4<T> out, view4<T> in, view4<T> w, const shape& k) {
  return out(n, y, x, co) = sum(ry, rx, ci, in(n, y * k.sh + ry * k.dh - k.pt, x * k.sw + rx * k.dw - k.pl, ci) * w(ry, rx, ci, co));
}
/// out(n, y, x, c) = f(sum(ry, rx, constant_exterior(in, pad)(n, .., .., c) * wd(ry, rx, c)))
template <class T, class F = same>
auto depthwise_padded(view4<T> out, view4<T> in, view3<T> wd, T pad, const shape& k, F f = {}) {
  const auto pin = loom::constant_exterior(in, pad);
  return out(n, y, x, c) = f(sum(ry, rx, pin(n, y * k.sh + ry * k.dh - k.pt, x * k.sw + rx * k.dw - k.pl, c) * wd(ry, rx, c)));
}
template <class T>
auto depthwise_valid(view4<T> out, view4<T> in, view3<T> wd, const shape& k) {
  return out(n, y, x, c) = sum(ry, rx, in(n, y * k.sh + ry * k.dh - k.pt, x * k.sw + rx * k.dw - k.pl, c) * wd(ry, rx, c));
}

bool is_engine(const std::string& nest) { return nest.rfind("convolution engine", 0) == 0; }

// The look-alikes (not convolutions) run as loop nests. Under the default schedule each compiles
// for over half a minute (a boundary condition and a reduction: the interior and the border of
// two register-blocked nests); CI runs them under loom::schedule<> (the plain nest) and checks
// under the default schedule only what print_loop_nest says, which is the same choice loom::run
// makes. -DLOOM_TEST_CONV_INDEX_FULL=1 runs them under the default schedule too.
#ifndef LOOM_TEST_CONV_INDEX_FULL
#define LOOM_TEST_CONV_INDEX_FULL 0
#endif
using lookalike_schedule = std::conditional_t<LOOM_TEST_CONV_INDEX_FULL != 0, loom::auto_schedule, loom::schedule<>>;

/// Runs def under S (after the output is set to `init`, or to NaN: every element must be written)
/// and compares the output with ref; checks whether print_loop_nest (default schedule) says the
/// engine runs it and that nothing outside the output's view was written.
template <class S = loom::auto_schedule, class T, class Def>
void expect(const Def& def, lt::buffer<T, 4>& out, const std::vector<double>& ref, double tolerance, bool engine, const std::string& info,
            const std::vector<T>* init = nullptr) {
  INFO(info);
  const std::string nest = loom::print_loop_nest(def);
  INFO("print_loop_nest:\n" << nest);
  CHECK(is_engine(nest) == engine);
  if (init) {
    std::size_t q = 0;
    lt::for_each_index(lt::extents_of(out.view), [&](const auto& idx) { lt::at(out.view, idx) = (*init)[q++]; });
  } else {
    lt::fill(out.view, std::numeric_limits<T>::quiet_NaN());
  }
  loom::run<S>(def);
  const lt::result r = lt::compare(out.view, ref, tolerance);
  INFO(r.message);
  CHECK(r.ok);
  const lt::result u = out.untouched();
  INFO(u.message);
  CHECK(u.ok);
}

/// The output's elements in row-major order (a `+=` case's initial values).
template <class T, std::size_t R>
std::vector<T> elements(const loom::TensorView<T, R>& v) {
  std::vector<T> e;
  lt::for_each_index(lt::extents_of(v), [&](const auto& idx) { e.push_back(lt::at(v, idx)); });
  return e;
}

/// The same result on 1 and 3 threads, bit for bit (the engine splits the output, never a sum).
template <class T, class Def>
void same_bits_on_threads(const Def& def, const lt::buffer<T, 4>& out) {
  std::vector<T> first;
  for (int threads : {1, 3}) {
    lt::thread_scope ts(threads);
    lt::fill(out.view, std::numeric_limits<T>::quiet_NaN());
    loom::run(def);
    if (threads == 1) {
      first = elements(out.view);
    } else {
      const std::vector<T> now = elements(out.view);
      bool same_bits = first.size() == now.size();
      for (std::size_t q = 0; same_bits && q < first.size(); ++q) same_bits = lt::same_bits(first[q], now[q]);
      INFO("the result on 3 threads differs from the result on 1");
      CHECK(same_bits);
    }
  }
}

/// Channel counts at and around the vector widths: 1, 3, 13, 17, 64, 70.
const std::initializer_list<index_t> dense_channels = {1, 3, 13, 17, 64, 70};

template <class T>
void dense_padded_cases(const char* key, int cases) {
  auto g = lt::make_rng(key);
  const std::vector<index_t> chans(dense_channels);
  for (int q = 0; q < cases; ++q) {
    // 24 of the list's (C, CO) pairs, each C with four COs.
    const index_t C = chans[std::size_t(q) % 6], CO = chans[std::size_t(q + q / 6) % 6];
    const shape k = random_shape(g, false, true, C, CO);
    const double pad = q % 2 == 0 ? 0.0 : 0.5;
    auto d = make_data<T>(g, k, q % 3 == 2);
    const auto def = dense_padded(d.out.view, d.in.view, d.w.view, T(pad), k);
    expect(def, d.out, conv_reference(d, pad), tol<T>(k), true, lt::str(d.info, "; constant_exterior(in, ", pad, ")"));
    if (q < 4) same_bits_on_threads(def, d.out);
  }
}

template <class T>
void dense_valid_cases(const char* key, int cases) {
  auto g = lt::make_rng(key);
  for (int q = 0; q < cases; ++q) {
    const shape k = random_shape(g, false, false, pick(g, dense_channels), pick(g, dense_channels));
    auto d = make_data<T>(g, k, q % 3 == 1);
    expect(dense_valid(d.out.view, d.in.view, d.w.view, k), d.out, conv_reference(d, std::numeric_limits<double>::quiet_NaN()), tol<T>(k),
           true, lt::str(d.info, "; no boundary"));
  }
}

}  // namespace

TEST_CASE("conv index: dense, padded with zero and with 0.5, random shapes", "[conv][index]") {
  dense_padded_cases<float>("conv index dense float", 24);
  dense_padded_cases<double>("conv index dense double", 8);
}

TEST_CASE("conv index: dense, no boundary (a valid convolution, also cropped)", "[conv][index]") {
  dense_valid_cases<float>("conv index valid float", 14);
}

TEST_CASE("conv index: run-time coefficients below 1 (a flipped kernel, stride 0) take the plain loops", "[conv][index]") {
  // The definition is a convolution by its form, so the engine runs it; the coefficients are read
  // at run time, and a dilation of -1 or a stride of 0 is computed point by point.
  auto g = lt::make_rng("conv index coefficients");
  for (int q = 0; q < 4; ++q) {
    shape k;
    k.N = 2, k.H = 7, k.W = 9, k.C = q % 2 ? 17 : 3, k.CO = q % 2 ? 5 : 20, k.KH = 3, k.KW = 2;
    k.OH = 7, k.OW = 9;
    if (q < 2) {
      k.dh = -1, k.pt = -2;  // reads y + 2 - ry: the kernel flipped
      k.dw = -2, k.pl = -1;
    } else {
      k.sh = 0, k.pt = 0;  // every row reads the same input rows
      k.sw = 1, k.pl = 1;
    }
    const double pad = q % 2 ? 0.5 : 0.0;
    auto d = make_data<float>(g, k, false);
    expect(dense_padded(d.out.view, d.in.view, d.w.view, float(pad), k), d.out, conv_reference(d, pad), tol<float>(k), true,
           lt::str(d.info, "; constant_exterior(in, ", pad, ")"));
  }
}

TEST_CASE("conv index: depthwise, padded with zero and with a nonzero value, and unpadded", "[conv][index][depthwise]") {
  auto g = lt::make_rng("conv index depthwise");
  int q = 0;
  for (index_t C : {1, 7, 16, 17, 33})
    for (int rep = 0; rep < 3; ++rep, ++q) {
      const shape k = random_shape(g, true, true, C, C);
      const double pad = rep == 0 ? 0.0 : rep == 1 ? 0.5 : -1.25;
      auto d = make_data<float>(g, k, rep == 2);
      const auto def = depthwise_padded(d.out.view, d.in.view, d.wd.view, float(pad), k);
      expect(def, d.out, conv_reference(d, pad), tol<float>(k), true, lt::str(d.info, "; constant_exterior(in, ", pad, ")"));
      if (rep == 0) same_bits_on_threads(def, d.out);
    }
  // A 3 x 3 "same" depthwise conv over rows of 1 to 3 tiles of pixels.
  for (index_t C : {7, 16, 33}) {
    const shape k = same_3x3(2, 5, 19, C, true);
    auto d = make_data<float>(g, k, false);
    expect(depthwise_padded(d.out.view, d.in.view, d.wd.view, 0.5f, k), d.out, conv_reference(d, 0.5), tol<float>(k), true,
           lt::str(d.info, "; constant_exterior(in, 0.5)"));
  }
  for (index_t C : {1, 17, 33}) {
    const shape k = random_shape(g, true, true, C, C);
    auto d = make_data<double>(g, k, C == 17);
    const double pad = C == 1 ? 0.0 : 0.5;
    expect(depthwise_padded(d.out.view, d.in.view, d.wd.view, pad, k), d.out, conv_reference(d, pad), tol<double>(k), true,
           lt::str(d.info, "; constant_exterior(in, ", pad, ")"));
  }
  for (index_t C : {1, 7, 16, 17, 33}) {
    const shape k = random_shape(g, true, false, C, C);
    auto d = make_data<float>(g, k, C == 7);
    expect(depthwise_valid(d.out.view, d.in.view, d.wd.view, k), d.out, conv_reference(d, std::numeric_limits<double>::quiet_NaN()),
           tol<float>(k), true, lt::str(d.info, "; no boundary"));
  }
}

TEST_CASE("conv index: epilogues fused in index notation", "[conv][index][epilogue]") {
  auto g = lt::make_rng("conv index epilogues");
  const std::vector<index_t> chans(dense_channels);
  for (int q = 0; q < 6; ++q) {
    const shape k = random_shape(g, false, true, chans[std::size_t(q)], chans[std::size_t(5 - q)]);
    const double pad = q % 2 ? 0.5 : 0.0;
    auto d = make_data<float>(g, k, q % 3 == 1);
    const std::vector<double> conv = conv_reference(d, pad);
    const auto per_channel = [&](const char* name) { return lt::random_buffer<float, 1>({k.CO}, lt::pick_layout(g), name, g); };
    const auto bias = per_channel("bias"), scale = per_channel("scale"), shift = per_channel("shift");
    const auto skip = lt::random_buffer<float, 4>(k.out_ext(), lt::pick_layout(g), "skip", g);
    const std::string info = lt::str(d.info, "; constant_exterior(in, ", pad, ")");
    const auto channel = [&](std::size_t q2) { return index_t(q2) % k.CO; };
    std::vector<double> ref(conv.size());
    const auto out = d.out.view, in = d.in.view, w = d.w.view;

    // Bias + ReLU.
    for (std::size_t p = 0; p < conv.size(); ++p) ref[p] = std::max(conv[p] + double(bias.view(channel(p))), 0.0);
    const view1<float> b = bias.view;
    expect(dense_padded(out, in, w, float(pad), k, [&](const auto& s) { return max(s + b(co), 0.f); }), d.out, ref, tol<float>(k), true,
           lt::str(info, "; max(sum + bias(co), 0)"));
    // Folded batch norm.
    for (std::size_t p = 0; p < conv.size(); ++p) ref[p] = conv[p] * double(scale.view(channel(p))) + double(shift.view(channel(p)));
    const view1<float> sc = scale.view, sf = shift.view;
    expect(dense_padded(out, in, w, float(pad), k, [&](const auto& s) { return s * sc(co) + sf(co); }), d.out, ref, tol<float>(k), true,
           lt::str(info, "; sum * scale(co) + shift(co)"));
    // ReLU6 (the sums reach past 6 where there are many taps).
    for (std::size_t p = 0; p < conv.size(); ++p) ref[p] = std::min(std::max(conv[p], 0.0), 6.0);
    expect(dense_padded(out, in, w, float(pad), k, [&](const auto& s) { return min(max(s, 0.f), 6.f); }), d.out, ref, tol<float>(k), true,
           lt::str(info, "; min(max(sum, 0), 6)"));
    // A residual from another tensor, and from the output itself (read before it is written).
    const auto residual = [](const view4<float>& r) { return [r](const auto& s) { return s + r(n, y, x, co); }; };
    {
      std::size_t p = 0;
      lt::for_each_index(lt::extents_of(skip.view), [&](const auto& idx) {
        ref[p] = conv[p] + double(lt::at(skip.view, idx));
        ++p;
      });
    }
    expect(dense_padded(out, in, w, float(pad), k, residual(skip.view)), d.out, ref, tol<float>(k), true,
           lt::str(info, "; sum + skip(n, y, x, co), ", skip.describe()));
    lt::fill_random(d.out.view, g);
    const std::vector<float> init = elements(d.out.view);
    for (std::size_t p = 0; p < conv.size(); ++p) ref[p] = conv[p] + double(init[p]);
    expect(dense_padded(out, in, w, float(pad), k, residual(out)), d.out, ref, tol<float>(k), true,
           lt::str(info, "; sum + out(n, y, x, co)"), &init);
  }
  // Depthwise with bias + ReLU.
  for (index_t C : {1, 7, 17, 33}) {
    const shape k = random_shape(g, true, true, C, C);
    const double pad = C % 2 ? 0.5 : 0.0;
    auto d = make_data<float>(g, k, C == 17);
    const auto bias = lt::random_buffer<float, 1>({C}, lt::pick_layout(g), "bias", g);
    std::vector<double> ref = conv_reference(d, pad);
    for (std::size_t p = 0; p < ref.size(); ++p) ref[p] = std::max(ref[p] + double(bias.view(index_t(p) % C)), 0.0);
    const view1<float> b = bias.view;
    expect(depthwise_padded(d.out.view, d.in.view, d.wd.view, float(pad), k, [&](const auto& s) { return max(s + b(c), 0.f); }), d.out, ref,
           tol<float>(k), true, lt::str(d.info, "; constant_exterior(in, ", pad, "); max(sum + bias(c), 0)"));
  }
}

TEST_CASE("conv index: += with a bare sum", "[conv][index][accumulate]") {
  auto g = lt::make_rng("conv index accumulate");
  for (int q = 0; q < 6; ++q) {
    const shape k = random_shape(g, false, true, pick(g, dense_channels), pick(g, dense_channels));
    const double pad = q % 2 ? 0.5 : 0.0;
    auto d = make_data<float>(g, k, q % 3 == 0);
    lt::fill_random(d.out.view, g, -2.0, 2.0);
    const std::vector<float> init = elements(d.out.view);
    std::vector<double> ref = conv_reference(d, pad);
    for (std::size_t p = 0; p < ref.size(); ++p) ref[p] += double(init[p]);
    const std::string info = lt::str(d.info, "; constant_exterior(in, ", pad, "); out initialised to random values, then +=");
    const auto pin = loom::constant_exterior(d.in.view, float(pad));
    const auto iy = y * k.sh + ry * k.dh - k.pt;
    const auto ix = x * k.sw + rx * k.dw - k.pl;
    expect(d.out.view(n, y, x, co) += sum(ry, rx, ci, pin(n, iy, ix, ci) * d.w.view(ry, rx, ci, co)), d.out, ref, tol<float>(k), true, info,
           &init);
  }
}

TEST_CASE("conv index: weights in other dimension orders, the product either way round", "[conv][index][layouts]") {
  auto g = lt::make_rng("conv index weight orders");
  for (int q = 0; q < 8; ++q) {
    const bool depthwise = q % 2 == 1;
    const index_t C = depthwise ? pick<index_t>(g, {1, 7, 17, 33}) : pick(g, dense_channels);
    const shape k = random_shape(g, depthwise, true, C, depthwise ? C : pick(g, dense_channels));
    const double pad = q % 4 < 2 ? 0.0 : 0.5;
    // OIHW weights w(co, ci, ry, rx) (the reduction's variables in another order), and depthwise
    // weights wd(c, ry, rx); the weights first in the product.
    auto d = make_data<float>(g, k, q >= 6, true);
    const auto pin = loom::constant_exterior(d.in.view, float(pad));
    const auto iy = y * k.sh + ry * k.dh - k.pt;
    const auto ix = x * k.sw + rx * k.dw - k.pl;
    const std::vector<double> ref = conv_reference(d, pad);
    const std::string info = lt::str(d.info, "; constant_exterior(in, ", pad, ")");
    if (!depthwise) {
      expect(d.out.view(n, y, x, co) = sum(ci, rx, ry, d.w.view(co, ci, ry, rx) * pin(n, iy, ix, ci)), d.out, ref, tol<float>(k), true,
             lt::str(info, "; sum(ci, rx, ry, w(co, ci, ry, rx) * in(..))"));
    } else {
      expect(d.out.view(n, y, x, c) = sum(ry, rx, d.wd.view(c, ry, rx) * pin(n, iy, ix, c)), d.out, ref, tol<float>(k), true,
             lt::str(info, "; sum(ry, rx, wd(c, ry, rx) * in(..))"));
    }
  }
}

namespace {

/// A row-major copy of a view.
template <class T>
loom::Tensor<T, 4> copy_of(const view4<T>& v) {
  loom::Tensor<T, 4> t(lt::extents_of(v));
  lt::for_each_index(lt::extents_of(v), [&](const auto& idx) { t(idx[0], idx[1], idx[2], idx[3]) = lt::at(v, idx); });
  return t;
}

/// A case whose output shares the input's storage: the output is the input shifted by `shift`
/// rows (0: the input itself). The reference reads the input as it was; form 0: dense padded,
/// 1: dense with no boundary, 2: depthwise padded, 3: dense padded +=.
void alias_case(lt::rng_t& g, const shape& k, index_t shift, int form, double pad) {
  REQUIRE(k.OH == k.H);
  REQUIRE(k.OW == k.W);
  REQUIRE(k.C == k.CO);
  loom::Tensor<float, 4> store("io", k.N, k.H + shift, k.W, k.C);
  const view4<float> all = store.view();
  lt::fill_random(all, g);
  const view4<float> in = all.block({0, 0, 0, 0}, k.in_ext());
  const view4<float> out = all.block({0, shift, 0, 0}, k.out_ext());
  const loom::Tensor<float, 4> in0 = copy_of(in), out0 = copy_of(out);
  loom::Tensor<float, 4> w_t("w", k.KH, k.KW, k.C, k.CO);
  loom::Tensor<float, 3> wd_t("wd", k.KH, k.KW, k.C);
  const view4<float> w = w_t.view();
  const view3<float> wd = wd_t.view();
  lt::fill_random(w, g);
  lt::fill_random(wd, g);
  std::vector<double> ref = reference(k, [&](index_t b, index_t oy, index_t ox, index_t o, index_t ky, index_t kx, index_t i) {
    const index_t iy = oy * k.sh + ky * k.dh - k.pt, ix = ox * k.sw + kx * k.dw - k.pl;
    if (k.depthwise) return read(in0, b, iy, ix, o, pad) * double(wd(ky, kx, o));
    return read(in0, b, iy, ix, i, pad) * double(w(ky, kx, i, o));
  });
  if (form == 3) {
    std::size_t p = 0;
    lt::for_each_index(lt::extents_of(out), [&](const auto& idx) { ref[p++] += double(out0(idx[0], idx[1], idx[2], idx[3])); });
  }
  INFO(k.describe() << "; the output is the input shifted by " << shift << " rows; form " << form << ", padding " << pad);
  std::string nest;
  switch (form) {
    case 0: {
      const auto def = dense_padded(out, in, w, float(pad), k);
      nest = loom::print_loop_nest(def);
      loom::run(def);
      break;
    }
    case 1: {
      const auto def = dense_valid(out, in, w, k);
      nest = loom::print_loop_nest(def);
      loom::run(def);
      break;
    }
    case 2: {
      const auto def = depthwise_padded(out, in, wd, float(pad), k);
      nest = loom::print_loop_nest(def);
      loom::run(def);
      break;
    }
    default: {
      const auto pin = loom::constant_exterior(in, float(pad));
      const auto def =
          out(n, y, x, co) += sum(ry, rx, ci, pin(n, y * k.sh + ry * k.dh - k.pt, x * k.sw + rx * k.dw - k.pl, ci) * w(ry, rx, ci, co));
      nest = loom::print_loop_nest(def);
      loom::run(def);
      break;
    }
  }
  CHECK(is_engine(nest));
  // A dense 3 x 3 stride-1 layer may run Winograd, whose error is bounded against the largest
  // output (test_conv.cpp's winograd_bound, 5e-5 for float), not each element: seed 531116186 gave
  // 2.4e-4 at an output of 0.91 beside larger ones.
  const bool may_run_winograd = form != 2 && k.KH == 3 && k.KW == 3 && k.sh == 1 && k.sw == 1 && k.dh == 1 && k.dw == 1;
  double floor = 1.0;
  if (may_run_winograd)
    for (double v : ref) floor = std::max(floor, std::abs(v));
  const lt::result r = lt::compare(out, ref, may_run_winograd ? std::max(tol<float>(k), 5e-5) : tol<float>(k), floor);
  INFO(r.message);
  CHECK(r.ok);
  // The storage's rows before the output's are the input's and must be as they were.
  for (index_t b = 0; b < k.N; ++b)
    for (index_t row = 0; row < shift; ++row)
      for (index_t col = 0; col < k.W; ++col)
        for (index_t ch = 0; ch < k.C; ++ch) REQUIRE(all(b, row, col, ch) == in0(b, row, col, ch));
}

}  // namespace

TEST_CASE("conv index: an output that is the input", "[conv][index][alias]") {
  auto g = lt::make_rng("conv index alias");
  for (index_t C : {3, 17, 64}) {
    alias_case(g, same_3x3(2, 5, 9, C, false), 0, 0, 0.5);  // 3 x 3 "same": each output reads its neighbours
    alias_case(g, same_3x3(1, 4, 13, C, false), 2, 0, 0.0);
    alias_case(g, same_3x3(2, 5, 7, C, false), 0, 3, 0.0);  // +=
    shape k;                                                // 1 x 1, no boundary
    k.N = 2, k.H = k.OH = 3, k.W = k.OW = 11, k.C = k.CO = C;
    alias_case(g, k, 0, 1, 0.0);
    alias_case(g, k, 1, 1, 0.0);
    alias_case(g, same_3x3(2, 5, 10, C, true), 0, 2, C == 3 ? 0.0 : 0.5);  // depthwise
  }
}

// ---- look-alikes: not convolutions, run (correctly) as loop nests ---------------------------

TEST_CASE("conv index: look-alikes that are not convolutions run as loop nests", "[conv][index][lookalike]") {
  auto g = lt::make_rng("conv index look-alikes");
  for (int q = 0; q < 12; ++q) {
    const int form = q % 4;
    const shape k = random_shape(g, false, true, pick<index_t>(g, {1, 3, 13, 17}), pick<index_t>(g, {1, 3, 17}));
    const double pad = q % 2 ? 0.5 : 0.0;
    auto d = make_data<float>(g, k, q >= 8);
    const auto out = d.out.view, w = d.w.view;
    const auto iy = y * k.sh + ry * k.dh - k.pt;
    const auto ix = x * k.sw + rx * k.dw - k.pl;
    const auto tap_y = [&](index_t oy, index_t ky) { return oy * k.sh + ky * k.dh - k.pt; };
    const auto tap_x = [&](index_t ox, index_t kx) { return ox * k.sw + kx * k.dw - k.pl; };
    const std::string info = lt::str(d.info, "; pad ", pad);
    if (form == 0) {
      // The input's dimensions 1 and 2 swapped: in(n, x.., y.., ci) over a W x H input.
      const auto in_t = lt::random_buffer<float, 4>({k.N, k.W, k.H, k.C}, lt::layout::row_major, "in_t", g);
      const auto pin = loom::constant_exterior(in_t.view, float(pad));
      const auto ref = reference(k, [&](index_t b, index_t oy, index_t ox, index_t o, index_t ky, index_t kx, index_t i) {
        return read(in_t.view, b, tap_x(ox, kx), tap_y(oy, ky), i, pad) * double(w(ky, kx, i, o));
      });
      expect<lookalike_schedule>(out(n, y, x, co) = sum(ry, rx, ci, pin(n, ix, iy, ci) * w(ry, rx, ci, co)), d.out, ref, tol<float>(k),
                                 false,
             lt::str(info, "; sum(ry, rx, ci, in(n, x * s + rx * d - p, y * s + ry * d - p, ci) * w(ry, rx, ci, co))"));
    } else if (form == 1) {
      // A maximum instead of a sum.
      const auto pin = loom::constant_exterior(d.in.view, float(pad));
      const auto ref = reference(
          k,
          [&](index_t b, index_t oy, index_t ox, index_t o, index_t ky, index_t kx, index_t i) {
            return read(d.in.view, b, tap_y(oy, ky), tap_x(ox, kx), i, pad) * double(w(ky, kx, i, o));
          },
          true);
      expect<lookalike_schedule>(out(n, y, x, co) = maximum(ry, rx, ci, pin(n, iy, ix, ci) * w(ry, rx, ci, co)), d.out, ref, 1e-6, false,
             lt::str(info, "; maximum(ry, rx, ci, ..)"));
    } else if (form == 2) {
      // repeat_edge: the border reads the edge's pixels, not a constant.
      const auto ein = loom::repeat_edge(d.in.view);
      const auto ref = reference(k, [&](index_t b, index_t oy, index_t ox, index_t o, index_t ky, index_t kx, index_t i) {
        const index_t yy = std::clamp<index_t>(tap_y(oy, ky), 0, k.H - 1), xx = std::clamp<index_t>(tap_x(ox, kx), 0, k.W - 1);
        return double(d.in.view(b, yy, xx, i)) * double(w(ky, kx, i, o));
      });
      expect<lookalike_schedule>(out(n, y, x, co) = sum(ry, rx, ci, ein(n, iy, ix, ci) * w(ry, rx, ci, co)), d.out, ref, tol<float>(k),
                                 false,
             lt::str(info, "; repeat_edge(in)"));
    } else {
      // The input's channel is the output's: in(n, .., .., co) under a sum over ci too.
      const auto in_o = lt::random_buffer<float, 4>({k.N, k.H, k.W, k.CO}, lt::pick_layout(g), "in_o", g);
      const auto pin = loom::constant_exterior(in_o.view, float(pad));
      const auto ref = reference(k, [&](index_t b, index_t oy, index_t ox, index_t o, index_t ky, index_t kx, index_t i) {
        return read(in_o.view, b, tap_y(oy, ky), tap_x(ox, kx), o, pad) * double(w(ky, kx, i, o));
      });
      expect<lookalike_schedule>(out(n, y, x, co) = sum(ry, rx, ci, pin(n, iy, ix, co) * w(ry, rx, ci, co)), d.out, ref, tol<float>(k),
                                 false,
             lt::str(info, "; sum(ry, rx, ci, in(n, .., .., co) * w(ry, rx, ci, co))"));
    }
  }
}

// An epilogue reading a reduction variable outside its sum (`sum(..) + t(ry)`) no longer compiles:
// tests/compile_fail/reduction_variable_outside_reduction.cpp.

// ---- errors, schedules ----------------------------------------------------------------------

TEST_CASE("conv index: a plain input read out of range throws bounds_error, nothing written", "[conv][index][errors]") {
  loom::Tensor<float, 4> in_t("in", 1, 6, 5, 4), w_t("w", 3, 3, 4, 8), out_t("out", 1, 4, 3, 8), o5_t("out5", 1, 5, 3, 8);
  loom::Tensor<float, 3> wd_t("wd", 3, 3, 4);
  loom::Tensor<float, 4> od_t("outd", 1, 4, 3, 4);
  const view4<float> in = in_t.view(), w = w_t.view(), out = out_t.view(), o5 = o5_t.view(), od = od_t.view();
  const view3<float> wd = wd_t.view();
  lt::fill(in, 1.f);
  lt::fill(w, 1.f);
  lt::fill(wd, 1.f);
  const auto untouched = [](const view4<float>& v) {
    bool same = true;
    lt::for_each_index(lt::extents_of(v), [&](const auto& idx) { same = same && lt::at(v, idx) == 42.f; });
    return same;
  };
  const auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const loom::bounds_error& e) {
      return e.what();
    } catch (const std::exception& e) {
      return lt::str("another exception: ", e.what());
    }
    return "no bounds_error";
  };
  shape k;  // 3 x 3 over 6 x 5: a valid output is 4 x 3
  k.KH = k.KW = 3;
  {
    k.pt = 1, k.pl = 0;  // reads row -1
    lt::fill(out, 42.f);
    const auto def = dense_valid(out, in, w, k);
    const std::string m = message([&] { loom::run(def); });
    INFO(m);
    CHECK_THAT(m, Catch::Contains("loom::bounds_error") && Catch::Contains("'in'"));
    CHECK(untouched(out));
    const std::string ms = message([&] { loom::run<loom::conv_schedule<>>(def); });
    CHECK_THAT(ms, Catch::Contains("loom::bounds_error") && Catch::Contains("'in'"));
    CHECK(untouched(out));
  }
  {
    k.pt = 0, k.pl = -1;  // reads column 5 of 5
    lt::fill(out, 42.f);
    const std::string m = message([&] { loom::run(dense_valid(out, in, w, k)); });
    INFO(m);
    CHECK_THAT(m, Catch::Contains("loom::bounds_error") && Catch::Contains("'in'"));
    CHECK(untouched(out));
  }
  {
    k.pt = 0, k.pl = 0;  // an output one row too tall reads row 6
    lt::fill(o5, 42.f);
    const std::string m = message([&] { loom::run(dense_valid(o5, in, w, k)); });
    INFO(m);
    CHECK_THAT(m, Catch::Contains("loom::bounds_error") && Catch::Contains("'in'"));
    CHECK(untouched(o5));
    k.sh = 2;  // stride 2 over a 4-row output reads row 8
    lt::fill(out, 42.f);
    const std::string m2 = message([&] { loom::run(dense_valid(out, in, w, k)); });
    CHECK_THAT(m2, Catch::Contains("loom::bounds_error") && Catch::Contains("'in'"));
    CHECK(untouched(out));
    k.sh = 1;
  }
  {
    k.pt = 1;  // depthwise
    lt::fill(od, 42.f);
    const std::string m = message([&] { loom::run(depthwise_valid(od, in, wd, k)); });
    INFO(m);
    CHECK_THAT(m, Catch::Contains("loom::bounds_error") && Catch::Contains("'in'"));
    CHECK(untouched(od));
    k.pt = 0;  // and in range it runs
    loom::run(depthwise_valid(od, in, wd, k));
    CHECK(od(0, 0, 0, 0) == 9.f);
  }
}

TEST_CASE("conv index: conv_schedule demands the engine; print_loop_nest names it", "[conv][index][schedule]") {
  auto g = lt::make_rng("conv index conv_schedule");
  for (int q = 0; q < 3; ++q) {
    const shape k = random_shape(g, false, true, pick(g, dense_channels), pick(g, dense_channels));
    auto d = make_data<float>(g, k, false);
    const auto def = dense_padded(d.out.view, d.in.view, d.w.view, 0.5f, k);
    const std::string nest = loom::print_loop_nest<loom::conv_schedule<>>(def);
    INFO(d.info << "\nprint_loop_nest<conv_schedule<>>:\n" << nest);
    CHECK(nest.find("convolution engine") != std::string::npos);
    CHECK(is_engine(loom::print_loop_nest(def)));
    lt::fill(d.out.view, std::numeric_limits<float>::quiet_NaN());
    loom::run<loom::conv_schedule<>>(def);
    const std::vector<float> first = elements(d.out.view);
    const lt::result r = lt::compare(d.out.view, conv_reference(d, 0.5), tol<float>(k));
    INFO(r.message);
    CHECK(r.ok);
    // The default schedule runs the same engine: the same bits.
    lt::fill(d.out.view, std::numeric_limits<float>::quiet_NaN());
    loom::run(def);
    const std::vector<float> again = elements(d.out.view);
    bool same_bits = true;
    for (std::size_t p = 0; p < first.size(); ++p) same_bits = same_bits && lt::same_bits(first[p], again[p]);
    CHECK(same_bits);
  }
  {  // double, depthwise
    const shape k = random_shape(g, true, true, 17, 17);
    auto d = make_data<double>(g, k, false);
    const auto def = depthwise_padded(d.out.view, d.in.view, d.wd.view, 0.0, k);
    const std::string nest = loom::print_loop_nest<loom::conv_schedule<>>(def);
    INFO(d.info << "\nprint_loop_nest<conv_schedule<>>:\n" << nest);
    CHECK(nest.find("convolution engine") != std::string::npos);
    lt::fill(d.out.view, std::numeric_limits<double>::quiet_NaN());
    loom::run<loom::conv_schedule<>>(def);
    const lt::result r = lt::compare(d.out.view, conv_reference(d, 0.0), tol<double>(k));
    INFO(r.message);
    CHECK(r.ok);
  }
  {  // a loop-nest schedule runs the same definition as a loop nest
    const shape k = random_shape(g, false, true, 3, 13);
    auto d = make_data<float>(g, k, false);
    const auto def = dense_padded(d.out.view, d.in.view, d.w.view, 0.5f, k);
    const std::string nest = loom::print_loop_nest<loom::schedule<>>(def);
    INFO(d.info << "\nprint_loop_nest<schedule<>>:\n" << nest);
    CHECK(nest.find("convolution engine") == std::string::npos);
    lt::fill(d.out.view, std::numeric_limits<float>::quiet_NaN());
    loom::run<loom::schedule<>>(def);
    const lt::result r = lt::compare(d.out.view, conv_reference(d, 0.5), tol<float>(k));
    INFO(r.message);
    CHECK(r.ok);
  }
}
