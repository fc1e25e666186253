// tests/test_conv_shrunk.cpp — the convolution engine under blocking policies shrunk so that small
// shapes run every blocking loop more than once and with a tail: the default AVX-512 policy (16
// float lanes, 6 pixels x 4 vectors, 64 output channels per tile) never reaches a second block of
// channels, a second tile of a row or the narrower tile widths on the shapes a test can afford.
//
// Policies (each only where this build has its vector width): conv_policy<float, 4, 2, 1> (one
// vector: 4 channels per block), <float, 4, 3, 2> (tile widths 1 and 2, 3 pixels), <float, 8, 2, 2>
// (8 lanes), <float, 4, 2, 4> (tile widths 4 and 2: the default's shape, narrowed),
// <double, 2, 2, 1>, and <double, 8, 2, 2> (AVX-512 builds: 32 registers, so depthwise tiles of two
// vectors). Paths, each against a plain loop of this file accumulated in double (not the library's
// conv2d_reference):
//   - loom::conv2d<Policy>(out, in, w, p) and conv2d(out, in, pack_conv2d_weights<Policy>(w, p), p)
//     (the same bits), with and without an epilogue (bias + ReLU + a per-pixel term, which counts
//     calls that break the epilogue contract), 1 and 2 threads (the same bits);
//   - dense, grouped (groups 2 and 4, and two output channels per channel), depthwise
//     (groups == C), and 3 x 3 stride-1 layers under conv_algorithm::direct, winograd and
//     automatic;
//   - index notation, loom::run<loom::conv_schedule<Policy>>(out(n, y, x, co) = ...): dense over
//     constant_exterior (zero and 0.5), bare and with max(sum(...) + bias(co), 0) + skip(n, y, x, co)
//     fused (a residual: each pixel's coordinates); depthwise, bare and (the policies of two vectors)
//     plus a residual; 1 and 2 threads (the same bits).
// Shapes are random (seeded by the run's seed, LOOM_TEST_SEED) and drawn per policy: output channel
// counts past two blocks of the policy's channels and not a multiple of them, rows wider than a
// tile and not a multiple of it, H and W of 1 and primes, strides 1-3, dilations 1-2, padding 0-3
// (wider than half the kernel too), N = 1 and 2, input channels 1, 3, 7 and 13; depthwise mostly
// 3-wide windows at stride 1 and 2 (its own kernels) over 4 vectors of channels and 1 to 2 more.
// Each path counts the cases whose shapes reach those loops and requires some of each.
//
// Tolerances: direct, |got - expected| <= 1e-5 (float; double 1e-12) x (sum |in x w| + |the
// epilogue's terms|) per element; Winograd, tests/test_conv.cpp's bound: 5e-5 (double 1e-12) x
// max(1, the case's largest |expected|).
//
// Few instantiations on purpose (compiled at -O1 in CI): six policies, one helper per path, every
// operand a loom::TensorView.
#include "conv_case.hpp"
#include "support.hpp"

#include <atomic>
#include <map>
#include <optional>

#include <loom/kernels/conv.hpp>

using loom::index_t;
using lt::bias_relu;
using lt::conv_case;
using lt::idx_t;

namespace {

template <class T>
using view1 = loom::TensorView<T, 1>;
template <class T>
using view3 = loom::TensorView<T, 3>;
template <class T>
using view4 = loom::TensorView<T, 4>;

/// A policy's name, for messages.
template <class P>
std::string policy_name() {
  return lt::str("conv_policy<", lt::type_name<typename P::value_type>(), ", ", P::lanes, ", ", P::pixels, ", ", P::vectors, ">");
}

/// f.template operator()<conv_policy<T, L, M, V>>() where this build has vectors of L lanes of T.
template <class T, index_t L, index_t M, index_t V, class F>
void with_policy(F& f) {
  if constexpr (loom::simd::width_available<T, std::size_t(L)>) f.template operator()<loom::conv_policy<T, L, M, V>>();
  else WARN("no " << L << "-lane " << lt::type_name<T>() << " vectors on this target: conv_policy<" << lt::type_name<T>() << ", " << L
                  << ", " << M << ", " << V << "> skipped");
}

/// Every shrunk policy of this file.
template <class F>
void for_each_policy(F&& f) {
  with_policy<float, 4, 2, 1>(f);
  with_policy<float, 4, 3, 2>(f);
  with_policy<float, 8, 2, 2>(f);
  with_policy<float, 4, 2, 4>(f);
  with_policy<double, 2, 2, 1>(f);
  with_policy<double, 8, 2, 2>(f);  // 32 registers (AVX-512): depthwise tiles of two vectors
}

/// loom::set_num_threads(n) for a scope (then no limit again).
struct loom_threads {
  explicit loom_threads(int n) { loom::set_num_threads(n); }
  ~loom_threads() { loom::set_num_threads(0); }
  loom_threads(const loom_threads&) = delete;
  loom_threads& operator=(const loom_threads&) = delete;
};

/// Whether Winograd may run: forced, or automatic with both channel counts >= 16 (docs/conv.md;
/// whether the shape then pays for it is left to the library: either result passes its bound).
bool may_run_winograd(const conv_case& cs) {
  if (cs.algorithm == loom::conv_algorithm::winograd || cs.algorithm == loom::conv_algorithm::winograd_2x2) return true;
  return cs.algorithm == loom::conv_algorithm::automatic && cs.winograd_shape() && cs.C >= 16 && cs.CO >= 16;
}

// ---------------------------------------------------------------------------------------------
// The reference, the tolerances and the comparison.
// ---------------------------------------------------------------------------------------------

/// The expected output (row-major N, OH, OW, CO) in double, and per element the sum of the
/// magnitudes of its terms (sum |in x w|, plus the epilogue's): the scale of its rounding error.
struct expected {
  std::vector<double> value, magnitude;
};

/// Straight from the definition: out(n, oy, ox, co) = sum over ky, kx, c < Cg of
/// in(n, oy sh + ky dh - pt, ox sw + kx dw - pl, g Cg + c) x weight(ky, kx, c, co), g = co / COg,
/// the input `pad` outside the image.
template <class IV, class Weight>
expected reference(const conv_case& cs, const IV& in, const Weight& weight, double pad) {
  const index_t OH = cs.OH(), OW = cs.OW(), Cg = cs.Cg(), COg = cs.COg();
  expected e;
  e.value.reserve(std::size_t(cs.N * OH * OW * cs.CO));
  e.magnitude.reserve(e.value.capacity());
  for (index_t n = 0; n < cs.N; ++n)
    for (index_t oy = 0; oy < OH; ++oy)
      for (index_t ox = 0; ox < OW; ++ox)
        for (index_t co = 0; co < cs.CO; ++co) {
          const index_t g = co / COg;
          double acc = 0, mag = 0;
          for (index_t ky = 0; ky < cs.KH; ++ky)
            for (index_t kx = 0; kx < cs.KW; ++kx) {
              const index_t iy = oy * cs.sh + ky * cs.dh - cs.pt, ix = ox * cs.sw + kx * cs.dw - cs.pl;
              const bool inside = iy >= 0 && iy < cs.H && ix >= 0 && ix < cs.W;
              if (!inside && pad == 0) continue;
              for (index_t c = 0; c < Cg; ++c) {
                const double term = (inside ? double(in(n, iy, ix, g * Cg + c)) : pad) * double(weight(ky, kx, c, co));
                acc += term;
                mag += std::abs(term);
              }
            }
          e.value.push_back(acc);
          e.magnitude.push_back(mag);
        }
  return e;
}

/// The direct kernels' error bound relative to the magnitude of the terms.
template <class T>
constexpr double direct_tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;
/// Winograd's, relative to max(1, the case's largest |expected|) (tests/test_conv.cpp).
template <class T>
constexpr double winograd_bound = std::is_same_v<T, float> ? 5e-5 : 1e-12;

/// Per element, what |got - expected| may be: direct, or (where Winograd may run) Winograd's bound.
template <class T>
std::vector<double> bounds(const expected& e, bool winograd) {
  std::vector<double> b(e.value.size());
  if (winograd) {
    double scale = 1;
    for (double v : e.value) scale = std::max(scale, std::abs(v));
    std::fill(b.begin(), b.end(), winograd_bound<T> * scale);
  } else {
    for (std::size_t q = 0; q < b.size(); ++q) b[q] = direct_tolerance<T> * e.magnitude[q];
  }
  return b;
}

/// |got - expected| <= bound, element by element (NaN fails: every element must be written).
template <class T>
lt::result within(const view4<T>& got, const expected& e, const std::vector<double>& bound) {
  lt::result r;
  const idx_t<4> ext = lt::extents_of(got);
  if (index_t(e.value.size()) != lt::count(ext)) return {false, 1, "the reference has the wrong size"};
  lt::for_each_index(ext, [&](const idx_t<4>& idx) {
    const std::size_t q = std::size_t(lt::row_major_index(ext, idx));
    const double v = double(lt::at(got, idx)), diff = std::abs(v - e.value[q]);
    if (!(diff <= bound[q])) {
      if (r.mismatches++ == 0) {
        std::ostringstream os;
        os.precision(std::is_same_v<T, float> ? 9 : 17);
        os << "first mismatch of '" << got.name() << "' at " << lt::to_string(idx) << ": got " << v << ", expected " << e.value[q]
           << " (|diff| = " << diff << ", bound " << bound[q] << ", sum of |terms| " << e.magnitude[q] << ")";
        r.message = os.str();
      }
    }
  });
  if (r.mismatches) {
    r.ok = false;
    r.message += lt::str("; ", r.mismatches, " of ", got.size(), " elements differ");
  }
  return r;
}

/// A row-major copy of a view.
template <class T>
loom::Tensor<T, 4> copy_of(const view4<T>& v) {
  loom::Tensor<T, 4> t(lt::extents_of(v));
  lt::for_each_index(lt::extents_of(v), [&](const idx_t<4>& idx) { lt::at(t.view(), idx) = lt::at(v, idx); });
  return t;
}

// ---------------------------------------------------------------------------------------------
// Random shapes, per policy.
// ---------------------------------------------------------------------------------------------

template <class V>
V pick(lt::rng_t& g, std::initializer_list<V> from) {
  return *(from.begin() + lt::uniform(g, 0, index_t(from.size()) - 1));
}

/// k x unit + r, k in [lo, hi], 0 < r < unit: past k blocks of `unit`, with a tail.
index_t past_blocks(lt::rng_t& g, index_t unit, index_t lo, index_t hi) {
  return lt::uniform(g, lo, hi) * unit + lt::uniform(g, 1, std::max<index_t>(unit - 1, 1));
}

/// Output channels (of a group) for a policy of `channels` per block: mostly past two blocks with
/// a tail, else small.
index_t out_channels(lt::rng_t& g, index_t channels) {
  return lt::coin(g, 0.6) ? past_blocks(g, channels, 2, 3) : pick<index_t>(g, {1, 3, 7, 13});
}

constexpr double max_macs = 4e5;  // the double reference of a case well under a millisecond

/// Random batch, extents, kernel, stride, dilation and padding; false when the output is empty or
/// the case too large (the caller draws again).
bool random_spatial(lt::rng_t& g, conv_case& cs) {
  cs.N = lt::uniform(g, 1, 2);
  cs.H = pick<index_t>(g, {1, 2, 3, 5, 7, 11, 13});
  cs.W = pick<index_t>(g, {1, 2, 3, 5, 7, 11, 13, 17, 19, 23});
  cs.KH = pick<index_t>(g, {1, 2, 3, 5});
  cs.KW = lt::coin(g, 0.7) ? cs.KH : pick<index_t>(g, {1, 2, 3, 5});
  cs.sh = lt::uniform(g, 1, 3);
  cs.sw = lt::coin(g, 0.7) ? cs.sh : lt::uniform(g, 1, 3);
  cs.dh = lt::uniform(g, 1, 2);
  cs.dw = lt::coin(g, 0.7) ? cs.dh : lt::uniform(g, 1, 2);
  if (lt::coin(g)) {  // symmetric ("same"-style, or more than half the kernel)
    cs.pt = cs.pb = lt::uniform(g, 0, 3);
    cs.pl = cs.pr = lt::uniform(g, 0, 3);
  } else {
    cs.pt = lt::uniform(g, 0, 3), cs.pl = lt::uniform(g, 0, 3), cs.pb = lt::uniform(g, 0, 3), cs.pr = lt::uniform(g, 0, 3);
  }
  return cs.OH() >= 1 && cs.OW() >= 1 && cs.macs() <= max_macs;
}

/// The kinds of case of the direct entry points.
enum class kind { dense, grouped, depthwise, winograd };

const char* kind_name(kind k) {
  switch (k) {
    case kind::dense: return "dense";
    case kind::grouped: return "grouped";
    case kind::depthwise: return "depthwise";
    case kind::winograd: return "3 x 3 stride 1";
  }
  return "?";
}

/// A random case of kind k for policy P.
template <class P>
conv_case random_case(lt::rng_t& g, kind k) {
  const index_t channels = P::channels, lanes = P::lanes;
  for (;;) {
    conv_case cs;
    switch (k) {
      case kind::dense:
        cs.C = pick<index_t>(g, {1, 3, 7, 13});
        cs.CO = out_channels(g, channels);
        break;
      case kind::grouped: {
        cs.groups = pick<index_t>(g, {2, 4});
        cs.C = cs.groups * pick<index_t>(g, {1, 3, 7});
        const index_t cog = lt::coin(g, 0.2) ? 2 : out_channels(g, channels);
        if (cog == 2 && lt::coin(g)) cs.C = cs.groups;  // two output channels per channel
        cs.CO = cs.groups * cog;
        break;
      }
      case kind::depthwise:
        // Past four vectors by 1 to 2 vectors' worth: every kind of last block, of one or two vectors.
        cs.C = cs.CO = cs.groups = lt::coin(g, 0.75) ? 4 * lanes + lt::uniform(g, 1, 2 * lanes) : pick<index_t>(g, {1, 3, 7, 13});
        break;
      case kind::winograd:
        cs.C = pick<index_t>(g, {1, 3, 7, 13, 17});
        cs.CO = lt::coin(g, 0.2) ? pick<index_t>(g, {16, 19}) : out_channels(g, channels);
        break;
    }
    if (k == kind::winograd) {
      cs.N = lt::uniform(g, 1, 2);
      cs.H = pick<index_t>(g, {1, 2, 3, 5, 7, 9, 11, 13});
      cs.W = pick<index_t>(g, {1, 2, 3, 5, 7, 9, 11, 13, 17});
      cs.KH = cs.KW = 3;
      cs.pt = lt::uniform(g, 0, 3), cs.pl = lt::uniform(g, 0, 3), cs.pb = lt::uniform(g, 0, 3), cs.pr = lt::uniform(g, 0, 3);
      using enum loom::conv_algorithm;
      cs.algorithm = pick<loom::conv_algorithm>(g, {winograd, winograd, direct, automatic});
      if (cs.OH() >= 1 && cs.OW() >= 1 && cs.macs() <= max_macs) return cs;
    } else {
      cs.algorithm = lt::coin(g) ? loom::conv_algorithm::direct : loom::conv_algorithm::automatic;
      if (!random_spatial(g, cs)) continue;
      if (k == kind::depthwise && lt::coin(g, 0.6)) {  // mostly 3-wide windows at stride 1 or 2 (MobileNet's)
        cs.KW = 3, cs.dw = 1, cs.sw = lt::uniform(g, 1, 2);
        cs.KH = pick<index_t>(g, {1, 3, 3, 5});
        if (cs.OH() < 1 || cs.OW() < 1 || cs.macs() > max_macs) continue;
      }
      return cs;
    }
  }
}

/// Which blocking loops the cases of one path reached: a count per property of the shapes, each
/// of which must be reached at least once.
struct coverage {
  std::map<std::string, int> seen;

  void hit(const std::string& what, bool yes) { seen[what] += yes ? 1 : 0; }
  template <class P>
  void count(const conv_case& cs, kind k) {
    const index_t ch = k == kind::depthwise ? cs.C : cs.COg();
    const index_t unit = k == kind::depthwise ? P::lanes : P::channels;
    const index_t tile = k == kind::depthwise ? 8 : k == kind::winograd ? 4 : P::pixels;
    hit("channels past two blocks, with a tail", ch > 2 * unit && ch % unit != 0);
    hit("rows wider than a tile, not a multiple of it", cs.OW() > tile && cs.OW() % tile != 0);
    hit("several rows", cs.OH() > 1);
    hit("a batch of 2", cs.N > 1);
    if (k == kind::depthwise) {
      const bool rows = cs.KW == 3 && cs.dw == 1;
      hit("3-wide windows at stride 1", rows && cs.sw == 1);
      hit("3-wide windows at stride 2", rows && cs.sw == 2);
      hit("other windows", !rows || cs.sw > 2);
    }
    if (k == kind::winograd) {
      hit("several runs of 3 x pixels tiles", cs.N * ((cs.OH() + 3) / 4) * ((cs.OW() + 3) / 4) > 3 * P::pixels);
      hit("Winograd forced", cs.algorithm == loom::conv_algorithm::winograd);
    }
  }
  void require(const std::string& what) const {
    for (const auto& [property, cases] : seen) {
      INFO(what << ": cases with " << property << ": " << cases);
      CHECK(cases > 0);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// loom::conv2d<Policy> and pack_conv2d_weights<Policy>.
// ---------------------------------------------------------------------------------------------

/// The reference of the test's epilogue (lt::bias_relu, pixel step 0.25) on expected values (and
/// the terms' magnitudes).
template <class T>
void apply_epilogue(const bias_relu<T>& epi, expected& e) {
  const std::size_t C = std::size_t(epi.channels);
  for (std::size_t q = 0; q < e.value.size(); ++q) {
    const double b = double(epi.bias[q % C]), t = epi.pixel_step * double(q / C % 5);
    e.value[q] = std::max(e.value[q] + b, 0.0) + t;
    e.magnitude[q] += std::abs(b) + t;
  }
}

/// One case through conv2d<P> (unpacked) and conv2d on weights packed by pack_conv2d_weights<P>,
/// each on 1 thread and (with two_threads) on 2: every result within its bound of the reference,
/// nothing outside the output written, the epilogue's contract kept; the results bit-identical
/// (packed against unpacked only off the 1 x 1 stride-1 path, which the unpacked call gives to the
/// GEMM engine).
template <class P>
void check_conv2d(lt::rng_t& g, const conv_case& cs, bool any_layout, bool with_epilogue, bool two_threads) {
  using T = typename P::value_type;
  const auto lay = [&] { return any_layout ? lt::pick_layout(g) : lt::layout::row_major; };
  auto in = lt::random_buffer<T, 4>(cs.in_ext(), lay(), "in", g);
  auto w = lt::random_buffer<T, 4>(cs.w_ext(), lay(), "w", g);
  auto out = lt::make_buffer<T, 4>(cs.out_ext(), lay(), "out");
  std::vector<T> bias;
  for (index_t co = 0; co < cs.CO; ++co) bias.push_back(lt::random_value<T>(g));
  std::atomic<int> violations{0};
  const bias_relu<T> epi{bias.data(), 0.25, cs.N * cs.OH() * cs.OW(), cs.CO, &violations};
  const view4<T> wv = w.view;
  expected e = reference(cs, in.view, [&](index_t ky, index_t kx, index_t c, index_t co) { return wv(ky, kx, c, co); }, 0.0);
  if (with_epilogue) apply_epilogue(epi, e);
  const std::vector<double> bound = bounds<T>(e, may_run_winograd(cs));
  INFO("LOOM_TEST_SEED=" << loom_test_seed() << "; " << policy_name<P>() << "; " << cs.describe() << "; " << in.describe() << "; "
                         << w.describe() << "; " << out.describe() << (with_epilogue ? "; epilogue bias + ReLU + 0.25 x (pixel % 5)" : ""));
  const loom::conv2d_params p = cs.params();
  const bool gemm = cs.KH == 1 && cs.KW == 1 && cs.sh == 1 && cs.sw == 1 && cs.pt + cs.pl + cs.pb + cs.pr == 0 && cs.groups == 1;
  std::optional<loom::Tensor<T, 4>> unpacked_1, packed_1;  // the 1-thread results
  for (int packed = 0; packed < 2; ++packed)
    for (int threads = 1; threads <= (two_threads ? 2 : 1); ++threads) {
      INFO((packed ? "pack_conv2d_weights<Policy> then conv2d" : "conv2d<Policy> on raw weights") << ", " << threads << " thread(s)");
      lt::fill(out.view, std::numeric_limits<T>::quiet_NaN());
      {
        const loom_threads scope(threads);
        view4<T> o = out.view;
        if (packed) {
          const auto pw = loom::pack_conv2d_weights<P>(w.view, p);
          CHECK(pw.groups() == cs.groups);
          CHECK((pw.vectors() >= 1 && pw.vectors() <= P::vectors));
          if (with_epilogue) loom::conv2d(o, in.view, pw, p, epi);
          else loom::conv2d(o, in.view, pw, p);
        } else {
          if (with_epilogue) loom::conv2d<P>(o, in.view, w.view, p, epi);
          else loom::conv2d<P>(o, in.view, w.view, p);
        }
      }
      const lt::result r = within(out.view, e, bound);
      INFO(r.message);
      REQUIRE(r.ok);
      const lt::result u = out.untouched();
      INFO(u.message);
      REQUIRE(u.ok);
      REQUIRE(violations.load() == 0);
      std::optional<loom::Tensor<T, 4>>& mine = packed ? packed_1 : unpacked_1;
      if (threads == 1) {
        mine.emplace(copy_of(out.view));
        if (packed && !gemm) {
          const lt::result b = lt::compare_bits(out.view, unpacked_1->view());
          INFO("packed against unpacked: " << b.message);
          REQUIRE(b.ok);
        }
      } else {
        const lt::result b = lt::compare_bits(out.view, mine->view());
        INFO("2 threads against 1: " << b.message);
        REQUIRE(b.ok);
      }
    }
}

/// `cases` random cases of kind k for policy P (every third with an epilogue, every fifth with
/// operands in random layouts), and the loops they reached.
template <class P>
void conv2d_cases(const char* key, kind k, int cases) {
  auto g = lt::make_rng(lt::str(key, " ", policy_name<P>()));
  coverage cov;
  for (int q = 0; q < cases; ++q) {
    const conv_case cs = random_case<P>(g, k);
    cov.count<P>(cs, k);
    check_conv2d<P>(g, cs, q % 5 == 4, q % 3 == 1, q % 2 == 0);
  }
  cov.require(lt::str(policy_name<P>(), ", ", kind_name(k), " via conv2d"));
}

// ---------------------------------------------------------------------------------------------
// Index notation: loom::run<loom::conv_schedule<Policy>>.
// ---------------------------------------------------------------------------------------------

using loom::vars::c;
using loom::vars::n;
using loom::vars::rx;
using loom::vars::ry;
using loom::vars::x;
using loom::vars::y;
constexpr loom::Var<"co"> co;
constexpr loom::Var<"ci"> ci;

/// Runs `run` (which writes out) on 1 thread and (with two_threads) on 2: within the bound of e
/// each time, nothing outside the output written, the same bits.
template <class T, class Run>
void check_index_run(lt::buffer<T, 4>& out, const expected& e, const std::vector<double>& bound, bool two_threads, const Run& run) {
  std::optional<loom::Tensor<T, 4>> first;
  for (int threads = 1; threads <= (two_threads ? 2 : 1); ++threads) {
    INFO(threads << " thread(s)");
    lt::fill(out.view, std::numeric_limits<T>::quiet_NaN());
    {
      const loom_threads scope(threads);
      run();
    }
    const lt::result r = within(out.view, e, bound);
    INFO(r.message);
    REQUIRE(r.ok);
    const lt::result u = out.untouched();
    INFO(u.message);
    REQUIRE(u.ok);
    if (!first) {
      first.emplace(copy_of(out.view));
    } else {
      const lt::result b = lt::compare_bits(out.view, first->view());
      INFO("2 threads against 1: " << b.message);
      REQUIRE(b.ok);
    }
  }
}

/// The expected output plus skip (row-major, the output's extents), for a residual epilogue.
template <class T>
void add_residual(expected& e, const view4<T>& skip) {
  std::size_t q = 0;
  lt::for_each_index(lt::extents_of(skip), [&](const idx_t<4>& idx) {
    const double r = double(lt::at(skip, idx));
    e.value[q] += r;
    e.magnitude[q++] += std::abs(r);
  });
}

/// out(n, y, x, co) = [max(] sum(ry, rx, ci, constant_exterior(in, pad)(n, y sh + ry dh - pt,
/// x sw + rx dw - pl, ci) * w(ry, rx, ci, co)) [+ bias(co), 0) + skip(n, y, x, co)] under
/// conv_schedule<P>. The residual reads each pixel's coordinates (tiles that span rows); one
/// epilogue with both (each epilogue is another instantiation of the kernels).
template <class P>
void check_index_dense(lt::rng_t& g, const conv_case& cs, double pad, bool with_epilogue, bool two_threads) {
  using T = typename P::value_type;
  auto in = lt::random_buffer<T, 4>(cs.in_ext(), lt::layout::row_major, "in", g);
  auto w = lt::random_buffer<T, 4>(cs.w_ext(), lt::layout::row_major, "w", g);
  auto bias = lt::random_buffer<T, 1>({cs.CO}, lt::layout::row_major, "bias", g);
  auto skip = lt::random_buffer<T, 4>(cs.out_ext(), lt::layout::row_major, "skip", g);
  auto out = lt::make_buffer<T, 4>(cs.out_ext(), lt::layout::row_major, "out");
  const view4<T> iv = in.view, wv = w.view, sk = skip.view;
  const view1<T> bv = bias.view;
  view4<T> ov = out.view;
  expected e = reference(cs, iv, [&](index_t ky, index_t kx, index_t ch, index_t o) { return wv(ky, kx, ch, o); }, pad);
  if (with_epilogue) {
    for (std::size_t q = 0; q < e.value.size(); ++q) {
      const double b = double(bv(index_t(q) % cs.CO));
      e.value[q] = std::max(e.value[q] + b, 0.0);
      e.magnitude[q] += std::abs(b);
    }
    add_residual(e, sk);
  }
  const std::vector<double> bound = bounds<T>(e, may_run_winograd(cs));
  INFO("LOOM_TEST_SEED=" << loom_test_seed() << "; index notation, loom::run<loom::conv_schedule<" << policy_name<P>() << ">>; dense; "
                         << cs.describe() << "; constant_exterior(in, " << pad << ")"
                         << (with_epilogue ? "; max(sum(...) + bias(co), 0) + skip(n, y, x, co)" : ""));
  const auto pin = loom::constant_exterior(iv, T(pad));
  const index_t sh = cs.sh, sw = cs.sw, dh = cs.dh, dw = cs.dw, pt = cs.pt, pl = cs.pl;
  check_index_run(out, e, bound, two_threads, [&] {
    const auto conv = sum(ry, rx, ci, pin(n, y * sh + ry * dh - pt, x * sw + rx * dw - pl, ci) * wv(ry, rx, ci, co));
    if (with_epilogue) loom::run<loom::conv_schedule<P>>(ov(n, y, x, co) = max(conv + bv(co), T(0)) + sk(n, y, x, co));
    else loom::run<loom::conv_schedule<P>>(ov(n, y, x, co) = conv);
  });
}

/// Whether the depthwise definition with a residual is compiled for P: for the policies of two
/// vectors only (one of 16 and one of 32 registers on AVX-512), as it is a fifth of the file's
/// compile time over all six (each epilogue is another instantiation of every depthwise kernel).
template <class P>
constexpr bool depthwise_residual = P::vectors == 2;

/// out(n, y, x, c) = sum(ry, rx, constant_exterior(in, pad)(n, .., .., c) * wd(ry, rx, c))
/// [+ skip(n, y, x, c), where depthwise_residual<P>] under conv_schedule<P>.
template <class P>
void check_index_depthwise(lt::rng_t& g, const conv_case& cs, double pad, bool residual, bool two_threads) {
  using T = typename P::value_type;
  auto in = lt::random_buffer<T, 4>(cs.in_ext(), lt::layout::row_major, "in", g);
  auto wd = lt::random_buffer<T, 3>({cs.KH, cs.KW, cs.C}, lt::layout::row_major, "wd", g);
  auto skip = lt::random_buffer<T, 4>(cs.out_ext(), lt::layout::row_major, "skip", g);
  auto out = lt::make_buffer<T, 4>(cs.out_ext(), lt::layout::row_major, "out");
  const view4<T> iv = in.view, sk = skip.view;
  const view3<T> wv = wd.view;
  view4<T> ov = out.view;
  expected e = reference(cs, iv, [&](index_t ky, index_t kx, index_t, index_t o) { return wv(ky, kx, o); }, pad);
  residual = residual && depthwise_residual<P>;
  if (residual) add_residual(e, sk);
  const std::vector<double> bound = bounds<T>(e, false);
  INFO("LOOM_TEST_SEED=" << loom_test_seed() << "; index notation, loom::run<loom::conv_schedule<" << policy_name<P>()
                         << ">>; depthwise; " << cs.describe() << "; constant_exterior(in, " << pad << ")"
                         << (residual ? "; + skip(n, y, x, c)" : ""));
  const auto pin = loom::constant_exterior(iv, T(pad));
  const index_t sh = cs.sh, sw = cs.sw, dh = cs.dh, dw = cs.dw, pt = cs.pt, pl = cs.pl;
  check_index_run(out, e, bound, two_threads, [&] {
    const auto conv = sum(ry, rx, pin(n, y * sh + ry * dh - pt, x * sw + rx * dw - pl, c) * wv(ry, rx, c));
    if constexpr (depthwise_residual<P>) {
      if (residual) return loom::run<loom::conv_schedule<P>>(ov(n, y, x, c) = conv + sk(n, y, x, c));
    }
    loom::run<loom::conv_schedule<P>>(ov(n, y, x, c) = conv);
  });
}

template <class P>
void index_cases(const char* key, int cases) {
  auto g = lt::make_rng(lt::str(key, " ", policy_name<P>()));
  coverage dense, depthwise;
  for (int q = 0; q < cases; ++q) {
    const double pad = q % 2 == 0 ? 0.0 : 0.5;
    // Dense (a third of them 3 x 3 stride-1 shapes, where automatic may take Winograd), then depthwise.
    conv_case cs = random_case<P>(g, q % 3 == 2 ? kind::winograd : kind::dense);
    cs.algorithm = loom::conv_algorithm::automatic;  // index notation chooses as automatic does
    dense.count<P>(cs, kind::dense);
    check_index_dense<P>(g, cs, pad, q % 3 != 0, q % 2 == 0);
    const conv_case cd = random_case<P>(g, kind::depthwise);
    depthwise.count<P>(cd, kind::depthwise);
    check_index_depthwise<P>(g, cd, pad, q % 4 < 2, q % 2 == 1);
  }
  dense.require(lt::str(policy_name<P>(), ", dense in index notation"));
  depthwise.require(lt::str(policy_name<P>(), ", depthwise in index notation"));
}

}  // namespace

TEST_CASE("conv shrunk: dense conv2d under shrunk policies, raw and packed weights, 1 and 2 threads", "[conv][shrunk]") {
  for_each_policy([]<class P>() { conv2d_cases<P>("conv shrunk dense", kind::dense, 30); });
}

TEST_CASE("conv shrunk: every output channel count up to three blocks and a tail, rows of tiles and a tail", "[conv][shrunk]") {
  // 3 x 3 "same", C = 3, on rows of 2 tiles + 1 pixel over 3 rows: every tile width and every
  // count of live lanes in the last vector.
  for_each_policy([]<class P>() {
    auto g = lt::make_rng(lt::str("conv shrunk channel sweep ", policy_name<P>()));
    for (index_t CO = 1; CO <= 3 * P::channels + 1; ++CO) {
      conv_case cs;
      cs.N = 1, cs.H = 3, cs.W = 2 * P::pixels + 1, cs.C = 3, cs.CO = CO, cs.KH = cs.KW = 3, cs.pt = cs.pl = cs.pb = cs.pr = 1;
      cs.algorithm = loom::conv_algorithm::direct;
      check_conv2d<P>(g, cs, false, CO % 2 == 0, CO % 3 == 0);
    }
  });
}

TEST_CASE("conv shrunk: grouped conv2d (groups 2 and 4, two output channels per channel) under shrunk policies", "[conv][shrunk]") {
  for_each_policy([]<class P>() { conv2d_cases<P>("conv shrunk grouped", kind::grouped, 24); });
}

TEST_CASE("conv shrunk: depthwise conv2d under shrunk policies", "[conv][shrunk][depthwise]") {
  for_each_policy([]<class P>() { conv2d_cases<P>("conv shrunk depthwise", kind::depthwise, 30); });
}

TEST_CASE("conv shrunk: 3 x 3 stride-1 conv2d, Winograd forced, direct and automatic, under shrunk policies",
          "[conv][shrunk][winograd]") {
  for_each_policy([]<class P>() { conv2d_cases<P>("conv shrunk winograd", kind::winograd, 30); });
}

TEST_CASE("conv shrunk: index notation under conv_schedule<shrunk policy>, dense (a fused epilogue) and depthwise",
          "[conv][shrunk][index]") {
  for_each_policy([]<class P>() { index_cases<P>("conv shrunk index", 20); });
}
