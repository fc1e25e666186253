// examples/demo.cpp — loom's kernels with the default schedule and with hand-written ones, each
// checked against a plain loop, timed (median) and placed on the roofline measured right here.
#include <loom/loom.hpp>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "roofline.hpp"

using namespace loom::vars;
using loom::index_t;

// The hand-written schedules below are sized for the target: W float lanes per vector and, of the
// vector registers (32 with AVX-512, 16 with AVX2), about half for accumulators.
constexpr index_t W = index_t(loom::simd::native_width<float>);
constexpr index_t accumulators = loom::simd::vector_registers<float, std::size_t(W)> / 2;

namespace {

struct row {
  std::string kernel, schedule;
  double seconds, rate;  // GB/s or GFLOP/s
  bool compute_bound;
  double error;
};

void print(const row& r, double copy_gbs, double peak) {
  const double pct = 100.0 * r.rate / (r.compute_bound ? peak : copy_gbs);
  std::printf("%-34s %-26s %9.3f ms %9.1f %-7s %6.1f%% of %s   err %.1e\n", r.kernel.c_str(), r.schedule.c_str(),
              r.seconds * 1e3, r.rate, r.compute_bound ? "GFLOP/s" : "GB/s", pct, r.compute_bound ? "FMA peak" : "copy",
              r.error);
}

template <class T>
void fill(T& t, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : t) v = u(g);
}

template <class T>
double max_rel_err(const T& got, const std::vector<double>& ref) {
  double e = 0;
  for (index_t q = 0; q < got.size(); ++q)
    e = std::max(e, std::fabs(double(got.data()[q]) - ref[std::size_t(q)]) / std::max(1.0, std::fabs(ref[std::size_t(q)])));
  return e;
}

}  // namespace

int main() {
  const int threads = omp_get_max_threads();
  std::printf("loom demo: %d thread(s), SIMD %s (%zu float lanes)\n", threads, loom::simd::native_arch::name(),
              loom::simd::native_width<float>);
  // The FMA roof is a hardware ceiling: one core's measured peak times the cores. (Measured on
  // all threads at once, a neighbour stealing one vCPU during the short measurement halved it.)
  const double peak = threads * demo::measure_peak_gflops(1);
  const double copy_gbs = demo::measure_copy_gbs(std::size_t(64) << 20, threads);
  std::printf("roofline: FMA peak %.1f GFLOP/s, copy %.1f GB/s (both measured now)\n\n", peak, copy_gbs);
  std::printf("%-34s %-26s %12s %17s %18s\n", "kernel", "schedule", "time", "rate", "roofline");
  bool ok = true;
  auto report = [&](row r, double tol) {
    print(r, copy_gbs, peak);
    if (!(r.error <= tol)) {
      std::printf("  ^ FAILED: error %.3g above %.3g\n", r.error, tol);
      ok = false;
    }
  };

  // 1. A fused elementwise chain: one pass, three arrays.
  {
    const index_t n = index_t(1) << 24;
    loom::Tensor<float, 1> x("x", n), c("c", n), out("out", n);
    fill(x, 1);
    fill(c, 2);
    const float a = 1.5f, b = 0.25f;
    std::vector<double> ref(static_cast<std::size_t>(n));
    for (index_t q = 0; q < n; ++q)
      ref[std::size_t(q)] = std::max(double(a) * x(q) + b, 0.0) / (1.0 + std::exp(-double(c(q))));
    auto def = [&] { return out(i) = max(a * x(i) + b, 0.f) * sigmoid(c(i)); };
    const double bytes = 3.0 * 4.0 * double(n);
    double t = demo::seconds_of([&] { loom::run(def()); }, 7);
    report({"out(i)=max(a*x(i)+b,0)*sigmoid(c(i))", "default", t, bytes / t * 1e-9, false, max_rel_err(out, ref)}, 1e-5);
    using S = loom::schedule<loom::split<i, 16384>, loom::vectorize<loom::inner<i>>, loom::parallel<loom::outer<i>>>;
    t = demo::seconds_of([&] { loom::run<S>(def()); }, 7);
    report({"", "split 16K, vec, parallel", t, bytes / t * 1e-9, false, max_rel_err(out, ref)}, 1e-5);
  }

  // 2. Row and column sums of a 4096 x 4096 matrix.
  {
    const index_t n = 4096;
    loom::Tensor<float, 2> X("X", n, n);
    loom::Tensor<float, 1> rs("rs", n), cs("cs", n);
    fill(X, 3);
    std::vector<double> rref(std::size_t(n), 0.0), cref(std::size_t(n), 0.0);
    for (index_t r = 0; r < n; ++r)
      for (index_t q = 0; q < n; ++q) {
        rref[std::size_t(r)] += X(r, q);
        cref[std::size_t(q)] += X(r, q);
      }
    const double bytes = 4.0 * double(n) * double(n);
    double t = demo::seconds_of([&] { loom::run(rs(i) = sum(j, X(i, j))); }, 7);
    const double tol = 4.0 * double(n) * 1.2e-7;  // float accumulation over n terms
    report({"rs(i) = sum(j, X(i, j))", "default", t, bytes / t * 1e-9, false, max_rel_err(rs, rref)}, tol);
    t = demo::seconds_of([&] { loom::run(cs(j) = sum(i, X(i, j))); }, 7);
    report({"cs(j) = sum(i, X(i, j))", "default", t, bytes / t * 1e-9, false, max_rel_err(cs, cref)}, tol);
    using C = loom::schedule<loom::split<j, accumulators * W>, loom::split<loom::inner<j>, W>,
                             loom::vectorize<loom::inner<loom::inner<j>>>,
                             loom::reorder<loom::outer<j>, i, loom::outer<loom::inner<j>>, loom::inner<loom::inner<j>>>,
                             loom::parallel<loom::outer<j>>>;
    t = demo::seconds_of([&] { loom::run<C>(cs(j) = sum(i, X(i, j))); }, 7);
    const std::string strips = std::to_string(accumulators * W) + "-col strips, " + std::to_string(accumulators) + " acc";
    report({"", strips, t, bytes / t * 1e-9, false, max_rel_err(cs, cref)}, tol);
  }

  // 3. Transpose: the untiled loop against the default (the permutation engine).
  {
    const index_t n = 4096;
    loom::Tensor<float, 2> in("in", n, n), out("out", n, n);
    fill(in, 4);
    auto check = [&] {
      double e = 0;
      for (index_t r = 0; r < n; ++r)
        for (index_t q = 0; q < n; ++q) e = std::max(e, double(std::fabs(out(q, r) - in(r, q))));
      return e;
    };
    const double bytes = 2.0 * 4.0 * double(n) * double(n);
    using U = loom::schedule<loom::parallel<j>>;
    double t = demo::seconds_of([&] { loom::run<U>(out(j, i) = in(i, j)); }, 5);
    report({"out(j, i) = in(i, j)", "untiled", t, bytes / t * 1e-9, false, check()}, 0);
    t = demo::seconds_of([&] { loom::run(out(j, i) = in(i, j)); }, 5);
    report({"", "default (permutation engine)", t, bytes / t * 1e-9, false, check()}, 0);
  }

  // 4. A contraction: the default (the GEMM engine, packed) against a register-tiled loop nest.
  {
    const index_t m = 512, nn = 512, kk = 512;
    loom::Tensor<float, 2> A("A", m, kk), B("B", kk, nn), C("C", m, nn);
    fill(A, 5);
    fill(B, 6);
    std::vector<double> ref(std::size_t(m * nn), 0.0);
    for (index_t r = 0; r < m; ++r)
      for (index_t p = 0; p < kk; ++p)
        for (index_t q = 0; q < nn; ++q) ref[std::size_t(r * nn + q)] += double(A(r, p)) * B(p, q);
    const double flops = 2.0 * double(m) * double(nn) * double(kk);
    auto def = [&] { return C(i, j) = sum(k, A(i, k) * B(k, j)); };
    double t = demo::seconds_of([&] { loom::run(def()); }, 3);
    report({"C(i,j) = sum(k, A(i,k)*B(k,j)) 512^3", "default (GEMM engine)", t, flops / t * 1e-9, true, max_rel_err(C, ref)}, 4.0 * double(kk) * 1.2e-7);
    // 6 rows x NV vectors of accumulators, NV loads of B and a broadcast of A in registers.
    constexpr index_t NV = accumulators >= 16 ? 4 : 2;
    using R = loom::schedule<loom::split<j, NV * W>, loom::split<loom::inner<j>, W>, loom::vectorize<loom::inner<loom::inner<j>>>,
                             loom::split<i, 6>,
                             loom::reorder<loom::outer<i>, loom::outer<j>, k, loom::inner<i>, loom::outer<loom::inner<j>>,
                                           loom::inner<loom::inner<j>>>,
                             loom::parallel<loom::outer<i>>>;
    t = demo::seconds_of([&] { loom::run<R>(def()); }, 5);
    report({"", "6x" + std::to_string(NV * W) + " register tile, no pack", t, flops / t * 1e-9, true, max_rel_err(C, ref)}, 4.0 * double(kk) * 1.2e-7);
    std::printf("\nthe register-tiled nest, as loom::print_loop_nest shows it:\n%s", loom::print_loop_nest<R>(def()).c_str());
  }

  // 5. The GEMM engine: 1024^3 plain, with a fused bias + ReLU epilogue, in double, and a static
  //    64^3 that runs without packing. Checked on sampled elements (a full double reference of
  //    1024^3 would take longer than the demo).
  {
    const index_t n = 1024;
    loom::Tensor<float, 2> A("A", n, n), B("B", n, n), C("C", n, n);
    loom::Tensor<float, 1> bias("bias", n);
    fill(A, 7);
    fill(B, 8);
    fill(bias, 9);
    auto sampled_err = [&](const auto& Cm, const auto& Am, const auto& Bm, index_t size, bool relu) {
      double e = 0;
      for (index_t s = 0; s < 200; ++s) {
        const index_t r = (s * 7919) % size, q = (s * 104729 + 13) % size;
        double d = 0;
        for (index_t p = 0; p < size; ++p) d += double(Am(r, p)) * double(Bm(p, q));
        if (relu) d = std::max(d + double(bias(q)), 0.0);
        e = std::max(e, std::fabs(double(Cm(r, q)) - d) / std::max(1.0, std::fabs(d)));
      }
      return e;
    };
    const double flops = 2.0 * double(n) * double(n) * double(n);
    const double tol = 4.0 * double(n) * 1.2e-7;
    std::printf("\n");
    double t = demo::seconds_of([&] { loom::gemm(C, A, B); }, 5);
    report({"loom::gemm(C, A, B) 1024^3", "default policy", t, flops / t * 1e-9, true, sampled_err(C, A, B, n, false)}, tol);
    t = demo::seconds_of([&] { loom::run(C(i, j) = max(sum(k, A(i, k) * B(k, j)) + bias(j), 0.f)); }, 5);
    report({"C = max(A B + bias(j), 0) 1024^3", "fused epilogue", t, flops / t * 1e-9, true, sampled_err(C, A, B, n, true)}, tol);

    loom::Tensor<double, 2> Ad("Ad", n, n), Bd("Bd", n, n), Cd("Cd", n, n);
    for (index_t q = 0; q < n * n; ++q) Ad.data()[q] = A.data()[q], Bd.data()[q] = B.data()[q];
    t = demo::seconds_of([&] { loom::gemm(Cd, Ad, Bd); }, 5);
    report({"loom::gemm double 1024^3", "default policy", t, flops / t * 1e-9, true, sampled_err(Cd, Ad, Bd, n, false)},
           1e-12 * double(n));
    std::printf("  (the double figure is against the FP32 peak; FP64 peak is half of it)\n");

    using E = loom::extents<64, 64>;
    loom::Tensor<float, 2, E> a, b, c;
    for (index_t r = 0; r < 64; ++r)
      for (index_t q = 0; q < 64; ++q) a(r, q) = A(r, q), b(r, q) = B(r, q);
    const double small_flops = 2.0 * 64 * 64 * 64;
    t = demo::seconds_of([&] { for (int rep = 0; rep < 1000; ++rep) loom::gemm(c, a, b); }, 5) / 1000;
    const double peak1 = peak / threads;  // one call runs on one thread
    const double err = sampled_err(c, a, b, 64, false);
    // (64 floats per row of C fit the registers of AVX-512 as an unrolled block, not those of AVX2)
    constexpr bool unpacked = loom::gemm_detail::small_static<loom::gemm_detail::view_of<decltype(c)>, loom::gemm_detail::view_of<decltype(a)>,
                                                               loom::gemm_detail::view_of<decltype(b)>>;
    std::printf("%-34s %-26s %9.3f us %9.1f %-7s %6.1f%% of 1-core FMA peak   err %.1e\n", "static 64^3 loom::gemm",
                unpacked ? "unpacked, unrolled" : "packed (too wide unrolled)", t * 1e6, small_flops / t * 1e-9, "GFLOP/s", 100.0 * small_flops / t * 1e-9 / peak1, err);
    if (!(err <= 64 * 4 * 1.2e-7)) ok = false;

    // The same product with run-time extents: the unpacked run-time path (kernels/gemm/small_dynamic.hpp).
    loom::Tensor<float, 2> ad("ad", 64, 64), bd("bd", 64, 64), cd("cd", 64, 64);
    for (index_t r = 0; r < 64; ++r)
      for (index_t q = 0; q < 64; ++q) ad(r, q) = A(r, q), bd(r, q) = B(r, q);
    t = demo::seconds_of([&] { for (int rep = 0; rep < 1000; ++rep) loom::gemm(cd, ad, bd); }, 5) / 1000;
    const double err_d = sampled_err(cd, ad, bd, 64, false);
    std::printf("%-34s %-26s %9.3f us %9.1f %-7s %6.1f%% of 1-core FMA peak   err %.1e\n", "run-time 64^3 loom::gemm",
                "unpacked, run-time blocks", t * 1e6, small_flops / t * 1e-9, "GFLOP/s", 100.0 * small_flops / t * 1e-9 / peak1,
                err_d);
    if (!(err_d <= 64 * 4 * 1.2e-7)) ok = false;
  }

  // 6. A ResNet basic block in index notation: conv-bn-relu, conv-bn-add-relu. Each convolution
  //    runs on the convolution engine (Winograd for these 3 x 3 layers), its batch norm, residual
  //    and ReLU applied to the register tiles. Checked on sampled outputs against plain loops.
  {
    const index_t H = 56, C = 64;
    loom::Var<"co"> co;
    loom::Var<"ci"> ci;
    loom::Var<"ry"> ry;
    loom::Var<"rx"> rx;
    loom::Tensor<float, 4> act("act", 1, H, H, C), w1("w1", 3, 3, C, C), w2("w2", 3, 3, C, C), mid("mid", 1, H, H, C), res("res", 1, H, H, C);
    loom::Tensor<float, 1> s1("s1", C), b1("b1", C), s2("s2", C), b2("b2", C);
    fill(act, 21), fill(w1, 22), fill(w2, 23), fill(b1, 24), fill(b2, 25);
    for (index_t c = 0; c < C; ++c) s1(c) = 0.1f + 0.01f * float(c % 7), s2(c) = 0.1f + 0.01f * float(c % 5);
    const auto px = loom::constant_exterior(act, 0.f);
    const auto pt = loom::constant_exterior(mid, 0.f);
    auto block = [&] {
      loom::run(mid(n, y, x, co) = max(sum(ry, rx, ci, px(n, y + ry - 1, x + rx - 1, ci) * w1(ry, rx, ci, co)) * s1(co) + b1(co), 0.f));
      loom::run(res(n, y, x, co) =
                    max(sum(ry, rx, ci, pt(n, y + ry - 1, x + rx - 1, ci) * w2(ry, rx, ci, co)) * s2(co) + b2(co) + act(n, y, x, co), 0.f));
    };
    const double secs = demo::seconds_of(block, 5);
    // The reference: t in full (double), then y at sampled points.
    auto conv_at = [&](const auto& in, const auto& w, index_t oy, index_t ox, index_t o, const auto& value) {
      double acc = 0;
      for (index_t a = 0; a < 3; ++a)
        for (index_t b = 0; b < 3; ++b) {
          const index_t iy = oy + a - 1, ix = ox + b - 1;
          if (iy < 0 || iy >= H || ix < 0 || ix >= H) continue;
          for (index_t c = 0; c < C; ++c) acc += value(in, iy, ix, c) * double(w(a, b, c, o));
        }
      return acc;
    };
    std::vector<double> tref(std::size_t(H * H * C));
    auto of_x = [](const auto& in, index_t iy, index_t ix, index_t c) { return double(in(0, iy, ix, c)); };
    for (index_t oy = 0; oy < H; ++oy)
      for (index_t ox = 0; ox < H; ++ox)
        for (index_t o = 0; o < C; ++o)
          tref[std::size_t((oy * H + ox) * C + o)] = std::max(conv_at(act, w1, oy, ox, o, of_x) * s1(o) + b1(o), 0.0);
    auto of_t = [&](const auto&, index_t iy, index_t ix, index_t c) { return tref[std::size_t((iy * H + ix) * C + c)]; };
    double err = max_rel_err(mid, tref);
    for (index_t q = 0; q < 200; ++q) {
      const index_t oy = (q * 37) % H, ox = (q * 101 + 5) % H, o = (q * 13) % C;
      const double want = std::max(conv_at(mid, w2, oy, ox, o, of_t) * s2(o) + b2(o) + act(0, oy, ox, o), 0.0);
      err = std::max(err, std::fabs(double(res(0, oy, ox, o)) - want) / std::max(1.0, std::fabs(want)));
    }
    const double flops = 2 * 2.0 * double(H * H) * double(C * C) * 9;
    std::printf("\n");
    report({"ResNet basic block 56^2 x 64", "2 convs, bn/add/relu fused", secs, flops / secs * 1e-9, true, err}, 1e-4);
    std::printf("  (nominal: 2 x 9 x C x CO multiply-adds per pixel; Winograd does fewer, so this can exceed the peak)\n");
  }

  std::printf("\n%s\n", ok ? "all results match the plain-loop references" : "SOME RESULTS ARE WRONG");
  return ok ? 0 : 1;
}
