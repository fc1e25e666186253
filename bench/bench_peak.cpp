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
// Run with --benchmark_repetitions=5 --benchmark_report_aggregates_only=true (bench/run.sh does)
// and read the medians. Names: fma_peak/chains<C>/threads:<T>; counter "GFLOP/s".

#include "bench_common.hpp"

#include <loom/simd/arch.hpp>
#include <loom/simd/fma.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace {

using B = xsimd::batch<float, loom::simd::native_arch>;

// Volatile sources, so the compiler knows nothing about the values it iterates.
volatile float v_init = 0.5f, v_mul = 0.99999994f, v_add = 1e-7f;

constexpr std::int64_t reps_per_iteration = 1 << 16;  // per thread and benchmark iteration

template <int C>
float chains(std::int64_t reps) {
  const B m(v_mul), a(v_add);
  B acc[C];
  for (int q = 0; q < C; ++q) acc[q] = B(v_init + 0.001f * float(q));
  for (std::int64_t r = 0; r < reps; ++r) {
    [&]<std::size_t... Q>(std::index_sequence<Q...>) { ((acc[Q] = loom::simd::fma(m, a, acc[Q])), ...); }(std::make_index_sequence<C>{});
  }
  B s = acc[0];
  for (int q = 1; q < C; ++q) s += acc[q];
  return xsimd::hadd(s);
}

template <int C>
void fma_peak(benchmark::State& st) {
  const int threads = loom_bench::use_threads(st);
  float sink = 0.f;
  for (auto _ : st) {
    float total = 0.f;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += chains<C>(reps_per_iteration);
    sink += total;
  }
  benchmark::DoNotOptimize(sink);
  loom_bench::set_flops(st, 2.0 * double(B::size) * double(C) * double(reps_per_iteration) * double(threads));
}

}  // namespace

int main(int argc, char** argv) {
  auto reg = [](const char* name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name, fn)->Apply(loom_bench::thread_args);
  };
  reg("fma_peak/chains8", fma_peak<8>);
  reg("fma_peak/chains12", fma_peak<12>);
  reg("fma_peak/chains16", fma_peak<16>);
  reg("fma_peak/chains24", fma_peak<24>);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("simd_lanes_float", std::to_string(B::size));
  benchmark::AddCustomContext("simd_arch", B::arch_type::name());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
