// examples/roofline.hpp — the two ceilings of the roofline model, measured on this machine
// when the demo starts: FMA throughput (GFLOP/s) and the bandwidth of a plain copy (GB/s).
#pragma once
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>
#include <loom/simd/fma.hpp>  // (brings xsimd)

namespace demo {

inline double seconds_of(auto&& fn, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];  // median: the machine is noisy
}

/// Peak FP32 FMA throughput: 16 independent accumulator chains of native-width batches hide
/// the FMA latency on both FMA ports; every thread runs its own chains.
inline double measure_peak_gflops(int threads) {
  using B = xsimd::batch<float>;
  constexpr int chains = 16;
  const long iters = 20'000'000;
  float sink = 0;
  const double t = seconds_of(
      [&] {
#pragma omp parallel num_threads(threads) reduction(+ : sink)
        {
          B acc[chains];
          for (int c = 0; c < chains; ++c) acc[c] = B(1.f + 1e-7f * float(c));
          const B a(0.9999999f), b(1e-8f);
          for (long it = 0; it < iters / 16; ++it)
            for (int c = 0; c < chains; ++c) acc[c] = loom::simd::fma(a, b, acc[c]);  // the chain runs through the addend, as in GEMM
          B s(0.f);
          for (int c = 0; c < chains; ++c) s += acc[c];
          sink += xsimd::hadd(s);
        }
      },
      5);
  if (sink == 12345.f) std::puts("");
  return 2.0 * double(B::size) * chains * double(iters / 16) * threads / t * 1e-9;
}

/// Copy bandwidth for `bytes` of floats (read + write counted), split over `threads`.
inline double measure_copy_gbs(std::size_t bytes, int threads) {
  const std::size_t n = bytes / sizeof(float);
  std::vector<float> a(n, 1.f), b(n);
  const double t = seconds_of(
      [&] {
#pragma omp parallel num_threads(threads)
        {
          const std::size_t nt = std::size_t(omp_get_num_threads()), id = std::size_t(omp_get_thread_num());
          const std::size_t lo = n * id / nt, hi = n * (id + 1) / nt;
          std::memcpy(b.data() + lo, a.data() + lo, (hi - lo) * sizeof(float));
        }
      },
      7);
  return 2.0 * double(bytes) / t * 1e-9;
}

}  // namespace demo
