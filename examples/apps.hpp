// examples/apps.hpp — image apps of Halide's apps/ directory written as loom pipelines, each with
// its schedules and a plain-loop reference (computed in double for the float apps, exact for
// blur_u16):
//
//   blur      3x3 box blur, float: bx(y, x) = (in(y, x) + in(y, x+1) + in(y, x+2)) / 3,
//             out(y, x) = (bx(y, x) + bx(y+1, x) + bx(y+2, x)) / 3 (Halide's apps/blur, which is
//             uint16: blur_u16).
//   blur_u16  Halide's apps/blur exactly: the same blur in uint16 arithmetic (sums wrap modulo
//             2^16, / 3 is integer division), on 12-bit inputs as the app's test; checked with ==.
//   unsharp   Halide's apps/unsharp on one grayscale channel: a separable Gaussian (sigma 1.5),
//             vertical (blur_y) then horizontal (blur_x), then out = 2 * in - blur_x, which is
//             Halide's `sharpen`. Differences from the app: 5 taps (radius 2) with weights
//             normalized to sum 1, where the app has 7 (radius 3) unnormalized; no `gray` (the input
//             is already gray) and no `ratio` (sharpen / gray times each RGB channel: with one
//             channel it would give back sharpen).
//   harris    Halide's apps/harris on a grayscale input: Sobel Ix, Iy (coefficients ±1/12, ±2/12,
//             Halide's term order), Ixx, Iyy, Ixy, their 3x3 box sums Sxx, Syy, Sxy, det and trace
//             stages, out = det - 0.04 * trace^2 (no `gray`: the input is gray).
//
// Inputs are padded so that every read is in bounds: the output is the interior, as Halide's apps
// size their inputs (harris's output is harris(x + 2, y + 2)). Every offset is non-negative, so an
// input of (H + 2 * r) x (W + 2 * r) gives an H x W output (r = 1 for blur, 2 for the others).
//
// Schedules (each an apps::schedule<stage<...>...>: run(p), print(p), memory(p)):
//   best      Halide's own CPU schedule of the app transcribed: the output split into strips of
//             rows (8 for blur, 32 for unsharp and harris), strips in parallel, x vectorized (8
//             lanes for blur as its app says, the native width where the apps say
//             natural_vector_size), the stored stages `store_at` the strip and `compute_at` the row
//             inside it (a sliding window), everything else inlined.
//             Harris's `Ix.compute_with(Iy, x)` has no loom counterpart: Ix and Iy run one after
//             the other.
//   root      every stage compute_root, each stage's nest parallel over rows and vectorized over x.
//   apps::default_schedule   loom::run(p): loom's default placements and loops
//             (docs/pipelines.md).
//   tuned     the fastest loom schedule found (2-core Zen 5, shared and noisy): see each app.
#pragma once
#include <loom/loom.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace apps {

using loom::index_t;
using T2 = loom::Tensor<float, 2>;

/// A pipeline schedule as one type: run, print its loop nests, plan its arena.
template <class... Stages>
struct schedule {
  template <class P>
  static void run(P& p) {
    loom::run<Stages...>(p);
  }
  template <class P>
  static std::string print(const P& p) {
    return loom::print_loop_nest<Stages...>(p);
  }
  template <class P>
  static loom::pipeline_memory memory(P& p) {
    return loom::plan_memory<Stages...>(p);
  }
};
using default_schedule = schedule<>;

namespace sched {
using namespace loom::vars;
using loom::compute_at;
using loom::compute_inline;
using loom::compute_root;
using loom::inner;
using loom::outer;
using loom::output;
using loom::parallel;
using loom::split;
using loom::stage;
using loom::store_at;
using loom::vectorize;

/// A stage of the root schedules: computed at root, rows in parallel, x vectorized.
template <auto F>
using root_stage = stage<F, compute_root, parallel<y>, vectorize<x>>;
/// The output of the root schedules: the same nest.
using root_output = stage<output, parallel<y>, vectorize<x>>;
/// A stage stored per strip of the output and computed per row inside it (a sliding window), x
/// vectorized by Lanes (loom::native: the target's width).
template <auto F, index_t Lanes = loom::native>
using sliding = stage<F, store_at<output, outer<y>>, compute_at<output, inner<y>>, vectorize<x, Lanes>>;
/// A stage computed per strip of the output (the box a strip reads, halo included), no sliding.
template <auto F, index_t Lanes = loom::native>
using at_strip = stage<F, compute_at<output, outer<y>>, vectorize<x, Lanes>>;
/// The output in strips of Rows rows, strips in parallel, x vectorized by Lanes.
template <index_t Rows, index_t Lanes = loom::native>
using strips = stage<output, split<y, Rows>, parallel<outer<y>>, vectorize<x, Lanes>>;
/// strips, the output written with non-temporal stores (loom::stream_stores<0>: whole aligned
/// vectors bypass the cache).
template <index_t Rows, index_t Lanes = loom::native>
using streamed_strips = stage<output, split<y, Rows>, parallel<outer<y>>, vectorize<x, Lanes>, loom::stream_stores<0>>;
template <auto F>
using inlined = stage<F, compute_inline>;
}  // namespace sched

/// A reference result (computed in double, kept in float: 4 bytes per point at 6400 x 4800), and
/// per point the scale its rounding error is relative to: the sum of the magnitudes of the terms,
/// so that cancellation does not make the tolerance zero.
struct reference {
  index_t H = 0, W = 0;
  std::vector<float> value, scale;
  reference(index_t h, index_t w) : H(h), W(w), value(std::size_t(h * w)), scale(std::size_t(h * w)) {}
  void set(index_t r, index_t c, double v, double s) {
    value[std::size_t(r * W + c)] = float(v);
    scale[std::size_t(r * W + c)] = float(s);
  }
};

/// The first point where got differs from ref by more than rtol * scale + atol; -1 if none.
inline index_t first_mismatch(const T2& got, const reference& ref, double rtol, double atol = 1e-6) {
  for (index_t r = 0; r < ref.H; ++r)
    for (index_t c = 0; c < ref.W; ++c) {
      const std::size_t q = std::size_t(r * ref.W + c);
      const double g = got(r, c);
      if (!(std::abs(g - ref.value[q]) <= rtol * ref.scale[q] + atol)) return r * ref.W + c;  // NaN too
    }
  return -1;
}

/// first_mismatch with the tolerance every float app is checked with.
inline index_t mismatch(const T2& got, const reference& ref) { return first_mismatch(got, ref, 1e-5); }

/// An image of uniform values in [0, 1), reproducible from the seed.
inline void fill_image(T2& t, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (auto& v : t) v = u(g);
}

// ---- integer images ----
using T2u16 = loom::Tensor<std::uint16_t, 2>;

/// An exact reference of an integer app: results compared with ==.
template <class V>
struct exact_reference {
  index_t H = 0, W = 0;
  std::vector<V> value;
  exact_reference(index_t h, index_t w) : H(h), W(w), value(std::size_t(h * w)) {}
};

/// The first point where got differs from ref; -1 if none.
template <class V>
index_t first_mismatch(const loom::Tensor<V, 2>& got, const exact_reference<V>& ref) {
  for (index_t r = 0; r < ref.H; ++r)
    for (index_t c = 0; c < ref.W; ++c)
      if (got(r, c) != ref.value[std::size_t(r * ref.W + c)]) return r * ref.W + c;
  return -1;
}

/// first_mismatch, exact.
template <class V>
index_t mismatch(const loom::Tensor<V, 2>& got, const exact_reference<V>& ref) {
  return first_mismatch(got, ref);
}

/// An app's images: loom::Tensor<App::value_type, 2>.
template <class App>
using image_t = loom::Tensor<typename App::value_type, 2>;

/// An image of uniform 12-bit values (Halide's apps/blur test: rand() & 0xfff), reproducible from
/// the seed.
inline void fill_image(T2u16& t, unsigned seed) {
  std::mt19937 g(seed);
  for (auto& v : t) v = static_cast<std::uint16_t>(g() & 0xfffu);
}

// ---------------------------------------------------------------------------------------------
// blur
// ---------------------------------------------------------------------------------------------
struct blur {
  using value_type = float;
  static constexpr const char* name = "blur";
  static constexpr index_t pad = 2;  // in is (H + 2) x (W + 2)
  static constexpr loom::Func<float, 2, "blur_x"> bx{};

  static auto make(const T2& in, T2& out) {
    using namespace loom::vars;
    return loom::pipeline(bx(y, x) = (in(y, x) + in(y, x + 1) + in(y, x + 2)) / 3.f,
                          out(y, x) = (bx(y, x) + bx(y + 1, x) + bx(y + 2, x)) / 3.f);
  }
  /// apps/blur's CPU schedule: blur_y.split(y, y, yi, 8).parallel(y).vectorize(x, 8);
  /// blur_x.store_at(blur_y, y).compute_at(blur_y, yi).vectorize(x, 8).
  using best = schedule<sched::sliding<bx, 8>, sched::strips<8, 8>>;
  using root = schedule<sched::root_stage<bx>, sched::root_output>;
  /// Under `best`, the bytes each thread stores: blur_x over a strip of 8 rows and its 2-row halo.
  static constexpr std::size_t best_bytes_per_thread(index_t W) { return std::size_t((8 + 2) * W) * sizeof(float); }
  /// loom's fastest found: blur_x per strip of 128 rows (130 with the halo), no sliding window
  /// (the driver's cost per row is paid per strip instead); 8 lanes, as the app (16 were slower on
  /// Zen 5). Strips of 128 against 32 (same run, 2-core Zen 5): 11.2 against 13.5 ms at 1 thread,
  /// 6.6 against 7.1 at 2; 16, 64 and 96 rows were in between or slower.
  using tuned = schedule<sched::at_strip<bx, 8>, sched::strips<128, 8>>;
  static constexpr std::size_t tuned_bytes_per_thread(index_t W) { return std::size_t((128 + 2) * W) * sizeof(float); }

  static reference ref(const T2& in, index_t H, index_t W) {
    reference r(H, W);
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b) {
        double s = 0, m = 0;
        for (index_t dy = 0; dy < 3; ++dy)
          for (index_t dx = 0; dx < 3; ++dx) s += in(a + dy, b + dx), m += std::abs(in(a + dy, b + dx));
        r.set(a, b, s / 9, m / 9);
      }
    return r;
  }

  // Halide's apps/blur proper is uint16: blur_u16 below.
};

// ---------------------------------------------------------------------------------------------
// blur_u16
// ---------------------------------------------------------------------------------------------
/// Halide's apps/blur as it is: uint16 in, uint16 out, uint16 arithmetic throughout (the sums wrap
/// modulo 2^16, as Halide's and loom's do; the app's 12-bit input, fill_image's, keeps them below
/// 3 * 4095), each division by 3 an integer division (loom multiplies by a magic number:
/// simd/divide.hpp). The float blur's offsets: in is (H + 2) x (W + 2).
struct blur_u16 {
  using value_type = std::uint16_t;
  static constexpr const char* name = "blur_u16";
  static constexpr index_t pad = 2;  // in is (H + 2) x (W + 2)
  static constexpr loom::Func<std::uint16_t, 2, "bx16"> bx{};

  static auto make(const T2u16& in, T2u16& out) {
    using namespace loom::vars;
    return loom::pipeline(bx(y, x) = (in(y, x) + in(y, x + 1) + in(y, x + 2)) / 3,
                          out(y, x) = (bx(y, x) + bx(y + 1, x) + bx(y + 2, x)) / 3);
  }
  /// apps/blur's CPU schedule, verbatim (8 lanes of uint16: a quarter of an AVX-512 register).
  using best = schedule<sched::sliding<bx, 8>, sched::strips<8, 8>>;
  using root = schedule<sched::root_stage<bx>, sched::root_output>;
  static constexpr std::size_t best_bytes_per_thread(index_t W) { return std::size_t((8 + 2) * W) * sizeof(value_type); }
  /// loom's fastest found: blur_x per strip of 128 rows (130 with the halo), no sliding window,
  /// in 16 lanes (32, a whole AVX-512 register, were about 20 % slower on Zen 5, probably as
  /// each 64-byte load at x + 1 or x + 2 crosses a cache line); the output in native lanes, with
  /// non-temporal stores (no read for ownership of the 61 MB output at 6400 x 4800: about 15 %
  /// less time). Strips of 32 or 64 rows were 10-25 % slower, a sliding window about 40 %.
  using tuned = schedule<sched::at_strip<bx, 16>, sched::streamed_strips<128>>;
  static constexpr std::size_t tuned_bytes_per_thread(index_t W) { return std::size_t((128 + 2) * W) * sizeof(value_type); }

  /// The exact result: plain loops in uint16 arithmetic (C++ promotes to int; the casts wrap back).
  static exact_reference<value_type> ref(const T2u16& in, index_t H, index_t W) {
    exact_reference<value_type> r(H, W);
    auto bx_of = [&](index_t a, index_t b) {
      const auto s = value_type(in(a, b) + in(a, b + 1) + in(a, b + 2));
      return value_type(s / 3);
    };
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b) {
        const auto s = value_type(bx_of(a, b) + bx_of(a + 1, b) + bx_of(a + 2, b));
        r.value[std::size_t(a * W + b)] = value_type(s / 3);
      }
    return r;
  }
};

// ---------------------------------------------------------------------------------------------
// unsharp
// ---------------------------------------------------------------------------------------------
struct unsharp {
  using value_type = float;
  static constexpr const char* name = "unsharp";
  static constexpr index_t pad = 4;  // in is (H + 4) x (W + 4)
  static constexpr loom::Func<float, 2, "blur_y"> blur_y{};
  static constexpr loom::Func<float, 2, "blur_x"> blur_x{};

  /// The weights exp(-d^2 / (2 sigma^2)), d = -2 .. 2, sigma 1.5, divided by their sum: w[0] the
  /// centre, w[1] and w[2] the taps at distance 1 and 2.
  struct weights {
    double w[3];
  };
  static weights gaussian() {
    const double sigma = 1.5;
    double k[3];
    for (int d = 0; d < 3; ++d) k[d] = std::exp(-double(d * d) / (2 * sigma * sigma));
    const double total = k[0] + 2 * k[1] + 2 * k[2];
    return {{k[0] / total, k[1] / total, k[2] / total}};
  }

  /// Halide's algorithm (kernel(0) * centre + kernel(1) * (pair) + ...), the origin moved by 2:
  /// blur_y(y, x) is centred on in(y + 2, x), blur_x(y, x) on blur_y(y, x + 2).
  static auto make(const T2& in, T2& out) {
    using namespace loom::vars;
    const weights k = gaussian();
    const float w0 = float(k.w[0]), w1 = float(k.w[1]), w2 = float(k.w[2]);
    return loom::pipeline(
        blur_y(y, x) = w0 * in(y + 2, x) + w1 * (in(y + 1, x) + in(y + 3, x)) + w2 * (in(y, x) + in(y + 4, x)),
        blur_x(y, x) = w0 * blur_y(y, x + 2) + w1 * (blur_y(y, x + 1) + blur_y(y, x + 3)) + w2 * (blur_y(y, x) + blur_y(y, x + 4)),
        out(y, x) = 2.f * in(y + 2, x + 2) - blur_x(y, x));
  }
  /// apps/unsharp's CPU schedule without gray and ratio: output.split(y, yo, yi, 32).vectorize(x)
  /// .parallel(yo); blur_y.compute_at(output, yi).store_at(output, yo).vectorize(x); blur_x inlined.
  using best = schedule<sched::sliding<blur_y>, sched::inlined<blur_x>, sched::strips<32>>;
  using root = schedule<sched::root_stage<blur_y>, sched::root_stage<blur_x>, sched::root_output>;
  /// Under `best`, the bytes each thread stores: blur_y over a strip of 32 rows (no vertical halo),
  /// W + 4 columns.
  static constexpr std::size_t best_bytes_per_thread(index_t W) { return std::size_t(32 * (W + 4)) * sizeof(float); }
  /// loom's fastest found: blur_y per strip of 8 rows, no sliding window (nothing to slide: each
  /// row of blur_y is read by one output row), so the driver runs per strip, not per row.
  using tuned = schedule<sched::at_strip<blur_y>, sched::inlined<blur_x>, sched::strips<8>>;
  static constexpr std::size_t tuned_bytes_per_thread(index_t W) { return std::size_t(8 * (W + 4)) * sizeof(float); }

  static reference ref(const T2& in, index_t H, index_t W) {
    const weights k = gaussian();
    const double w[5] = {k.w[2], k.w[1], k.w[0], k.w[1], k.w[2]};
    reference r(H, W);
    for (index_t a = 0; a < H; ++a)
      for (index_t b = 0; b < W; ++b) {
        double s = 0, m = 0;
        for (index_t dy = 0; dy < 5; ++dy)
          for (index_t dx = 0; dx < 5; ++dx) {
            const double v = w[dy] * w[dx] * in(a + dy, b + dx);
            s += v, m += std::abs(v);
          }
        const double centre = in(a + 2, b + 2);
        r.set(a, b, 2 * centre - s, 2 * std::abs(centre) + m);
      }
    return r;
  }
};

// ---------------------------------------------------------------------------------------------
// harris
// ---------------------------------------------------------------------------------------------
struct harris {
  using value_type = float;
  static constexpr const char* name = "harris";
  static constexpr index_t pad = 4;  // in is (H + 4) x (W + 4)
  static constexpr loom::Func<float, 2, "Ix"> Ix{};
  static constexpr loom::Func<float, 2, "Iy"> Iy{};
  static constexpr loom::Func<float, 2, "Ixx"> Ixx{};
  static constexpr loom::Func<float, 2, "Iyy"> Iyy{};
  static constexpr loom::Func<float, 2, "Ixy"> Ixy{};
  static constexpr loom::Func<float, 2, "Sxx"> Sxx{};
  static constexpr loom::Func<float, 2, "Syy"> Syy{};
  static constexpr loom::Func<float, 2, "Sxy"> Sxy{};
  static constexpr loom::Func<float, 2, "det"> det{};
  static constexpr loom::Func<float, 2, "trace"> trace{};
  static constexpr float c1 = 1.0f / 12, c2 = 2.0f / 12, kappa = 0.04f;

  /// Halide's algorithm, the origin moved by 1 per stage: Ix(y, x) is centred on in(y + 1, x + 1),
  /// Sxx(y, x) on Ixx(y + 1, x + 1), so out(y, x) is Halide's harris(x + 2, y + 2).
  static auto make(const T2& in, T2& out) {
    using namespace loom::vars;
    return loom::pipeline(
        Iy(y, x) = in(y, x) * -c1 + in(y + 2, x) * c1 + in(y, x + 1) * -c2 + in(y + 2, x + 1) * c2 + in(y, x + 2) * -c1 +
                   in(y + 2, x + 2) * c1,
        Ix(y, x) = in(y, x) * -c1 + in(y, x + 2) * c1 + in(y + 1, x) * -c2 + in(y + 1, x + 2) * c2 + in(y + 2, x) * -c1 +
                   in(y + 2, x + 2) * c1,
        Ixx(y, x) = Ix(y, x) * Ix(y, x),  //
        Iyy(y, x) = Iy(y, x) * Iy(y, x),  //
        Ixy(y, x) = Ix(y, x) * Iy(y, x),
        // Halide's sum3x3: x - 1 (here x) outermost
        Sxx(y, x) = Ixx(y, x) + Ixx(y + 1, x) + Ixx(y + 2, x) + Ixx(y, x + 1) + Ixx(y + 1, x + 1) + Ixx(y + 2, x + 1) +
                    Ixx(y, x + 2) + Ixx(y + 1, x + 2) + Ixx(y + 2, x + 2),
        Syy(y, x) = Iyy(y, x) + Iyy(y + 1, x) + Iyy(y + 2, x) + Iyy(y, x + 1) + Iyy(y + 1, x + 1) + Iyy(y + 2, x + 1) +
                    Iyy(y, x + 2) + Iyy(y + 1, x + 2) + Iyy(y + 2, x + 2),
        Sxy(y, x) = Ixy(y, x) + Ixy(y + 1, x) + Ixy(y + 2, x) + Ixy(y, x + 1) + Ixy(y + 1, x + 1) + Ixy(y + 2, x + 1) +
                    Ixy(y, x + 2) + Ixy(y + 1, x + 2) + Ixy(y + 2, x + 2),
        det(y, x) = Sxx(y, x) * Syy(y, x) - Sxy(y, x) * Sxy(y, x),  //
        trace(y, x) = Sxx(y, x) + Syy(y, x),                        //
        out(y, x) = det(y, x) - kappa * trace(y, x) * trace(y, x));
  }
  /// apps/harris's CPU schedule: output.split(y, y, yi, 32).parallel(y).vectorize(x); Ix, Iy
  /// .store_at(output, y).compute_at(output, yi).vectorize(x); everything else inlined.
  /// (Ix.compute_with(Iy, x) has no loom counterpart: Iy's row, then Ix's.)
  using best = schedule<sched::sliding<Iy>, sched::sliding<Ix>, sched::strips<32>>;
  using root = schedule<sched::root_stage<Iy>, sched::root_stage<Ix>, sched::root_stage<Ixx>, sched::root_stage<Iyy>,
                        sched::root_stage<Ixy>, sched::root_stage<Sxx>, sched::root_stage<Syy>, sched::root_stage<Sxy>,
                        sched::root_stage<det>, sched::root_stage<trace>, sched::root_output>;
  /// Under `best`, the bytes each thread stores: Ix and Iy over a strip of 32 rows and its 2-row
  /// halo, W + 2 columns.
  static constexpr std::size_t best_bytes_per_thread(index_t W) { return 2 * std::size_t((32 + 2) * (W + 2)) * sizeof(float); }
  /// Every stage but det and trace computed per strip of 16 rows: each loop has few accesses.
  /// Since strips fold their row into the accesses' bases and Ixx's two reads of Ix are one,
  /// `best` is as fast or faster (docs/tuning.md#strip-bases: 40.1 / 20.0 ms against 42.2 / 24.5
  /// at 1 / 2 threads on Zen 5).
  using tuned = schedule<sched::at_strip<Ix>, sched::at_strip<Iy>, sched::at_strip<Ixx>, sched::at_strip<Iyy>, sched::at_strip<Ixy>,
                         sched::at_strip<Sxx>, sched::at_strip<Syy>, sched::at_strip<Sxy>, sched::strips<16>>;
  /// Under `tuned`: Ix .. Ixy over 16 + 2 rows of W + 2 columns, Sxx .. Sxy over 16 rows of W.
  static constexpr std::size_t tuned_bytes_per_thread(index_t W) {
    return (5 * std::size_t((16 + 2) * (W + 2)) + 3 * std::size_t(16 * W)) * sizeof(float);
  }

  static reference ref(const T2& in, index_t H, index_t W) {
    reference r(H, W);
    // Ix and Iy of rows a .. a + 2 (columns 0 .. W + 1), for output row a.
    const index_t WG = W + 2;
    std::vector<double> gx(std::size_t(3 * WG)), gy(gx.size());
    for (index_t a = 0; a < H; ++a) {
      for (index_t dy = 0; dy < 3; ++dy)
        for (index_t b = 0; b < WG; ++b) {
          auto g = [&](index_t u, index_t v) { return double(in(a + dy + u, b + v)); };
          gx[std::size_t(dy * WG + b)] = (g(0, 2) - g(0, 0) + 2 * (g(1, 2) - g(1, 0)) + g(2, 2) - g(2, 0)) / 12;
          gy[std::size_t(dy * WG + b)] = (g(2, 0) - g(0, 0) + 2 * (g(2, 1) - g(0, 1)) + g(2, 2) - g(0, 2)) / 12;
        }
      for (index_t b = 0; b < W; ++b) {
        double sxx = 0, syy = 0, sxy = 0;
        for (index_t dy = 0; dy < 3; ++dy)
          for (index_t dx = 0; dx < 3; ++dx) {
            const double u = gx[std::size_t(dy * WG + b + dx)], v = gy[std::size_t(dy * WG + b + dx)];
            sxx += u * u, syy += v * v, sxy += u * v;
          }
        const double tr = sxx + syy;
        r.set(a, b, sxx * syy - sxy * sxy - 0.04 * tr * tr, sxx * syy + sxy * sxy + 0.04 * tr * tr);
      }
    }
    return r;
  }
};

}  // namespace apps
