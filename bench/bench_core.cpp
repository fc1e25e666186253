// bench/bench_core.cpp — loom's core kernels against a copy, plain loops, Eigen 3.4 and xtensor
// 0.24, every one at 1 and 2 OpenMP threads, all in one run (so every ratio compares numbers
// taken minutes apart on the same machine state).
//
//   copy_16M, copy_4096x4096   the reference bandwidth: loom out = x, std::memcpy, an OpenMP
//                              memcpy in one chunk per thread, a plain loop. "% of copy" is
//                              against the best of these at the same (or a lower) thread count.
//                              copy_16M/nt_stores (streaming stores by hand) counts too.
//   fused_16M                  out(i) = max(a * x(i) + b, 0) * sigmoid(c(i)); bytes 3 * 4 * N.
//   add_16M                    out(i) = x(i) + c(i): the fused chain's bytes without its math.
//   rowsum_4096, colsum_4096   rs(i) = sum(j, X(i, j)), cs(j) = sum(i, X(i, j)); bytes 4 * M * N.
//   rowsum_65536x256, ...      the same sums over the same 64 MiB seen as 65536 rows of 256: rows
//                              too short to stream 8 at once (the default picks other nests).
//   colsum_8x2097152           ... and as 8 rows of 2M: too few rows for chunks of rows.
//   rowsum_512x256             the first 512 KiB as 512 rows of 256: a row sum in cache.
//   read_4096x4096/xsimd       the read roof of the sums: the same bytes summed by a hand-written
//                              xsimd loop (4 accumulators, OpenMP over rows). A sum only reads, a
//                              copy reads and writes; with streaming stores one core can move more
//                              bytes copying than it can read alone, so the sums are reported
//                              against both.
//   rowwise_<f>_<layout>       s(i) = sum(j, f(X(i, j), v(i))) over 4096 x 4096, f = exp(x - v),
//                              x * v, max(x, v); X row-major (rm) or column-major (cm, a view with
//                              strides (1, 4096)); the default against hand schedules. Bytes 4 * N^2.
//   transpose_8192             T(j, i) = X(i, j); bytes 2 * 4 * N^2.
//   gemm_512                   C(i, j) = sum(k, A(i, k) * B(k, j)); 2 * M * N * K flops.
//
// Names are <kernel>/<implementation>/threads:<T>; implementations start with loom_, eigen,
// xtensor, plain, memcpy. Counters: "GB/s" (10^9 B/s, wall clock) or "GFLOP/s".
// Every kernel's result is checked once per thread count against a plain loop before it is timed
// (a wrong result aborts the run).
//
// Run it as bench/run.sh does:
//   bench_core --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// and read the medians: the machine is shared and noisy.
//
// Build by hand: g++ -std=c++20 -O3 -march=native -fopenmp -DNDEBUG -Iinclude
//   [-DLOOM_HAVE_EIGEN=1 -I/usr/include/eigen3] [-DLOOM_HAVE_XTENSOR=1] bench/bench_core.cpp
//   -lbenchmark -lpthread

#include "bench_common.hpp"

#include <loom/loom.hpp>
#include <loom/simd/math.hpp>    // times_sigmoid, for the fused_16M/xsimd_loom_math diagnostic
#include <loom/simd/stream.hpp>  // store_stream, for the streaming copy and xsimd_loom_math_nt

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#if defined(LOOM_HAVE_XTENSOR) && LOOM_HAVE_XTENSOR
// xtensor at its best: xsimd batches for its assignments, and OpenMP for linear assignments
// (XTENSOR_USE_OPENMP, documented in xtensor's build options), so it too runs on 2 threads.
#ifndef XTENSOR_USE_XSIMD
#define XTENSOR_USE_XSIMD 1
#endif
#ifndef XTENSOR_USE_OPENMP
#define XTENSOR_USE_OPENMP 1
#endif
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wdeprecated-copy"
#pragma GCC diagnostic ignored "-Wsign-compare"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xtensor.hpp>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif

namespace {

using namespace loom::vars;
using loom::index_t;
using namespace loom_bench;

#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
constexpr bool have_eigen = true;
using EMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
#else
constexpr bool have_eigen = false;
#endif
#if defined(LOOM_HAVE_XTENSOR) && LOOM_HAVE_XTENSOR
constexpr bool have_xtensor = true;
#else
constexpr bool have_xtensor = false;
#endif

constexpr index_t N1 = index_t{1} << 24;  // 16M floats, 64 MiB per array
constexpr index_t M2 = 4096;              // 4096 x 4096 floats, 64 MiB
constexpr index_t MT = 8192;              // 8192 x 8192 floats, 256 MiB per matrix
constexpr index_t MG = 512;               // 512^3 contraction
constexpr index_t W = index_t(loom::simd::native_width<float>);  // 16 with AVX-512

constexpr float fa = 1.5f, fb = -0.25f;  // out = max(a * x + b, 0) * sigmoid(c)

template <class T>
void poison(T* p, std::size_t n) {  // a kernel that misses a point leaves a NaN there
  std::fill(p, p + n, std::numeric_limits<T>::quiet_NaN());
}

// ------------------------------------------------------------------------------------------
// Data: built once, on first use, shared by every implementation of a kernel.
// ------------------------------------------------------------------------------------------
struct VecData {
  loom::Tensor<float, 1> x{"x", N1}, c{"c", N1}, out{"out", N1};
  std::vector<float> fused_ref;
  VecData() {
    fill_random(x.data(), N1, 1u, -1.f, 1.f);
    fill_random(c.data(), N1, 2u, -4.f, 4.f);
    fused_ref.resize(N1);
    for (index_t q = 0; q < N1; ++q)
      fused_ref[q] = std::max(fa * x(q) + fb, 0.f) * (1.f / (1.f + std::exp(-c(q))));
  }
};
VecData& vec() {
  static VecData d;
  return d;
}

/// Row and column sums of a rows x cols row-major matrix in double, and the sums of magnitudes
/// that scale the check's tolerance.
struct SumReference {
  std::vector<double> rs_ref, cs_ref, rs_scale, cs_scale;
  SumReference(const float* x, index_t rows, index_t cols)
      : rs_ref(std::size_t(rows)), cs_ref(std::size_t(cols)), rs_scale(std::size_t(rows)), cs_scale(std::size_t(cols)) {
    for (index_t r = 0; r < rows; ++r)
      for (index_t q = 0; q < cols; ++q) {
        const double v = x[r * cols + q];
        rs_ref[r] += v, cs_ref[q] += v, rs_scale[r] += std::abs(v), cs_scale[q] += std::abs(v);
      }
  }
};

struct MatData {  // 4096 x 4096: copies, row and column sums
  loom::Tensor<float, 2> X{"X", M2, M2}, out{"out", M2, M2};
  loom::Tensor<float, 1> rs{"rs", M2}, cs{"cs", M2};
  SumReference sums{filled(X), M2, M2};
  static const float* filled(loom::Tensor<float, 2>& x) {
    fill_random(x.data(), M2 * M2, 3u, -1.f, 1.f);
    return x.data();
  }
};
MatData& mat() {
  static MatData d;
  return d;
}

struct TransposeData {
  loom::Tensor<float, 2> X{"X", MT, MT}, T{"T", MT, MT};
  TransposeData() { fill_random(X.data(), MT * MT, 4u, -1.f, 1.f); }
};
TransposeData& tr() {
  static TransposeData d;
  return d;
}

struct GemmData {
  loom::Tensor<float, 2> A{"A", MG, MG}, B{"B", MG, MG}, C{"C", MG, MG};
  std::vector<double> ref, scale;
  GemmData() {
    fill_random(A.data(), MG * MG, 5u, -1.f, 1.f);
    fill_random(B.data(), MG * MG, 6u, -1.f, 1.f);
    ref.assign(MG * MG, 0.0), scale.assign(MG * MG, 0.0);
    for (index_t r = 0; r < MG; ++r)
      for (index_t kk = 0; kk < MG; ++kk) {
        const double av = A(r, kk);
        for (index_t q = 0; q < MG; ++q) {
          ref[r * MG + q] += av * B(kk, q);
          scale[r * MG + q] += std::abs(av * B(kk, q));
        }
      }
  }
};
GemmData& gemm() {
  static GemmData d;
  return d;
}

// ------------------------------------------------------------------------------------------
// copy
// ------------------------------------------------------------------------------------------
/// This thread's contiguous share [first, second) of n points (starts on 16-point boundaries).
std::pair<index_t, index_t> thread_share(index_t n) {
  const index_t t = omp_get_thread_num(), nt = omp_get_num_threads();
  return {n * t / nt / 16 * 16, t + 1 == nt ? n : n * (t + 1) / nt / 16 * 16};
}

void memcpy_chunks(float* dst, const float* src, index_t n) {  // one contiguous chunk per thread
#pragma omp parallel
  {
    const auto [lo, hi] = thread_share(n);
    std::memcpy(dst + lo, src + lo, sizeof(float) * static_cast<std::size_t>(hi - lo));
  }
}

// Non-temporal copy: xsimd loads, streaming stores, one contiguous chunk per thread: what a copy
// costs without reading the destination first. Part of the copy reference (the best of loom /
// memcpy / OpenMP memcpy / plain / this).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
void copy_nt(float* dst, const float* src, index_t n) {
  using B = loom::simd::batch<float, std::size_t(W)>;
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (index_t q = 0; q < n; q += W) loom::simd::store_stream(dst + q, B::load_aligned(src + q));
    loom::simd::stream_fence();  // each thread orders its own streaming stores
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

enum class copy_impl { loom, memcpy, memcpy_omp, plain, nt };

template <copy_impl Impl, class Src, class Dst>
void copy_kernel(const char* name, benchmark::State& st, Src& src, Dst& dst) {
  use_threads(st);
  const index_t n = src.size();
  float* d = dst.data();
  const float* s = src.data();
  auto once = [&] {
    if constexpr (Impl == copy_impl::loom) {
      if constexpr (Src::rank == 1) loom::run(dst(i) = src(i));
      else loom::run(dst(i, j) = src(i, j));
    } else if constexpr (Impl == copy_impl::memcpy) {
      std::memcpy(d, s, sizeof(float) * static_cast<std::size_t>(n));
    } else if constexpr (Impl == copy_impl::memcpy_omp) {
      memcpy_chunks(d, s, n);
    } else if constexpr (Impl == copy_impl::nt) {
      copy_nt(d, s, n);
    } else {
#pragma omp parallel for schedule(static)
      for (index_t q = 0; q < n; ++q) d[q] = s[q];
    }
  };
  check_once(key(name, st), [&] {
    poison(d, static_cast<std::size_t>(n));
    once();
    check_close(name, d, s, static_cast<std::size_t>(n), 0.0, 0.0);
  });
  for (auto _ : st) {
    once();
    touch(d);
  }
  set_bytes(st, 2.0 * 4.0 * double(n));
}

// ------------------------------------------------------------------------------------------
// fused elementwise: out(i) = max(a * x(i) + b, 0) * sigmoid(c(i))
// ------------------------------------------------------------------------------------------
constexpr double fused_bytes = 3.0 * 4.0 * double(N1);

void fused_check(const std::string& name, const float* out) {
  check_close(name, out, vec().fused_ref.data(), static_cast<std::size_t>(N1), 1e-5, 1e-6);
}

template <class S>
void fused_loom(benchmark::State& st, const char* name) {
  use_threads(st);
  auto& d = vec();
  const auto def = (d.out(i) = max(fa * d.x(i) + fb, 0.f) * sigmoid(d.c(i)));
  check_once(key(name, st), [&] {
    poison(d.out.data(), N1);
    loom::run<S>(def);
    fused_check(name, d.out.data());
  });
  for (auto _ : st) {
    loom::run<S>(def);
    touch(d.out.data());
  }
  set_bytes(st, fused_bytes);
}

// The roof of the fused chain's memory traffic: the same two reads and one write with no math,
// out(i) = x(i) + c(i), loom's default (checked against a plain loop).
void add_loom(benchmark::State& st) {
  use_threads(st);
  auto& d = vec();
  const auto def = (d.out(i) = d.x(i) + d.c(i));
  check_once(key("add_16M/loom_default", st), [&] {
    poison(d.out.data(), N1);
    loom::run(def);
    std::vector<float> ref(static_cast<std::size_t>(N1));
    for (index_t q = 0; q < N1; ++q) ref[std::size_t(q)] = d.x.data()[q] + d.c.data()[q];
    check_close("add_16M/loom_default", d.out.data(), ref.data(), static_cast<std::size_t>(N1), 0, 0);
  });
  for (auto _ : st) {
    loom::run(def);
    touch(d.out.data());
  }
  set_bytes(st, fused_bytes);
}

// In cache: the same two kernels over 2^18 floats (3 MiB with the output: in L3, beyond L2), where
// the 1-D default keeps its small blocks and reads nothing ahead. Checked against plain loops.
constexpr index_t NS = index_t{1} << 18;
struct SmallVecData {
  loom::Tensor<float, 1> x{"x", NS}, c{"c", NS}, out{"out", NS};
  SmallVecData() {
    fill_random(x.data(), NS, 3u, -1.f, 1.f);
    fill_random(c.data(), NS, 4u, -4.f, 4.f);
  }
};
SmallVecData& small_vec() {
  static SmallVecData d;
  return d;
}

template <bool Fused>
void in_cache_loom(benchmark::State& st, const char* name) {
  use_threads(st);
  auto& d = small_vec();
  auto once = [&] {
    if constexpr (Fused) loom::run(d.out(i) = max(fa * d.x(i) + fb, 0.f) * sigmoid(d.c(i)));
    else loom::run(d.out(i) = d.x(i) + d.c(i));
  };
  check_once(key(name, st), [&] {
    poison(d.out.data(), NS);
    once();
    std::vector<float> ref(static_cast<std::size_t>(NS));
    for (index_t q = 0; q < NS; ++q)
      ref[std::size_t(q)] = Fused ? std::max(fa * d.x(q) + fb, 0.f) * (1.f / (1.f + std::exp(-d.c(q)))) : d.x(q) + d.c(q);
    check_close(name, d.out.data(), ref.data(), static_cast<std::size_t>(NS), Fused ? 1e-5 : 0, Fused ? 1e-6 : 0);
  });
  for (auto _ : st) {
    once();
    touch(d.out.data());
  }
  set_bytes(st, 3.0 * 4.0 * double(NS));
}

// The schedule from loom's documentation, and the same with four vectors per loop step.
using FusedHand = loom::schedule<loom::split<i, 8192>, loom::vectorize<loom::inner<i>>, loom::parallel<loom::outer<i>>>;
// Four parts of each block of 4 x 65808 floats read at once (interleave<4>; see docs/design.md).
using FusedInterleave4 = loom::schedule<loom::split<i, 4 * 65808>, loom::vectorize<loom::inner<i>>, loom::parallel<loom::outer<i>>,
                                        loom::prefetch<i, 512>, loom::stream_stores<>, loom::interleave<4>>;
using FusedHandU4 = loom::schedule<loom::split<i, 8192>, loom::vectorize<loom::inner<i>>,
                                   loom::unroll<loom::outer<loom::inner<i>>, 4>, loom::parallel<loom::outer<i>>>;

void fused_plain(benchmark::State& st) {
  use_threads(st);
  auto& d = vec();
  const float* x = d.x.data();
  const float* c = d.c.data();
  float* o = d.out.data();
  auto once = [&] {
#pragma omp parallel for schedule(static)
    for (index_t q = 0; q < N1; ++q) o[q] = std::max(fa * x[q] + fb, 0.f) * (1.f / (1.f + std::exp(-c[q])));
  };
  check_once(key("fused_16M/plain", st), [&] {
    poison(o, N1);
    once();
    fused_check("fused_16M/plain", o);
  });
  for (auto _ : st) {
    once();
    touch(o);
  }
  set_bytes(st, fused_bytes);
}

// Diagnostic, not a library: the same math as loom (loom::simd::times_sigmoid, xsimd batches of
// the native width) in a hand-written loop with plain pointers. The gap between this and
// loom_default is what loom's emitted loop costs on top of its math. The _nt variant stores with
// non-temporal (streaming) stores: the output's lines are not read before they are written, so
// the memory traffic is the 12 bytes per point counted here instead of 16. The _nt_ahead variant
// also reads both inputs 2 KiB ahead into L2, once per cache line, as loom's default does;
// _Nstreams reads each thread's share as N far-apart parts at once (not yet a loom schedule).
// (GCC 12 reports a false -Wmaybe-uninitialized from its AVX-512 intrinsic headers along the
// inlining stack, i.e. here; loom silences it the same way around its own loop nests.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
template <bool Streaming, bool Ahead = false, int Streams = 1>
void fused_xsimd(benchmark::State& st, const char* name) {
  use_threads(st);
  auto& d = vec();
  using B = loom::simd::batch<float, std::size_t(W)>;
  const float* x = d.x.data();
  const float* c = d.c.data();
  float* o = d.out.data();
  auto once = [&] {
    const B va(fa), vb(fb), zero(0.f);
#pragma omp parallel
    {
      // Local copies: xsimd's stores may alias anything, so pointers read through the lambda's
      // captures would be reloaded after every store (a fifth slower, Zen 3).
      const float* const xl = x;
      const float* const cl = c;
      float* const ol = o;
      auto point = [&](index_t q) LOOM_LAMBDA_INLINE {
        if constexpr (Ahead) {
          if (q % (64 / index_t(sizeof(float))) == 0) {  // once per line (folds away when W is a line)
            loom::simd::prefetch_l2(xl + q, 2048 / index_t(sizeof(float)));
            loom::simd::prefetch_l2(cl + q, 2048 / index_t(sizeof(float)));
          }
        }
        const B v = loom::simd::times_sigmoid(xsimd::max(loom::simd::fma(va, B::load_aligned(xl + q), vb), zero), B::load_aligned(cl + q));
        if constexpr (Streaming) loom::simd::store_stream(ol + q, v);
        else v.store_aligned(ol + q);
      };
      if constexpr (Streams == 1) {
#pragma omp for schedule(static) nowait
        for (index_t q = 0; q < N1; q += W) point(q);
      } else {
        // Each thread's share read as Streams parts at once, a vector from each in turn: more
        // streams in flight for the hardware prefetchers. The parts are 17 lines short of an
        // equal split, so their starts are not a power of two apart (same cache sets: 17 % of
        // copy); the rest follows part by part.
        const auto [lo, hi] = thread_share(N1);
        const index_t part = std::max<index_t>(0, ((hi - lo) / Streams / 16 - 17) * 16);
        for (index_t q = 0; q < part; q += W)
          for (int k = 0; k < Streams; ++k) point(lo + k * part + q);
        for (index_t q = lo + Streams * part; q < hi; q += W) point(q);
      }
      if constexpr (Streaming) loom::simd::stream_fence();
    }
  };
  static_assert(N1 % W == 0, "fused_xsimd assumes whole vectors");
  check_once(key(name, st), [&] {
    poison(o, N1);
    once();
    fused_check(name, o);
  });
  for (auto _ : st) {
    once();
    touch(o);
  }
  set_bytes(st, fused_bytes);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
struct EigenVec {
  Eigen::ArrayXf x, c, out;
  EigenVec() : x(N1), c(N1), out(N1) {
    std::memcpy(x.data(), vec().x.data(), sizeof(float) * N1);
    std::memcpy(c.data(), vec().c.data(), sizeof(float) * N1);
  }
};
EigenVec& evec() {
  static EigenVec d;
  return d;
}

// Eigen's own behaviour: a coefficient-wise expression runs on one thread whatever setNbThreads says.
void fused_eigen(benchmark::State& st) {
  use_threads(st);
  auto& d = evec();
  auto once = [&] { d.out = (fa * d.x + fb).max(0.f) * (1.f / (1.f + (-d.c).exp())); };
  check_once(key("fused_16M/eigen", st), [&] {
    poison(d.out.data(), N1);
    once();
    fused_check("fused_16M/eigen", d.out.data());
  });
  for (auto _ : st) {
    once();
    touch(d.out.data());
  }
  set_bytes(st, fused_bytes);
}

// The same expression on one contiguous segment per OpenMP thread: what a user would write to get
// Eigen onto both cores (the strongest Eigen baseline at 2 threads).
void fused_eigen_omp(benchmark::State& st) {
  use_threads(st);
  auto& d = evec();
  auto once = [&] {
#pragma omp parallel
    {
      const auto [lo, hi] = thread_share(N1);
      const index_t n = hi - lo;
      d.out.segment(lo, n) = (fa * d.x.segment(lo, n) + fb).max(0.f) * (1.f / (1.f + (-d.c.segment(lo, n)).exp()));
    }
  };
  check_once(key("fused_16M/eigen_omp", st), [&] {
    poison(d.out.data(), N1);
    once();
    fused_check("fused_16M/eigen_omp", d.out.data());
  });
  for (auto _ : st) {
    once();
    touch(d.out.data());
  }
  set_bytes(st, fused_bytes);
}
#endif

#if defined(LOOM_HAVE_XTENSOR) && LOOM_HAVE_XTENSOR
struct XtVec {
  xt::xtensor<float, 1> x, c, out;
  XtVec() : x(std::array<std::size_t, 1>{std::size_t(N1)}), c(x.shape()), out(x.shape()) {
    std::memcpy(x.data(), vec().x.data(), sizeof(float) * N1);
    std::memcpy(c.data(), vec().c.data(), sizeof(float) * N1);
  }
};
XtVec& xvec() {
  static XtVec d;
  return d;
}

void fused_xtensor(benchmark::State& st) {
  use_threads(st);
  auto& d = xvec();
  auto once = [&] { xt::noalias(d.out) = xt::maximum(fa * d.x + fb, 0.f) * (1.f / (1.f + xt::exp(-d.c))); };
  check_once(key("fused_16M/xtensor", st), [&] {
    poison(d.out.data(), N1);
    once();
    fused_check("fused_16M/xtensor", d.out.data());
  });
  for (auto _ : st) {
    once();
    touch(d.out.data());
  }
  set_bytes(st, fused_bytes);
}
#endif

// ------------------------------------------------------------------------------------------
// row and column sums of a 4096 x 4096 row-major matrix
// ------------------------------------------------------------------------------------------
constexpr double sum_bytes = 4.0 * double(M2) * double(M2);

void rowsum_check(const std::string& name, const float* rs) {
  check_close(name, rs, mat().sums.rs_ref.data(), M2, 1e-5, 1e-6, mat().sums.rs_scale.data());
}
void colsum_check(const std::string& name, const float* cs) {
  check_close(name, cs, mat().sums.cs_ref.data(), M2, 1e-5, 1e-6, mat().sums.cs_scale.data());
}

/// The read roof: every element of X once, as fast as a hand-written loop reads it.
void read_xsimd(benchmark::State& st) {
  use_threads(st);
  auto& d = mat();
  using B = loom::simd::batch<float, std::size_t(W)>;
  const float* x = d.X.data();
  static_assert(M2 % (4 * W) == 0, "read_xsimd assumes whole groups of 4 vectors per row");
  auto once = [&] {
    double total = 0;  // (the rows' sums in double: the check compares with a double reference)
#pragma omp parallel for schedule(static) reduction(+ : total)
    for (index_t r = 0; r < M2; ++r) {
      const float* row = x + r * M2;
      B s0(0.f), s1(0.f), s2(0.f), s3(0.f);
      for (index_t q = 0; q < M2; q += 4 * W) {
        s0 += B::load_aligned(row + q);
        s1 += B::load_aligned(row + q + W);
        s2 += B::load_aligned(row + q + 2 * W);
        s3 += B::load_aligned(row + q + 3 * W);
      }
      total += double(xsimd::hadd((s0 + s1) + (s2 + s3)));
    }
    return total;
  };
  check_once(key("read_4096x4096/xsimd", st), [&] {
    double want = 0, scale = 0;
    for (index_t r = 0; r < M2; ++r) {
      want += double(mat().sums.rs_ref[std::size_t(r)]);
      scale += double(mat().sums.rs_scale[std::size_t(r)]);
    }
    const double got = once();
    check_close("read_4096x4096/xsimd", &got, &want, 1, 1e-5, 1e-6, &scale);
  });
  for (auto _ : st) benchmark::DoNotOptimize(once());
  set_bytes(st, sum_bytes);
}

// The same bytes seen as Rows rows (65536 of 256 floats: tall and skinny; 8 of 2M floats: few
// rows), or the first Rows x Cols of them (512 x 256: 512 KiB, a run in cache), with their own
// references.
template <index_t Rows, index_t Cols = M2 * M2 / Rows>
struct Reshaped {
  static constexpr index_t rows = Rows, cols = Cols;
  static constexpr double bytes = 4.0 * double(Rows) * double(Cols);
  loom::TensorView<float, 2, loom::dims<2>, loom::layout_right> X = loom::view(mat().X.data(), loom::shape(rows, cols), "X");
  loom::Tensor<float, 1> rs{"rs", rows}, cs{"cs", cols};
  SumReference sums{mat().X.data(), rows, cols};
};
Reshaped<65536>& tall() {
  static Reshaped<65536> d;
  return d;
}
Reshaped<8>& few() {
  static Reshaped<8> d;
  return d;
}
Reshaped<512, 256>& in_cache() {
  static Reshaped<512, 256> d;
  return d;
}
/// The bytes a sum over Data's matrix reads.
template <class D>
constexpr double bytes_of() {
  if constexpr (requires { D::bytes; }) return D::bytes;
  else return sum_bytes;
}

/// Row sums (Rows) or column sums of Data().X (mat or tall) under schedule S, checked once.
template <auto Data, bool Rows, class S>
void sums_loom(benchmark::State& st, const char* name) {
  use_threads(st);
  auto& d = Data();
  auto& out = Rows ? d.rs : d.cs;
  const auto def = [&] {
    if constexpr (Rows) return d.rs(i) = sum(j, d.X(i, j));
    else return d.cs(j) = sum(i, d.X(i, j));
  }();
  check_once(key(name, st), [&] {
    poison(out.data(), std::size_t(out.size()));
    loom::run<S>(def);
    check_close(name, out.data(), (Rows ? d.sums.rs_ref : d.sums.cs_ref).data(), std::size_t(out.size()), 1e-5, 1e-6,
                (Rows ? d.sums.rs_scale : d.sums.cs_scale).data());
  });
  for (auto _ : st) {
    loom::run<S>(def);
    touch(out.data());
  }
  set_bytes(st, bytes_of<std::remove_cvref_t<decltype(d)>>());
}

using namespace loom;  // the schedule vocabulary below

// Row sums: R rows at once (R independent accumulators, R streams), lanes along j.
template <index_t R>
using RowsBlock = schedule<split<i, R>, vectorize<j>, reorder<outer<i>, outer<j>, inner<i>, inner<j>>,
                           parallel<outer<i>>>;
// ... and two vectors per row per step (2R accumulators).
template <index_t R>
using RowsBlockU2 = schedule<split<i, R>, vectorize<j>, split<outer<j>, 2>,
                             reorder<outer<i>, outer<outer<j>>, inner<i>, inner<outer<j>>, inner<j>>, parallel<outer<i>>>;

// ... R rows at once, each also read 2 KiB ahead into L2 once the matrix outgrows the cache.
template <index_t R>
using RowsBlockPrefetch = schedule<split<i, R>, vectorize<j>, reorder<outer<i>, outer<j>, inner<i>, inner<j>>,
                                   parallel<outer<i>>, prefetch<j, 512>>;

// Column sums as the default streams rows: chunks of Chunk rows in parallel, 8 rows folded in
// registers per output vector, then Extra directives.
template <index_t Chunk, class... Extra>
using ColsRowsStreamed = schedule<split<i, Chunk>, unroll<inner<i>, 8>, reorder<outer<i>, outer<inner<i>>, j, inner<inner<i>>>,
                                  vectorize<j>, parallel<outer<i>>, Extra...>;
// The default's nest for many rows without its prefetch<>.
using ColsRowsStreamedNoPrefetch = ColsRowsStreamed<256>;
// ... read ahead 2 KiB along the rows once the matrix outgrows the cache (the default before it
// chose by row length).
using ColsRowsStreamedPrefetch = ColsRowsStreamed<256, prefetch<j, 512>>;
// ... in chunks of 64 rows (the default for fewer than 512 rows; fewer than 64 are one chunk).
using ColsOneChunk = ColsRowsStreamed<64, prefetch<j, 512>>;
// Column sums, output as accumulator (the brief's reorder<i, j> + vectorize<j>): for each row,
// cs(j) += X(i, j) over the whole row. loom cannot run it in parallel: the only pure loop outside
// the reduction would be a split of j, whose vectorized inner loop then has a constant trip count,
// which turns the plan into register accumulators (ColsStrip below).
using ColsIntoOutput = schedule<reorder<i, j>, vectorize<j>>;
// Strips of V vectors of columns in parallel, i inside the strip loop: V vector accumulators per
// strip (V = 64, the most loom allows: more than the registers, so they live on the stack in L1).
template <index_t V>
using ColsStrip = schedule<split<j, V * W>, reorder<outer<j>, i, inner<j>>, vectorize<inner<j>>, parallel<outer<j>>>;
// Column sums, V vector accumulators in registers per strip of V * W columns, i inside the strip
// loop: the strip's partial sums never leave registers (V = 16 is loom's default since it gained
// red_block_1d). Written split-first: split<j, V * W>, then split the inner loop by W.
template <index_t V>
using ColsRegisters = schedule<split<j, V * W>, split<inner<j>, W>, vectorize<inner<inner<j>>>,
                               reorder<outer<j>, i, outer<inner<j>>, inner<inner<j>>>, parallel<outer<j>>>;
// The same nest as ColsRegisters<16>, written vectorize-first (split<j, W>, vectorize, then split
// outer<j> by V): loom then picks guard/masked tails instead of shift_inwards; kept to show the cost.
template <index_t V>
using ColsRegistersVecFirst = schedule<split<j, W>, vectorize<inner<j>>, split<outer<j>, V>,
                                       reorder<outer<outer<j>>, i, inner<outer<j>>, inner<j>>, parallel<outer<outer<j>>>>;
// A deterministic parallel reduction over i: chunks of 512 rows reduce into partial sums that are
// combined in chunk order (parallel<outer<i>>), 16 vector accumulators per strip inside a chunk.
using ColsChunked = schedule<split<i, 512>, split<j, 16 * W>, split<inner<j>, W>, vectorize<inner<inner<j>>>,
                             reorder<outer<i>, outer<j>, inner<i>, outer<inner<j>>, inner<inner<j>>>, parallel<outer<i>>>;

// ------------------------------------------------------------------------------------------
// row-wise s(i) = sum(j, f(X(i, j), v(i))) of mat().X, row-major and as a column-major copy
// ------------------------------------------------------------------------------------------
enum class rowfn { exp_diff, product, maximum };

struct RowwiseData {
  loom::Tensor<float, 1> v{"v", M2}, s{"s", M2};
  loom::Tensor<float, 2> cm_store{"Xcm", M2, M2};  // X's elements column by column
  loom::TensorView<float, 2> Xcm = loom::view(cm_store.data(), loom::shape(M2, M2), loom::strides(1, M2), "Xcm");
  std::array<std::vector<double>, 3> ref, scale;
  RowwiseData() {
    fill_random(v.data(), M2, 5u, 0.f, 1.f);
    const float* x = mat().X.data();
    for (index_t r = 0; r < M2; ++r)
      for (index_t q = 0; q < M2; ++q) cm_store.data()[q * M2 + r] = x[r * M2 + q];
    for (auto& w : ref) w.assign(std::size_t(M2), 0.0);
    for (auto& w : scale) w.assign(std::size_t(M2), 0.0);
    for (index_t r = 0; r < M2; ++r)
      for (index_t q = 0; q < M2; ++q) {
        const double e = x[r * M2 + q], vr = v(r);
        const double f[3] = {std::exp(e - vr), e * vr, std::max(e, vr)};
        for (std::size_t k = 0; k < 3; ++k) ref[k][std::size_t(r)] += f[k], scale[k][std::size_t(r)] += std::abs(f[k]);
      }
  }
};
RowwiseData& rowwise() {
  static RowwiseData d;
  return d;
}

/// s(i) = sum(j, f(X(i, j), v(i))) with X row-major (a loom::Tensor) or column-major (a view),
/// under schedule S, checked once.
template <rowfn F, bool ColMajor, class S>
void rowwise_loom(benchmark::State& st, const char* name) {
  use_threads(st);
  auto& d = rowwise();
  auto& s = d.s;
  auto& v = d.v;
  const auto def = [&](const auto& X) {
    if constexpr (F == rowfn::exp_diff) return s(i) = sum(j, loom::exp(X(i, j) - v(i)));
    else if constexpr (F == rowfn::product) return s(i) = sum(j, X(i, j) * v(i));
    else return s(i) = sum(j, loom::max(X(i, j), v(i)));
  };
  auto once = [&] {
    if constexpr (ColMajor) loom::run<S>(def(d.Xcm));
    else loom::run<S>(def(mat().X));
  };
  check_once(key(name, st), [&] {
    poison(s.data(), std::size_t(M2));
    once();
    // (1e-4: a lane that sums a whole row of 4096 terms one by one, as strips do, drifts ~2e-5)
    check_close(name, s.data(), d.ref[std::size_t(F)].data(), std::size_t(M2), 1e-4, 1e-6, d.scale[std::size_t(F)].data());
  });
  for (auto _ : st) {
    once();
    touch(s.data());
  }
  set_bytes(st, sum_bytes);
}
// Row-major by hand: the schedule (one row per thread step, blocks of 64 lanes), and 8
// rows at once read 2 KiB ahead (RowsBlockPrefetch<8> above).
using RowwiseSplit64 = loom::schedule<loom::split<j, 64>, loom::vectorize<loom::inner<j>>, loom::parallel<i>>;
// One row at a time, 4 vector accumulators, read 2 KiB ahead along the row.
using RowwiseOneRow = loom::schedule<loom::vectorize<j>, loom::unroll<loom::outer<j>, 4>, loom::parallel<i>, loom::prefetch<j, 512>>;
// Column-major by hand, lanes along i: strips of 4 vectors of rows across all columns, or chunks of
// 256 columns folded 8 at a time into the output (the column sums' nest with i and j swapped).
using RowwiseCmStrips = loom::schedule<loom::split<i, 4 * W>, loom::split<loom::inner<i>, W>, loom::vectorize<loom::inner<loom::inner<i>>>,
                                       loom::reorder<loom::outer<i>, j, loom::outer<loom::inner<i>>, loom::inner<loom::inner<i>>>,
                                       loom::parallel<loom::outer<i>>>;
using RowwiseCmFolded = loom::schedule<loom::split<j, 256>, loom::unroll<loom::inner<j>, 8>,
                                       loom::reorder<loom::outer<j>, loom::outer<loom::inner<j>>, i, loom::inner<loom::inner<j>>>,
                                       loom::vectorize<i>, loom::parallel<loom::outer<j>>, loom::prefetch<j, 8>>;

#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
struct EigenMat {
  EMat X;
  Eigen::VectorXf rs;
  Eigen::RowVectorXf cs;
  EigenMat() : X(M2, M2), rs(M2), cs(M2) { std::memcpy(X.data(), mat().X.data(), sizeof(float) * M2 * M2); }
};
EigenMat& emat() {
  static EigenMat d;
  return d;
}
void rowsum_eigen(benchmark::State& st) {
  use_threads(st);
  auto& d = emat();
  check_once(key("rowsum_4096/eigen", st), [&] {
    poison(d.rs.data(), M2);
    d.rs.noalias() = d.X.rowwise().sum();
    rowsum_check("rowsum_4096/eigen", d.rs.data());
  });
  for (auto _ : st) {
    d.rs.noalias() = d.X.rowwise().sum();
    touch(d.rs.data());
  }
  set_bytes(st, sum_bytes);
}
template <auto Data, bool Rows>
void reshaped_sum_eigen(benchmark::State& st, const char* name) {
  use_threads(st);
  auto& d = Data();
  using D = std::remove_cvref_t<decltype(d)>;
  const Eigen::Map<const EMat> X(d.X.data(), D::rows, D::cols);
  const index_t n = Rows ? D::rows : D::cols;
  float* out = Rows ? d.rs.data() : d.cs.data();
  auto once = [&] {
    if constexpr (Rows) Eigen::Map<Eigen::VectorXf>(out, n).noalias() = X.rowwise().sum();
    else Eigen::Map<Eigen::RowVectorXf>(out, n).noalias() = X.colwise().sum();
  };
  check_once(key(name, st), [&] {
    poison(out, n);
    once();
    check_close(name, out, (Rows ? d.sums.rs_ref : d.sums.cs_ref).data(), std::size_t(n), 1e-5, 1e-6, (Rows ? d.sums.rs_scale : d.sums.cs_scale).data());
  });
  for (auto _ : st) {
    once();
    touch(out);
  }
  set_bytes(st, bytes_of<D>());
}
void colsum_eigen(benchmark::State& st) {
  use_threads(st);
  auto& d = emat();
  check_once(key("colsum_4096/eigen", st), [&] {
    poison(d.cs.data(), M2);
    d.cs.noalias() = d.X.colwise().sum();
    colsum_check("colsum_4096/eigen", d.cs.data());
  });
  for (auto _ : st) {
    d.cs.noalias() = d.X.colwise().sum();
    touch(d.cs.data());
  }
  set_bytes(st, sum_bytes);
}
#endif

#if defined(LOOM_HAVE_XTENSOR) && LOOM_HAVE_XTENSOR
struct XtMat {
  xt::xtensor<float, 2> X;
  xt::xtensor<float, 1> rs, cs;
  XtMat()
      : X(std::array<std::size_t, 2>{std::size_t(M2), std::size_t(M2)}),
        rs(std::array<std::size_t, 1>{std::size_t(M2)}),
        cs(std::array<std::size_t, 1>{std::size_t(M2)}) {
    std::memcpy(X.data(), mat().X.data(), sizeof(float) * M2 * M2);
  }
};
XtMat& xmat() {
  static XtMat d;
  return d;
}
// evaluation_strategy::immediate: xtensor's faster reducer for these shapes (the lazy default
// measured 0.6 GB/s for column sums here); row sums are the same either way.
void rowsum_xtensor(benchmark::State& st) {
  use_threads(st);
  auto& d = xmat();
  auto once = [&] { xt::noalias(d.rs) = xt::sum(d.X, {1}, xt::evaluation_strategy::immediate); };
  check_once(key("rowsum_4096/xtensor", st), [&] {
    poison(d.rs.data(), M2);
    once();
    rowsum_check("rowsum_4096/xtensor", d.rs.data());
  });
  for (auto _ : st) {
    once();
    touch(d.rs.data());
  }
  set_bytes(st, sum_bytes);
}
void colsum_xtensor(benchmark::State& st) {
  use_threads(st);
  auto& d = xmat();
  auto once = [&] { xt::noalias(d.cs) = xt::sum(d.X, {0}, xt::evaluation_strategy::immediate); };
  check_once(key("colsum_4096/xtensor", st), [&] {
    poison(d.cs.data(), M2);
    once();
    colsum_check("colsum_4096/xtensor", d.cs.data());
  });
  for (auto _ : st) {
    once();
    touch(d.cs.data());
  }
  set_bytes(st, sum_bytes);
}
#endif

// ------------------------------------------------------------------------------------------
// transpose 8192 x 8192: T(j, i) = X(i, j)
// ------------------------------------------------------------------------------------------
constexpr double transpose_bytes = 2.0 * 4.0 * double(MT) * double(MT);

void transpose_check(const std::string& name, const float* t, const float* x) {
  for (index_t r = 0; r < MT; ++r)
    for (index_t q = 0; q < MT; ++q)
      if (!(t[q * MT + r] == x[r * MT + q]))
        fail(name + ": T(" + std::to_string(q) + ", " + std::to_string(r) + ") is " + std::to_string(t[q * MT + r]) +
             ", expected " + std::to_string(x[r * MT + q]));
}

template <class S>
void transpose_loom(benchmark::State& st, const char* name) {
  use_threads(st);
  auto& d = tr();
  const auto def = (d.T(j, i) = d.X(i, j));
  check_once(key(name, st), [&] {
    poison(d.T.data(), MT * MT);
    loom::run<S>(def);
    transpose_check(name, d.T.data(), d.X.data());
  });
  for (auto _ : st) {
    loom::run<S>(def);
    touch(d.T.data());
  }
  set_bytes(st, transpose_bytes);
}

// Untiled: the output's rows in parallel, i (the output's unit stride) innermost.
using TrUntiledScalar = schedule<parallel<j>>;
using TrUntiledVec = schedule<vectorize<i>, parallel<j>>;
// Tiled F x F, lanes along the output's unit stride (i), tile rows in parallel.
template <index_t F>
using TrTiled = schedule<tile<j, i, F, F>, vectorize<inner<i>>, parallel<outer<j>>>;
// Tiled 32 x 32, lanes along the input's unit stride (j): contiguous loads, strided stores.
using TrTiledLanesJ = schedule<tile<j, i, 32, 32>, reorder<inner<i>, inner<j>>, vectorize<inner<j>>, parallel<outer<j>>>;

// Reference point, not a library: a plain C++ transpose in 32 x 32 blocks, rows of blocks in
// parallel, scalar code as g++ -O3 compiles it.
void transpose_plain_tiled(benchmark::State& st) {
  use_threads(st);
  auto& d = tr();
  const float* x = d.X.data();
  float* t = d.T.data();
  constexpr index_t F = 32;
  static_assert(MT % F == 0, "transpose_plain_tiled assumes whole blocks");
  auto once = [&] {
#pragma omp parallel for schedule(static)
    for (index_t jb = 0; jb < MT; jb += F)
      for (index_t ib = 0; ib < MT; ib += F)
        for (index_t jj = jb; jj < jb + F; ++jj)
          for (index_t ii = ib; ii < ib + F; ++ii) t[jj * MT + ii] = x[ii * MT + jj];
  };
  check_once(key("transpose_8192/plain_tiled32", st), [&] {
    poison(t, MT * MT);
    once();
    transpose_check("transpose_8192/plain_tiled32", t, x);
  });
  for (auto _ : st) {
    once();
    touch(t);
  }
  set_bytes(st, transpose_bytes);
}

#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
struct EigenTr {
  EMat X, T;
  EigenTr() : X(MT, MT), T(MT, MT) { std::memcpy(X.data(), tr().X.data(), sizeof(float) * MT * MT); }
};
EigenTr& etr() {
  static EigenTr d;
  return d;
}
void transpose_eigen(benchmark::State& st) {
  use_threads(st);
  auto& d = etr();
  check_once(key("transpose_8192/eigen", st), [&] {
    poison(d.T.data(), MT * MT);
    d.T.noalias() = d.X.transpose();
    transpose_check("transpose_8192/eigen", d.T.data(), d.X.data());
  });
  for (auto _ : st) {
    d.T.noalias() = d.X.transpose();
    touch(d.T.data());
  }
  set_bytes(st, transpose_bytes);
}
#endif

// ------------------------------------------------------------------------------------------
// contraction C(i, j) = sum(k, A(i, k) * B(k, j)), 512^3, no packing
// ------------------------------------------------------------------------------------------
constexpr double gemm_flops = 2.0 * double(MG) * double(MG) * double(MG);

void gemm_check(const std::string& name, const float* c) {
  check_close(name, c, gemm().ref.data(), MG * MG, 1e-5, 1e-5, gemm().scale.data());
}

template <class S>
void gemm_loom(benchmark::State& st, const char* name) {
  use_threads(st);
  auto& d = gemm();
  const auto def = (d.C(i, j) = sum(k, d.A(i, k) * d.B(k, j)));
  check_once(key(name, st), [&] {
    poison(d.C.data(), MG * MG);
    loom::run<S>(def);
    gemm_check(name, d.C.data());
  });
  for (auto _ : st) {
    loom::run<S>(def);
    touch(d.C.data());
  }
  set_flops(st, gemm_flops);
}

// Register block of MR rows x NV vectors (MR * NV vector accumulators): for each block of C,
// k runs outside the block, so the accumulators stay in registers for the whole reduction;
// rows of blocks in parallel. Written split-first (split<j, NV * W>, then the inner loop by W),
// like loom's default (6 x 4 vectors).
template <index_t MR, index_t NV>
using GemmBlock = schedule<split<j, NV * W>, split<inner<j>, W>, vectorize<inner<inner<j>>>, split<i, MR>, unroll<inner<i>>,
                           reorder<outer<i>, outer<j>, k, inner<i>, outer<inner<j>>, inner<inner<j>>>, parallel<outer<i>>>;
// The schedule in loom's documentation: MR rows x one vector, vectorize-first.
template <index_t MR>
using GemmDoc = schedule<split<j, W>, vectorize<inner<j>>, split<i, MR>, unroll<inner<i>>,
                         reorder<outer<i>, outer<j>, k, inner<i>, inner<j>>, parallel<outer<i>>>;
// MR x NV written vectorize-first, then split<outer<j>, NV>: the same nest as GemmBlock, but the
// tails loom picks differ (kept to show the cost).
template <index_t MR, index_t NV>
using GemmVecFirst = schedule<split<j, W>, vectorize<inner<j>>, split<outer<j>, NV>, split<i, MR>, unroll<inner<i>>,
                              reorder<outer<i>, outer<outer<j>>, k, inner<i>, inner<outer<j>>, inner<j>>, parallel<outer<i>>>;
// Naive: the triple loop as written, scalar, rows in parallel.
using GemmNaive = schedule<parallel<i>>;

#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
struct EigenGemm {
  EMat A, B, C;
  EigenGemm() : A(MG, MG), B(MG, MG), C(MG, MG) {
    std::memcpy(A.data(), gemm().A.data(), sizeof(float) * MG * MG);
    std::memcpy(B.data(), gemm().B.data(), sizeof(float) * MG * MG);
  }
};
EigenGemm& egemm() {
  static EigenGemm d;
  return d;
}
// Eigen's packed, cache-blocked GEMM (parallel through setNbThreads): the reference point for
// what packing buys, not a like-for-like schedule.
void gemm_eigen(benchmark::State& st) {
  use_threads(st);
  auto& d = egemm();
  check_once(key("gemm_512/eigen", st), [&] {
    poison(d.C.data(), MG * MG);
    d.C.noalias() = d.A * d.B;
    gemm_check("gemm_512/eigen", d.C.data());
  });
  for (auto _ : st) {
    d.C.noalias() = d.A * d.B;
    touch(d.C.data());
  }
  set_flops(st, gemm_flops);
}
#endif

// ------------------------------------------------------------------------------------------
template <class F>
void reg(const std::string& name, F&& f, bool serial_only = false) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(f));
  if (serial_only) b->Apply(one_thread_arg);
  else b->Apply(thread_args);
}
#define LOOM_REG(NAME, FN, ...) reg(NAME, [](benchmark::State& st) { FN<__VA_ARGS__>(st, NAME); })

void register_all() {
  // copy
  reg("copy_16M/loom", [](benchmark::State& st) { copy_kernel<copy_impl::loom>("copy_16M/loom", st, vec().x, vec().out); });
  reg("copy_16M/memcpy", [](benchmark::State& st) { copy_kernel<copy_impl::memcpy>("copy_16M/memcpy", st, vec().x, vec().out); }, true);
  reg("copy_16M/memcpy_omp", [](benchmark::State& st) { copy_kernel<copy_impl::memcpy_omp>("copy_16M/memcpy_omp", st, vec().x, vec().out); });
  reg("copy_16M/plain", [](benchmark::State& st) { copy_kernel<copy_impl::plain>("copy_16M/plain", st, vec().x, vec().out); });
  reg("copy_16M/nt_stores", [](benchmark::State& st) { copy_kernel<copy_impl::nt>("copy_16M/nt_stores", st, vec().x, vec().out); });
  reg("copy_4096x4096/loom", [](benchmark::State& st) { copy_kernel<copy_impl::loom>("copy_4096x4096/loom", st, mat().X, mat().out); });
  reg("copy_4096x4096/memcpy", [](benchmark::State& st) { copy_kernel<copy_impl::memcpy>("copy_4096x4096/memcpy", st, mat().X, mat().out); }, true);
  reg("copy_4096x4096/memcpy_omp", [](benchmark::State& st) { copy_kernel<copy_impl::memcpy_omp>("copy_4096x4096/memcpy_omp", st, mat().X, mat().out); });
  reg("copy_4096x4096/plain", [](benchmark::State& st) { copy_kernel<copy_impl::plain>("copy_4096x4096/plain", st, mat().X, mat().out); });
  reg("copy_4096x4096/nt_stores", [](benchmark::State& st) { copy_kernel<copy_impl::nt>("copy_4096x4096/nt_stores", st, mat().X, mat().out); });

  // fused elementwise
  LOOM_REG("fused_16M/loom_default", fused_loom, loom::auto_schedule);
  LOOM_REG("fused_16M/loom_hand", fused_loom, FusedHand);
  LOOM_REG("fused_16M/loom_hand_u4", fused_loom, FusedHandU4);
  LOOM_REG("fused_16M/loom_interleave4", fused_loom, FusedInterleave4);
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  reg("fused_16M/eigen", fused_eigen);
  reg("fused_16M/eigen_omp", fused_eigen_omp);
#endif
#if defined(LOOM_HAVE_XTENSOR) && LOOM_HAVE_XTENSOR
  reg("fused_16M/xtensor", fused_xtensor);
#endif
  reg("fused_16M/plain", fused_plain);
  reg("add_16M/loom_default", add_loom);
  reg("add_256K/loom_default", [](benchmark::State& st) { in_cache_loom<false>(st, "add_256K/loom_default"); });
  reg("fused_256K/loom_default", [](benchmark::State& st) { in_cache_loom<true>(st, "fused_256K/loom_default"); });
  reg("fused_16M/xsimd_loom_math", [](benchmark::State& st) { fused_xsimd<false>(st, "fused_16M/xsimd_loom_math"); });
  reg("fused_16M/xsimd_loom_math_nt", [](benchmark::State& st) { fused_xsimd<true>(st, "fused_16M/xsimd_loom_math_nt"); });
  reg("fused_16M/xsimd_loom_math_nt_ahead", [](benchmark::State& st) { fused_xsimd<true, true>(st, "fused_16M/xsimd_loom_math_nt_ahead"); });
  reg("fused_16M/xsimd_loom_math_nt_ahead_4streams", [](benchmark::State& st) { fused_xsimd<true, true, 4>(st, "fused_16M/xsimd_loom_math_nt_ahead_4streams"); });
  reg("fused_16M/xsimd_loom_math_nt_ahead_2streams", [](benchmark::State& st) { fused_xsimd<true, true, 2>(st, "fused_16M/xsimd_loom_math_nt_ahead_2streams"); });

  // row and column sums
  reg("read_4096x4096/xsimd", read_xsimd);
  LOOM_REG("rowsum_4096/loom_default", sums_loom, mat, true, loom::auto_schedule);
  LOOM_REG("rowsum_4096/loom_rows4", sums_loom, mat, true, RowsBlock<4>);
  LOOM_REG("rowsum_4096/loom_rows4_u2", sums_loom, mat, true, RowsBlockU2<4>);
  LOOM_REG("rowsum_4096/loom_rows8_prefetch", sums_loom, mat, true, RowsBlockPrefetch<8>);
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  reg("rowsum_4096/eigen", rowsum_eigen);
#endif
#if defined(LOOM_HAVE_XTENSOR) && LOOM_HAVE_XTENSOR
  reg("rowsum_4096/xtensor", rowsum_xtensor);
#endif
  LOOM_REG("colsum_4096/loom_default", sums_loom, mat, false, loom::auto_schedule);
  LOOM_REG("colsum_4096/loom_rows_streamed_no_prefetch", sums_loom, mat, false, ColsRowsStreamedNoPrefetch);
  LOOM_REG("colsum_4096/loom_into_output", sums_loom, mat, false, ColsIntoOutput);
  LOOM_REG("colsum_4096/loom_registers8", sums_loom, mat, false, ColsRegisters<8>);
  LOOM_REG("colsum_4096/loom_registers16", sums_loom, mat, false, ColsRegisters<16>);
  LOOM_REG("colsum_4096/loom_registers16_vecfirst", sums_loom, mat, false, ColsRegistersVecFirst<16>);
  LOOM_REG("colsum_4096/loom_strip64v", sums_loom, mat, false, ColsStrip<64>);
  LOOM_REG("colsum_4096/loom_chunked_rows", sums_loom, mat, false, ColsChunked);
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  reg("colsum_4096/eigen", colsum_eigen);
#endif
#if defined(LOOM_HAVE_XTENSOR) && LOOM_HAVE_XTENSOR
  reg("colsum_4096/xtensor", colsum_xtensor);
#endif

  // the same sums, 65536 x 256: the default against the nests it picks for long rows
  LOOM_REG("rowsum_65536x256/loom_default", sums_loom, tall, true, loom::auto_schedule);
  LOOM_REG("rowsum_65536x256/loom_rows8_prefetch", sums_loom, tall, true, RowsBlockPrefetch<8>);
  LOOM_REG("colsum_65536x256/loom_default", sums_loom, tall, false, loom::auto_schedule);
  LOOM_REG("colsum_65536x256/loom_rows_streamed_prefetch", sums_loom, tall, false, ColsRowsStreamedPrefetch);
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  LOOM_REG("rowsum_65536x256/eigen", reshaped_sum_eigen, tall, true);
  LOOM_REG("colsum_65536x256/eigen", reshaped_sum_eigen, tall, false);
#endif
  // row sums of 512 x 256 (512 KiB, in cache): the default against Eigen
  LOOM_REG("rowsum_512x256/loom_default", sums_loom, in_cache, true, loom::auto_schedule);
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  LOOM_REG("rowsum_512x256/eigen", reshaped_sum_eigen, in_cache, true);
#endif
  // column sums of 8 x 2097152: the default (strips of one vector, all rows at once) against one
  // chunk of 64 rows (the default before it took strips for fewer than 16 rows)
  LOOM_REG("colsum_8x2097152/loom_default", sums_loom, few, false, loom::auto_schedule);
  LOOM_REG("colsum_8x2097152/loom_one_chunk", sums_loom, few, false, ColsOneChunk);
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  LOOM_REG("colsum_8x2097152/eigen", reshaped_sum_eigen, few, false);
#endif

  // row-wise sums of f(X(i, j), v(i)), row-major and column-major: the default against by hand
#define LOOM_ROWWISE(F, TAG)                                                                              \
  LOOM_REG("rowwise_" TAG "_rm/loom_default", rowwise_loom, F, false, loom::auto_schedule);               \
  LOOM_REG("rowwise_" TAG "_rm/loom_hand_split64", rowwise_loom, F, false, RowwiseSplit64);               \
  LOOM_REG("rowwise_" TAG "_rm/loom_hand_rows8_prefetch", rowwise_loom, F, false, RowsBlockPrefetch<8>);  \
  LOOM_REG("rowwise_" TAG "_rm/loom_hand_one_row_prefetch", rowwise_loom, F, false, RowwiseOneRow);       \
  LOOM_REG("rowwise_" TAG "_cm/loom_default", rowwise_loom, F, true, loom::auto_schedule);                \
  LOOM_REG("rowwise_" TAG "_cm/loom_hand_strips", rowwise_loom, F, true, RowwiseCmStrips);                \
  LOOM_REG("rowwise_" TAG "_cm/loom_hand_folded", rowwise_loom, F, true, RowwiseCmFolded)
  LOOM_ROWWISE(rowfn::exp_diff, "exp");
  LOOM_ROWWISE(rowfn::product, "mul");
  LOOM_ROWWISE(rowfn::maximum, "max");
#undef LOOM_ROWWISE

  // transpose
  LOOM_REG("transpose_8192/loom_untiled_scalar", transpose_loom, TrUntiledScalar);
  LOOM_REG("transpose_8192/loom_untiled_vec", transpose_loom, TrUntiledVec);
  LOOM_REG("transpose_8192/loom_default", transpose_loom, loom::auto_schedule);
  LOOM_REG("transpose_8192/loom_tiled16", transpose_loom, TrTiled<16>);
  LOOM_REG("transpose_8192/loom_tiled32", transpose_loom, TrTiled<32>);
  LOOM_REG("transpose_8192/loom_tiled64", transpose_loom, TrTiled<64>);
  LOOM_REG("transpose_8192/loom_tiled32_lanes_j", transpose_loom, TrTiledLanesJ);
  reg("transpose_8192/plain_tiled32", transpose_plain_tiled);
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  reg("transpose_8192/eigen", transpose_eigen);
#endif

  // contraction
  LOOM_REG("gemm_512/loom_naive", gemm_loom, GemmNaive);
  LOOM_REG("gemm_512/loom_default", gemm_loom, loom::auto_schedule);
  LOOM_REG("gemm_512/loom_doc4x1", gemm_loom, GemmDoc<4>);
  LOOM_REG("gemm_512/loom_doc8x1", gemm_loom, GemmDoc<8>);
  LOOM_REG("gemm_512/loom_block4x2", gemm_loom, GemmBlock<4, 2>);
  LOOM_REG("gemm_512/loom_block6x2", gemm_loom, GemmBlock<6, 2>);
  LOOM_REG("gemm_512/loom_block8x2", gemm_loom, GemmBlock<8, 2>);
  LOOM_REG("gemm_512/loom_block4x4", gemm_loom, GemmBlock<4, 4>);
  LOOM_REG("gemm_512/loom_block6x4", gemm_loom, GemmBlock<6, 4>);
  LOOM_REG("gemm_512/loom_block4x2_vecfirst", gemm_loom, GemmVecFirst<4, 2>);
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  reg("gemm_512/eigen", gemm_eigen);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("loom_simd_width_float", std::to_string(W));
  benchmark::AddCustomContext("eigen", have_eigen ? "yes" : "no");
  benchmark::AddCustomContext("xtensor", have_xtensor ? "yes (XTENSOR_USE_XSIMD, XTENSOR_USE_OPENMP)" : "no");
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
