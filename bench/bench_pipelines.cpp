// bench/bench_pipelines.cpp — loom's multi-stage pipelines on Halide's image apps (examples/apps.hpp:
// blur, blur_u16 (Halide's apps/blur exactly: uint16), unsharp, harris) at 6400 x 4800, and
// row-wise softmax / layer norm at 4096 x 4096 against Eigen 3.4, at 1 and 2 OpenMP threads.
// bench/bench_pipelines_halide.cpp runs the same apps in Halide 14; bench/run_pipelines.sh runs
// both and prints the comparison.
//
//   <app>/loom_best       Halide's own CPU schedule of the app, transcribed (apps.hpp: `best`)
//   <app>/loom_tuned      the fastest loom schedule found (apps.hpp: `tuned`)
//   <app>/loom_root       every stage compute_root, each nest parallel over rows, vectorized
//   <app>/loom_default    loom::run(p): loom's default placements and loops
//   <app>/hand_fused      hand-written C++ (OpenMP over strips of rows, `omp simd` rows): each
//                         stage's rows computed once into a few rows of thread-local storage and
//                         consumed while in cache (a hand-made sliding window)
//   blur/hand_2pass       hand-written, unfused: all of blur_x into a full buffer, then the output
//   blur_u16/hand_fused, blur_u16/hand_2pass   the same two loops in uint16 (sums wrapped to
//                         uint16, / 3 as C++ integer division, which GCC vectorizes as a
//                         multiply-high)
//   softmax/..., layernorm/...   Y(i, j) over X of 4096 x 4096:
//     loom_onedef         one definition; loom hoists each row's reductions into per-row stages
//     loom_pipeline       the small pipeline m(i), e(i, j), s(i) (softmax) or mean, d, var (layer
//                         norm), all computed per row inside Y's parallel row loop
//     loom_pipeline_tuned the same stages computed per strip of 8 rows (split<i, 8>, at outer<i>),
//                         e (or d) asking for the next strip's rows of X while it computes
//                         (prefetch<i, 8, 0>), the row reductions with four accumulators a row
//                         (vectorize<k>, unroll<outer<k>, 4>); softmax's e also asks for the
//                         lines of Y the output stores (prefetch_stores<output>), layer norm's Y
//                         is streamed (stream_stores<0>)
//     eigen, eigen_omp    Eigen's per-row loop, on one thread / rows split over OpenMP threads
//
// Names: <kernel>/<impl>/threads:<T>. Counters: "GB/s" (bytes = input + output, each once, at the
// app's element size: 4 bytes for float, 2 for blur_u16),
// "ms" (per run), "storage_bytes" (the bytes of intermediate stages: for loom, the root stages'
// arena as loom::plan_memory plans it plus the per-thread buffers of the stages computed at a
// loop, measured (loom::scratch_bytes of each thread after a run) and checked against what
// apps.hpp computes for best and tuned; for the hand loops, their buffers).
// Every implementation is checked once per thread count against the plain-loop reference of
// apps.hpp (or a double-precision row loop) before it is timed; a wrong result aborts the run
// (blur_u16's reference is exact, compared with ==).
//
// Run: bench/run_pipelines.sh, or bench_pipelines --benchmark_repetitions=5
// --benchmark_report_aggregates_only=true [--benchmark_filter=^blur/] and read the medians.

#include "bench_common.hpp"

#include <loom/loom.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../examples/apps.hpp"
#include "rowwise_data.hpp"

namespace {

using namespace loom::vars;
using namespace loom_bench;
using apps::T2;
using loom::index_t;

constexpr index_t H = 4800, W = 6400;  // the apps' output; inputs are padded by App::pad

/// Fills an output with a value no result has: NaN, or for uint16 0xffff (above the 12-bit blur).
template <class V>
void poison(loom::Tensor<V, 2>& t) {
  if constexpr (std::is_floating_point_v<V>) std::fill(t.begin(), t.end(), std::numeric_limits<V>::quiet_NaN());
  else std::fill(t.begin(), t.end(), std::numeric_limits<V>::max());
}

/// "ms" (per run, wall clock) and "storage_bytes" beside set_bytes' "GB/s".
void set_counters(benchmark::State& st, double bytes, std::size_t storage) {
  set_bytes(st, bytes);
  st.counters["ms"] = benchmark::Counter(double(st.iterations()) / 1e3, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.counters["storage_bytes"] = benchmark::Counter(double(storage));
}

/// The scratch bytes the threads of a team of `threads` hold (loom's compute_at buffers).
std::size_t team_scratch(int threads) {
  std::size_t total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  total += loom::scratch_bytes();
  return total;
}
void team_release(int threads) {
#pragma omp parallel num_threads(threads)
  loom::release_scratch();
}

// ------------------------------------------------------------------------------------------
// The apps: data built once per app, on first use (input, output, reference, the pipeline).
// ------------------------------------------------------------------------------------------
template <class App>
struct AppData {
  using Img = apps::image_t<App>;
  Img in{"in", H + App::pad, W + App::pad}, out{"out", H, W};
  decltype(App::ref(std::declval<const Img&>(), H, W)) ref{0, 0};
  using P = decltype(App::make(std::declval<const Img&>(), std::declval<Img&>()));
  P p;
  AppData() : p(App::make(in, out)) {
    apps::fill_image(in, 7u);
    ref = App::ref(in, H, W);
  }
};
template <class App>
AppData<App>& data() {
  static AppData<App> d;
  return d;
}

template <class App>
void check_app(const std::string& name, AppData<App>& d) {
  const index_t bad = apps::mismatch(d.out, d.ref);
  if (bad >= 0)
    fail(name + ": point (" + std::to_string(bad / W) + ", " + std::to_string(bad % W) + ") is " +
         std::to_string(d.out.data()[bad]) + ", expected " + std::to_string(d.ref.value[std::size_t(bad)]));
}

/// Input and output once, at the app's element size.
template <class App>
constexpr double app_bytes() {
  return double(sizeof(typename App::value_type)) * double((H + App::pad) * (W + App::pad) + H * W);
}

/// The intermediate storage a loom schedule holds: its root stages' arena (as loom::plan_memory
/// plans it) plus the per-thread buffers of its stages computed at a loop (the scratch the team
/// holds after one run from none), measured in the checking run, per benchmark and thread count.
std::map<std::string, std::size_t>& loom_storage() {
  static std::map<std::string, std::size_t> m;
  return m;
}

/// One loom schedule of an app. per_thread: the bytes each thread should store (apps.hpp's
/// best/tuned_bytes_per_thread), checked against the scratch measured; null when not known.
template <class App, class Sched>
void loom_app(benchmark::State& st, const std::string& name, std::size_t (*per_thread)(index_t) = nullptr) {
  const int threads = use_threads(st);
  auto& d = data<App>();
  check_once(key(name, st), [&] {
    poison(d.out);
    team_release(threads);
    Sched::run(d.p);
    check_app(name, d);
    const std::size_t held = team_scratch(threads);
    if (per_thread && held != std::size_t(threads) * per_thread(W))
      std::fprintf(stderr, "bench_pipelines: note: %s at %d threads holds %zu bytes of scratch, apps.hpp says %zu\n", name.c_str(),
                   threads, held, std::size_t(threads) * per_thread(W));
    loom_storage()[key(name, st)] = Sched::memory(d.p).arena_bytes() + held;
  });
  for (auto _ : st) {
    Sched::run(d.p);
    touch(d.out.data());
  }
  set_counters(st, app_bytes<App>(), loom_storage()[key(name, st)]);
}

/// A hand-written implementation: fn(in, out) runs it, storage(threads) is its peak storage.
template <class App, class Fn, class Storage>
void hand_app(benchmark::State& st, const std::string& name, Fn fn, Storage storage_of) {
  const int threads = use_threads(st);
  auto& d = data<App>();
  check_once(key(name, st), [&] {
    poison(d.out);
    fn(d.in, d.out);
    check_app(name, d);
  });
  for (auto _ : st) {
    fn(d.in, d.out);
    touch(d.out.data());
  }
  set_counters(st, app_bytes<App>(), storage_of(threads));
}

/// A thread's grow-only buffer for the hand loops (kept from run to run, like loom's scratch).
template <class V = float>
V* thread_buffer(std::size_t n) {
  thread_local std::vector<V> b;
  if (b.size() < n) b.resize(n);
  return b.data();
}

// ---- blur by hand ----
constexpr index_t blur_strip = 128;  // rows per strip (2 rows of blur_x computed twice per strip)

void blur_fused(const T2& in, T2& out) {
  const float* src = in.data();
  float* dst = out.data();
  const index_t ws = W + 2;
#pragma omp parallel for schedule(static)
  for (index_t r0 = 0; r0 < H; r0 += blur_strip) {
    float* ring = thread_buffer(std::size_t(3 * W));  // blur_x rows r, r + 1, r + 2, at r % 3
    auto bx_row = [&](index_t r) {
      const float* a = src + r * ws;
      float* b = ring + (r % 3) * W;
#pragma omp simd
      for (index_t c = 0; c < W; ++c) b[c] = (a[c] + a[c + 1] + a[c + 2]) / 3.f;
    };
    const index_t r1 = std::min(H, r0 + blur_strip);
    bx_row(r0);
    bx_row(r0 + 1);
    for (index_t r = r0; r < r1; ++r) {
      bx_row(r + 2);
      const float *b0 = ring + (r % 3) * W, *b1 = ring + ((r + 1) % 3) * W, *b2 = ring + ((r + 2) % 3) * W;
      float* o = dst + r * W;
#pragma omp simd
      for (index_t c = 0; c < W; ++c) o[c] = (b0[c] + b1[c] + b2[c]) / 3.f;
    }
  }
}

struct Blur2Pass {
  std::vector<float> bx = std::vector<float>(std::size_t((H + 2) * W));
};
Blur2Pass& blur2() {
  static Blur2Pass d;
  return d;
}
void blur_2pass(const T2& in, T2& out) {
  const float* src = in.data();
  float* dst = out.data();
  float* bx = blur2().bx.data();
  const index_t ws = W + 2;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (index_t r = 0; r < H + 2; ++r) {
      const float* a = src + r * ws;
      float* b = bx + r * W;
#pragma omp simd
      for (index_t c = 0; c < W; ++c) b[c] = (a[c] + a[c + 1] + a[c + 2]) / 3.f;
    }
#pragma omp for schedule(static)
    for (index_t r = 0; r < H; ++r) {
      const float *b0 = bx + r * W, *b1 = b0 + W, *b2 = b1 + W;
      float* o = dst + r * W;
#pragma omp simd
      for (index_t c = 0; c < W; ++c) o[c] = (b0[c] + b1[c] + b2[c]) / 3.f;
    }
  }
}

// ---- blur_u16 by hand: the float loops in uint16 arithmetic (each sum wrapped to uint16, as the
// app's; C++ would add in int), / 3 as integer division ----
using u16 = std::uint16_t;
using T2u16 = apps::T2u16;

void blur_u16_fused(const T2u16& in, T2u16& out) {
  const u16* src = in.data();
  u16* dst = out.data();
  const index_t ws = W + 2;
#pragma omp parallel for schedule(static)
  for (index_t r0 = 0; r0 < H; r0 += blur_strip) {
    u16* ring = thread_buffer<u16>(std::size_t(3 * W));  // blur_x rows r, r + 1, r + 2, at r % 3
    auto bx_row = [&](index_t r) {
      const u16* a = src + r * ws;
      u16* b = ring + (r % 3) * W;
#pragma omp simd
      for (index_t c = 0; c < W; ++c) b[c] = u16(u16(a[c] + a[c + 1] + a[c + 2]) / 3);
    };
    const index_t r1 = std::min(H, r0 + blur_strip);
    bx_row(r0);
    bx_row(r0 + 1);
    for (index_t r = r0; r < r1; ++r) {
      bx_row(r + 2);
      const u16 *b0 = ring + (r % 3) * W, *b1 = ring + ((r + 1) % 3) * W, *b2 = ring + ((r + 2) % 3) * W;
      u16* o = dst + r * W;
#pragma omp simd
      for (index_t c = 0; c < W; ++c) o[c] = u16(u16(b0[c] + b1[c] + b2[c]) / 3);
    }
  }
}

struct BlurU16_2Pass {
  std::vector<u16> bx = std::vector<u16>(std::size_t((H + 2) * W));
};
BlurU16_2Pass& blur_u16_2() {
  static BlurU16_2Pass d;
  return d;
}
void blur_u16_2pass(const T2u16& in, T2u16& out) {
  const u16* src = in.data();
  u16* dst = out.data();
  u16* bx = blur_u16_2().bx.data();
  const index_t ws = W + 2;
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (index_t r = 0; r < H + 2; ++r) {
      const u16* a = src + r * ws;
      u16* b = bx + r * W;
#pragma omp simd
      for (index_t c = 0; c < W; ++c) b[c] = u16(u16(a[c] + a[c + 1] + a[c + 2]) / 3);
    }
#pragma omp for schedule(static)
    for (index_t r = 0; r < H; ++r) {
      const u16 *b0 = bx + r * W, *b1 = b0 + W, *b2 = b1 + W;
      u16* o = dst + r * W;
#pragma omp simd
      for (index_t c = 0; c < W; ++c) o[c] = u16(u16(b0[c] + b1[c] + b2[c]) / 3);
    }
  }
}

// ---- unsharp by hand: blur_y of row r is read by output row r only, so one row of storage ----
void unsharp_fused(const T2& in, T2& out) {
  const auto k = apps::unsharp::gaussian();
  const float w0 = float(k.w[0]), w1 = float(k.w[1]), w2 = float(k.w[2]);
  const float* src = in.data();
  float* dst = out.data();
  const index_t ws = W + 4;
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < H; ++r) {
    float* by = thread_buffer(std::size_t(ws));
    const float *a0 = src + r * ws, *a1 = a0 + ws, *a2 = a1 + ws, *a3 = a2 + ws, *a4 = a3 + ws;
#pragma omp simd
    for (index_t c = 0; c < ws; ++c) by[c] = w0 * a2[c] + w1 * (a1[c] + a3[c]) + w2 * (a0[c] + a4[c]);
    float* o = dst + r * W;
#pragma omp simd
    for (index_t c = 0; c < W; ++c)
      o[c] = 2.f * a2[c + 2] - (w0 * by[c + 2] + w1 * (by[c + 1] + by[c + 3]) + w2 * (by[c] + by[c + 4]));
  }
}

// ---- harris by hand: per strip, a ring of 3 rows of Ixx, Iyy, Ixy; their column sums; the output ----
constexpr index_t harris_strip = 128;
constexpr index_t harris_floats_per_thread = (3 * 3 + 3) * (W + 2);  // 3 rings of 3 rows + 3 column-sum rows

void harris_fused(const T2& in, T2& out) {
  using apps::harris;
  const float c1 = harris::c1, c2 = harris::c2, kappa = harris::kappa;
  const float* src = in.data();
  float* dst = out.data();
  const index_t ws = W + 4, wg = W + 2;
#pragma omp parallel for schedule(static)
  for (index_t r0 = 0; r0 < H; r0 += harris_strip) {
    float* buf = thread_buffer(std::size_t(harris_floats_per_thread));
    float *pxx = buf, *pyy = buf + 3 * wg, *pxy = buf + 6 * wg, *vxx = buf + 9 * wg, *vyy = vxx + wg, *vxy = vyy + wg;
    auto grad_row = [&](index_t q) {  // products of Ix, Iy at row q (centred on input row q + 1)
      const float *a0 = src + q * ws, *a1 = a0 + ws, *a2 = a1 + ws;
      float *xx = pxx + (q % 3) * wg, *yy = pyy + (q % 3) * wg, *xy = pxy + (q % 3) * wg;
#pragma omp simd
      for (index_t c = 0; c < wg; ++c) {
        const float iy = a0[c] * -c1 + a2[c] * c1 + a0[c + 1] * -c2 + a2[c + 1] * c2 + a0[c + 2] * -c1 + a2[c + 2] * c1;
        const float ix = a0[c] * -c1 + a0[c + 2] * c1 + a1[c] * -c2 + a1[c + 2] * c2 + a2[c] * -c1 + a2[c + 2] * c1;
        xx[c] = ix * ix, yy[c] = iy * iy, xy[c] = ix * iy;
      }
    };
    const index_t r1 = std::min(H, r0 + harris_strip);
    grad_row(r0);
    grad_row(r0 + 1);
    for (index_t r = r0; r < r1; ++r) {
      grad_row(r + 2);
      const index_t q0 = (r % 3) * wg, q1 = ((r + 1) % 3) * wg, q2 = ((r + 2) % 3) * wg;
#pragma omp simd
      for (index_t c = 0; c < wg; ++c) {
        vxx[c] = pxx[q0 + c] + pxx[q1 + c] + pxx[q2 + c];
        vyy[c] = pyy[q0 + c] + pyy[q1 + c] + pyy[q2 + c];
        vxy[c] = pxy[q0 + c] + pxy[q1 + c] + pxy[q2 + c];
      }
      float* o = dst + r * W;
#pragma omp simd
      for (index_t c = 0; c < W; ++c) {
        const float sxx = vxx[c] + vxx[c + 1] + vxx[c + 2], syy = vyy[c] + vyy[c + 1] + vyy[c + 2],
                    sxy = vxy[c] + vxy[c + 1] + vxy[c + 2];
        const float tr = sxx + syy;
        o[c] = sxx * syy - sxy * sxy - kappa * tr * tr;
      }
    }
  }
}

// ------------------------------------------------------------------------------------------
// softmax and layer norm, 4096 x 4096
// ------------------------------------------------------------------------------------------
constexpr loom::Func<float, 1, "m"> sm_m;
constexpr loom::Func<float, 2, "e"> sm_e;
constexpr loom::Func<float, 1, "s"> sm_s;
constexpr loom::Func<float, 1, "mean"> ln_mean;
constexpr loom::Func<float, 2, "d"> ln_d;
constexpr loom::Func<float, 1, "var"> ln_var;


enum class rowwise { softmax, layernorm };
enum class rowimpl { onedef, pipeline, pipeline_tuned, eigen, eigen_omp };

template <rowwise K, rowimpl I>
void rowwise_kernel(benchmark::State& st, const std::string& name) {
  const int threads = use_threads(st);
  auto& d = rows();
  auto& X = d.X;
  auto& Y = d.Y;
  const float inv_n = 1.f / float(NR);
  [[maybe_unused]] auto soft_p =
      loom::pipeline(sm_m(i) = maximum(k, X(i, k)), sm_e(i, j) = exp(X(i, j) - sm_m(i)), sm_s(i) = sum(k, sm_e(i, k)),
                     Y(i, j) = sm_e(i, j) / sm_s(i));
  [[maybe_unused]] auto norm_p =
      loom::pipeline(ln_mean(i) = sum(k, X(i, k)) * inv_n, ln_d(i, j) = X(i, j) - ln_mean(i),
                     ln_var(i) = sum(k, ln_d(i, k) * ln_d(i, k)) * inv_n, Y(i, j) = ln_d(i, j) / sqrt(ln_var(i) + ln_eps));
  using loom::compute_at;
  using loom::output;
  using loom::parallel;
  using loom::stage;
  using loom::vectorize;
  auto once = [&] {
    if constexpr (I == rowimpl::onedef && K == rowwise::softmax) {
      loom::run(Y(i, j) = exp(X(i, j) - maximum(k, X(i, k))) / sum(k, exp(X(i, k) - maximum(l, X(i, l)))));
    } else if constexpr (I == rowimpl::onedef) {
      loom::run(Y(i, j) = (X(i, j) - sum(k, X(i, k)) * inv_n) /
                          sqrt(sum(k, (X(i, k) - sum(l, X(i, l)) * inv_n) * (X(i, k) - sum(l, X(i, l)) * inv_n)) * inv_n + ln_eps));
    } else if constexpr (I == rowimpl::pipeline && K == rowwise::softmax) {
      loom::run<stage<sm_m, compute_at<output, i>>, stage<sm_e, compute_at<output, i>, vectorize<j>>, stage<sm_s, compute_at<output, i>>,
                stage<output, parallel<i>, vectorize<j>>>(soft_p);
    } else if constexpr (I == rowimpl::pipeline) {
      loom::run<stage<ln_mean, compute_at<output, i>>, stage<ln_d, compute_at<output, i>, vectorize<j>>,
                stage<ln_var, compute_at<output, i>>, stage<output, parallel<i>, vectorize<j>>>(norm_p);
    } else if constexpr (I == rowimpl::pipeline_tuned && K == rowwise::softmax) {
      // Strips of 8 rows (one set-up of each stage per strip; 128 KiB of X and e stay in L2): e,
      // the pass that computes most, asks meanwhile for the next strip's rows of X, so the
      // maximum's pass finds them in cache, and for the lines of Y the output pass will store
      // (prefetch_stores), so that their reads for ownership overlap the exponentials instead of
      // stalling the output's pass; the row reductions run their in-cache nest (four
      // accumulators a row) over the strip.
      loom::run<stage<sm_m, compute_at<output, loom::outer<i>>, vectorize<k>, loom::unroll<loom::outer<k>, 4>>,
                stage<sm_e, compute_at<output, loom::outer<i>>, vectorize<j>, loom::prefetch<i, 8, 0>, loom::prefetch_stores<output>>,
                stage<sm_s, compute_at<output, loom::outer<i>>, vectorize<k>, loom::unroll<loom::outer<k>, 4>>,
                stage<output, loom::split<i, 8>, parallel<loom::outer<i>>, vectorize<j>>>(soft_p);
    } else if constexpr (I == rowimpl::pipeline_tuned) {
      loom::run<stage<ln_mean, compute_at<output, loom::outer<i>>, vectorize<k>, loom::unroll<loom::outer<k>, 4>>,
                stage<ln_d, compute_at<output, loom::outer<i>>, vectorize<j>, loom::prefetch<i, 8, 0>>,
                stage<ln_var, compute_at<output, loom::outer<i>>, vectorize<k>, loom::unroll<loom::outer<k>, 4>>,
                stage<output, loom::split<i, 8>, parallel<loom::outer<i>>, vectorize<j>, loom::stream_stores<0>>>(norm_p);
    } else {
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
      using EMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      Eigen::Map<const EMat> EX(X.data(), NR, NR);
      Eigen::Map<EMat> EY(Y.data(), NR, NR);
      auto row = [&](index_t a) {
        if constexpr (K == rowwise::softmax) {
          const float mx = EX.row(a).maxCoeff();
          EY.row(a).array() = (EX.row(a).array() - mx).exp();
          EY.row(a) /= EY.row(a).sum();
        } else {
          const float mean = EX.row(a).mean();
          EY.row(a).array() = EX.row(a).array() - mean;
          const float var = EY.row(a).squaredNorm() * inv_n;
          EY.row(a) /= std::sqrt(var + ln_eps);
        }
      };
      if constexpr (I == rowimpl::eigen_omp) {
#pragma omp parallel for schedule(static)
        for (index_t a = 0; a < NR; ++a) row(a);
      } else {
        for (index_t a = 0; a < NR; ++a) row(a);
      }
#endif
    }
  };
  check_once(key(name, st), [&] {
    std::fill(Y.begin(), Y.end(), std::numeric_limits<float>::quiet_NaN());
    team_release(threads);
    once();
    loom_storage()[key(name, st)] = team_scratch(threads);  // loom's per-row stages
    const auto& ref = K == rowwise::softmax ? d.soft : d.norm;
    check_close(name, Y.data(), ref.data(), ref.size(), 1e-4, K == rowwise::softmax ? 1e-9 : 1e-5);
  });
  for (auto _ : st) {
    once();
    touch(Y.data());
  }
  set_counters(st, 2.0 * 4.0 * double(NR * NR), loom_storage()[key(name, st)]);
}

// ------------------------------------------------------------------------------------------
template <class F>
void reg(const std::string& name, F&& f) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(f))->Apply(thread_args);
}

template <class App, class Fn, class Storage>
void reg_app(Fn fused, Storage fused_storage) {
  const std::string a = App::name;
  reg(a + "/loom_best", [a](benchmark::State& st) { loom_app<App, typename App::best>(st, a + "/loom_best", App::best_bytes_per_thread); });
  reg(a + "/loom_tuned",
      [a](benchmark::State& st) { loom_app<App, typename App::tuned>(st, a + "/loom_tuned", App::tuned_bytes_per_thread); });
  reg(a + "/loom_root", [a](benchmark::State& st) { loom_app<App, typename App::root>(st, a + "/loom_root"); });
  reg(a + "/loom_default", [a](benchmark::State& st) { loom_app<App, apps::default_schedule>(st, a + "/loom_default"); });
  reg(a + "/hand_fused", [a, fused, fused_storage](benchmark::State& st) { hand_app<App>(st, a + "/hand_fused", fused, fused_storage); });
}

void register_all() {
  constexpr std::size_t f = sizeof(float);
  reg_app<apps::blur>(blur_fused, [](int t) { return std::size_t(t) * 3 * W * f; });
  reg("blur/hand_2pass", [](benchmark::State& st) {
    hand_app<apps::blur>(st, "blur/hand_2pass", blur_2pass, [](int) { return std::size_t((H + 2) * W) * f; });
  });
  reg_app<apps::blur_u16>(blur_u16_fused, [](int t) { return std::size_t(t) * 3 * W * sizeof(u16); });
  reg("blur_u16/hand_2pass", [](benchmark::State& st) {
    hand_app<apps::blur_u16>(st, "blur_u16/hand_2pass", blur_u16_2pass, [](int) { return std::size_t((H + 2) * W) * sizeof(u16); });
  });
  reg_app<apps::unsharp>(unsharp_fused, [](int t) { return std::size_t(t) * (W + 4) * f; });
  reg_app<apps::harris>(harris_fused, [](int t) { return std::size_t(t) * harris_floats_per_thread * f; });

  reg("softmax/loom_onedef", [](benchmark::State& st) { rowwise_kernel<rowwise::softmax, rowimpl::onedef>(st, "softmax/loom_onedef"); });
  reg("softmax/loom_pipeline", [](benchmark::State& st) { rowwise_kernel<rowwise::softmax, rowimpl::pipeline>(st, "softmax/loom_pipeline"); });
  reg("softmax/loom_pipeline_tuned",
      [](benchmark::State& st) { rowwise_kernel<rowwise::softmax, rowimpl::pipeline_tuned>(st, "softmax/loom_pipeline_tuned"); });
  reg("layernorm/loom_onedef", [](benchmark::State& st) { rowwise_kernel<rowwise::layernorm, rowimpl::onedef>(st, "layernorm/loom_onedef"); });
  reg("layernorm/loom_pipeline",
      [](benchmark::State& st) { rowwise_kernel<rowwise::layernorm, rowimpl::pipeline>(st, "layernorm/loom_pipeline"); });
  reg("layernorm/loom_pipeline_tuned",
      [](benchmark::State& st) { rowwise_kernel<rowwise::layernorm, rowimpl::pipeline_tuned>(st, "layernorm/loom_pipeline_tuned"); });
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  reg("softmax/eigen", [](benchmark::State& st) { rowwise_kernel<rowwise::softmax, rowimpl::eigen>(st, "softmax/eigen"); });
  reg("softmax/eigen_omp", [](benchmark::State& st) { rowwise_kernel<rowwise::softmax, rowimpl::eigen_omp>(st, "softmax/eigen_omp"); });
  reg("layernorm/eigen", [](benchmark::State& st) { rowwise_kernel<rowwise::layernorm, rowimpl::eigen>(st, "layernorm/eigen"); });
  reg("layernorm/eigen_omp",
      [](benchmark::State& st) { rowwise_kernel<rowwise::layernorm, rowimpl::eigen_omp>(st, "layernorm/eigen_omp"); });
#endif
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("loom_simd_width_float", std::to_string(loom::simd::native_width<float>));
  benchmark::AddCustomContext("loom_simd_width_uint16", std::to_string(loom::simd::native_width<std::uint16_t>));
  benchmark::AddCustomContext("image", std::to_string(W) + "x" + std::to_string(H));
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  benchmark::AddCustomContext("eigen", "yes");
#else
  benchmark::AddCustomContext("eigen", "no");
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
