// bench/bench_peak.cpp — the measured FP32 FMA peak of this machine: the denominator of "% of peak"
// in bench/summarize.py.
//
// Each thread runs C independent accumulator chains acc = fma(m, a, acc) on xsimd batches of the
// native width (16 floats with AVX-512), C = 8 .. 24, fully unrolled, nothing but FMAs in the loop.
// With FMA latency L cycles and P FMA pipes, C >= L * P chains saturate the pipes; the best
// variant at a thread count is the measured peak there. An FMA counts 2 flops. The chain runs
// through the addend (as in a GEMM micro-kernel): on this Zen 5 part a chain through a factor
// (acc = fma(acc, m, a)) measured half the rate, 115 instead of 225 GFLOP/s on one core.
//
// fma_peak_f64 is the same in double (the FP64 peak). copy_bw/64MiB is the memory roof of the
// roofline plot (bench/plot_roofline.py): an OpenMP copy of 64 MiB, counted as bytes read +
// written.
//
// Run with --benchmark_repetitions=5 --benchmark_report_aggregates_only=true (bench/run.sh does)
// and read the medians. Names: fma_peak/chains<C>/threads:<T>; counter "GFLOP/s".

#include "bench_common.hpp"

#include <loom/simd/arch.hpp>
#include <loom/simd/fma.hpp>

#include <cstdint>
#include <string>
#include <vector>
#include <utility>

namespace {

using B = xsimd::batch<float, loom::simd::native_arch>;

// Volatile sources, so the compiler knows nothing about the values it iterates.
volatile double v_init = 0.5, v_mul = 0.99999994, v_add = 1e-7;

constexpr std::int64_t reps_per_iteration = 1 << 16;  // per thread and benchmark iteration

template <class T, int C>
T chains(std::int64_t reps) {
  using B = xsimd::batch<T, loom::simd::native_arch>;
  const B m(static_cast<T>(v_mul)), a(static_cast<T>(v_add));
  B acc[C];
  for (int q = 0; q < C; ++q) acc[q] = B(T(v_init) + T(0.001) * T(q));
  for (std::int64_t r = 0; r < reps; ++r) {
    [&]<std::size_t... Q>(std::index_sequence<Q...>) { ((acc[Q] = loom::simd::fma(m, a, acc[Q])), ...); }(std::make_index_sequence<C>{});
  }
  B s = acc[0];
  for (int q = 1; q < C; ++q) s += acc[q];
  return xsimd::hadd(s);
}

template <class T, int C>
void fma_peak(benchmark::State& st) {
  const int threads = loom_bench::use_threads(st);
  T sink = 0;
  for (auto _ : st) {
    T total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += chains<T, C>(reps_per_iteration);
    sink += total;
  }
  benchmark::DoNotOptimize(sink);
  constexpr double lanes = double(xsimd::batch<T, loom::simd::native_arch>::size);
  loom_bench::set_flops(st, 2.0 * lanes * double(C) * double(reps_per_iteration) * double(threads));
}

/// The memory roof: dst = src over 64 MiB, split statically over the threads.
void copy_bw(benchmark::State& st) {
  const int threads = loom_bench::use_threads(st);
  constexpr std::int64_t n = std::int64_t(16) << 20;  // floats
  std::vector<float> src(n, 1.f), dst(n, 0.f);
  for (auto _ : st) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t q = 0; q < n; ++q) dst[std::size_t(q)] = src[std::size_t(q)];
    loom_bench::touch(dst.data());
  }
  loom_bench::set_bytes(st, 2.0 * 4.0 * double(n));
}

}  // namespace

int main(int argc, char** argv) {
  auto reg = [](const char* name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name, fn)->Apply(loom_bench::thread_args);
  };
  reg("fma_peak/chains8", fma_peak<float, 8>);
  reg("fma_peak/chains12", fma_peak<float, 12>);
  reg("fma_peak/chains16", fma_peak<float, 16>);
  reg("fma_peak/chains24", fma_peak<float, 24>);
  // FP64 (half the lanes): the peak double GEMM is measured against.
  reg("fma_peak_f64/chains12", fma_peak<double, 12>);
  reg("fma_peak_f64/chains16", fma_peak<double, 16>);
  reg("copy_bw/64MiB", copy_bw);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("simd_lanes_float", std::to_string(B::size));
  benchmark::AddCustomContext("simd_arch", B::arch_type::name());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
