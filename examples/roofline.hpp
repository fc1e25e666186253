// examples/roofline.hpp — the two ceilings of the roofline model, measured on this machine
// when the demo starts: FMA throughput (GFLOP/s) and the bandwidth of a copy (GB/s).
#pragma once
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>
#include <loom/simd/arch.hpp>
#include <loom/simd/fma.hpp>     // (brings xsimd)
#include <loom/simd/stream.hpp>  // streaming stores for the copy roof

#include <cstdio>
#include <utility>

namespace demo {

inline std::vector<double> sorted_times(auto&& fn, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t;
}

/// The median time of a kernel, since the machine is noisy (as bench/ does).
inline double seconds_of(auto&& fn, int reps) { return sorted_times(fn, reps)[std::size_t(reps) / 2]; }

/// The best time, for a ceiling: noise only ever slows a run down, and a median hit by a
/// neighbour once put the FMA roof at 176 instead of 231 GFLOP/s and a GEMM at 130 % of "peak".
inline double best_seconds_of(auto&& fn, int reps) { return sorted_times(fn, reps)[0]; }


/// Peak FP32 FMA throughput: independent accumulator chains of native-width batches hide the FMA
/// latency on both FMA ports (4 cycles x 2 ports: 8 chains at least); every thread runs its own
/// chains. 16 with AVX-512's 32 registers, 12 with AVX2's 16: the chains and the two operands must
/// stay in registers (16 ymm chains spilled on Zen 3 and measured half the peak). The chains are written
/// out (a fold over an index sequence), not a loop over an array: g++ may keep such an array in
/// memory, and a store-reload inside each chain halves the rate (seen on Zen 4).
inline double measure_peak_gflops(int threads) {
  using B = loom::simd::batch<float, loom::simd::native_width<float>>;
  constexpr int chains = loom::simd::vector_registers<float, B::size> >= 32 ? 16 : 12;
  const long iters = 20'000'000;
  float sink = 0;
  const double t = best_seconds_of(
      [&] {
#pragma omp parallel num_threads(threads) reduction(+ : sink)
        {
          const B a(0.9999999f), b(1e-8f);
          sink += [&]<std::size_t... C>(std::index_sequence<C...>) {
            B acc[chains] = {B(1.f + 0.01f * float(C))...};  // distinct, or the compiler merges equal chains
            for (long it = 0; it < iters / 16; ++it)
              ((acc[C] = loom::simd::fma(a, b, acc[C])), ...);  // the chain runs through the addend, as in GEMM
            return xsimd::hadd((acc[C] + ...));
          }(std::make_index_sequence<chains>{});
        }
      },
      9);
  if (sink == 12345.f) std::puts("");
  return 2.0 * double(B::size) * chains * double(iters / 16) * threads / t * 1e-9;
}

/// Copy bandwidth for `bytes` of floats (read + write counted), split over `threads`: the better
/// of memcpy and a copy with streaming stores (which skip reading each written line first; loom's
/// large elementwise runs use them too, so a memcpy alone would understate the roof).
inline double measure_copy_gbs(std::size_t bytes, int threads) {
  using B = loom::simd::batch<float, loom::simd::native_width<float>>;
  constexpr std::size_t W = B::size;
  const std::size_t n = bytes / sizeof(float) / W * W;
  std::vector<float, xsimd::aligned_allocator<float, 64>> a(n, 1.f), b(n);
  auto copy = [&](bool streaming) {
#pragma omp parallel num_threads(threads)
    {
      const std::size_t nt = std::size_t(omp_get_num_threads()), id = std::size_t(omp_get_thread_num());
      const std::size_t lo = n / W * id / nt * W, hi = n / W * (id + 1) / nt * W;
      if (!streaming) {
        std::memcpy(b.data() + lo, a.data() + lo, (hi - lo) * sizeof(float));
      } else {
        for (std::size_t q = lo; q < hi; q += W) loom::simd::store_stream<B>(b.data() + q, B::load_aligned(a.data() + q));
        loom::simd::stream_fence();
      }
    }
  };
  const double t = std::min(best_seconds_of([&] { copy(false); }, 9), best_seconds_of([&] { copy(true); }, 9));
  return 2.0 * double(n * sizeof(float)) / t * 1e-9;
}

}  // namespace demo
