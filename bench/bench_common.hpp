// bench/bench_common.hpp — helpers shared by loom's benchmarks (Google Benchmark 1.7).
//
//   * every benchmark takes one argument, `threads` (1 and 2 by default): use_threads(state)
//     applies it with omp_set_num_threads (and Eigen::setNbThreads when Eigen is in the build);
//   * set_bytes / set_flops attach rate counters "GB/s" and "GFLOP/s" (10^9, wall-clock time:
//     every benchmark uses real time, since the work runs on OpenMP threads, not on the timing one);
//   * fill_random: reproducible uniform data;
//   * check_close / check_once: every kernel is compared once with a plain loop before it is
//     timed; a wrong result aborts the whole run with a message (a fast wrong kernel is no result).
//
// Run the binaries with --benchmark_repetitions=5 --benchmark_report_aggregates_only=true and
// read the median (bench/run.sh does): the machines these run on are shared and noisy.
#pragma once

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <set>
#include <string>

#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
// Eigen 3.4's own headers warn under -Wall -Wextra (unused variables in its AVX/AVX-512 packet
// math); they are third-party code, so their warnings are silenced where they are included.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wdeprecated-copy"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wclass-memaccess"
#endif
#endif
#include <Eigen/Core>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif

namespace loom_bench {

/// A benchmark's name with its thread count (its one argument): the key of check_once and of
/// per-run records.
inline std::string key(const std::string& name, const benchmark::State& st) { return name + "/" + std::to_string(st.range(0)); }

/// Thread counts every benchmark runs at (the machines have 2 cores).
inline constexpr int thread_counts[] = {1, 2};

/// Registers the `threads` argument (1 and 2), wall-clock timing, milliseconds.
inline void thread_args(benchmark::internal::Benchmark* b) {
  b->ArgName("threads");
  for (int t : thread_counts) b->Arg(t);
  b->UseRealTime();
  b->Unit(benchmark::kMillisecond);
}
/// The same, at one thread only (for inherently serial references such as std::memcpy).
inline void one_thread_arg(benchmark::internal::Benchmark* b) {
  b->ArgName("threads")->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);
}

/// Applies the benchmark's `threads` argument to OpenMP (and Eigen) and returns it.
inline int use_threads(const benchmark::State& state) {
  const int t = static_cast<int>(state.range(0));
  omp_set_num_threads(t);
#if defined(LOOM_HAVE_EIGEN) && LOOM_HAVE_EIGEN
  Eigen::setNbThreads(t);
#endif
  return t;
}

/// "GB/s": bytes moved per iteration (the kernel's compulsory traffic, stated by the caller),
/// as a rate over wall-clock time, in 10^9 bytes per second. Also records the byte count.
inline void set_bytes(benchmark::State& state, double bytes_per_iteration) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes_per_iteration * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  state.counters["bytes"] = benchmark::Counter(bytes_per_iteration);
}

/// "GFLOP/s": floating-point operations per iteration (an FMA counts 2), as a rate.
inline void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  state.counters["flops"] = benchmark::Counter(flops_per_iteration);
}

/// Uniform values in [lo, hi), reproducible from the seed.
template <class T>
void fill_random(T* p, std::size_t n, std::uint32_t seed, T lo = T(-1), T hi = T(1)) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> dist(lo, hi);
  for (std::size_t q = 0; q < n; ++q) p[q] = dist(gen);
}

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "\nloom bench: WRONG RESULT: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Compares got[0..n) with want[0..n): |got - want| <= atol + rtol * scale[q] (scale = |want|
/// when null). Aborts with the first mismatch and the kernel's name.
template <class T, class U>
void check_close(const std::string& name, const T* got, const U* want, std::size_t n, double rtol, double atol,
                 const double* scale = nullptr) {
  for (std::size_t q = 0; q < n; ++q) {
    const double g = static_cast<double>(got[q]), w = static_cast<double>(want[q]);
    const double s = scale ? scale[q] : std::abs(w);
    if (!(std::abs(g - w) <= atol + rtol * s))  // also catches NaN
      fail(name + ": element " + std::to_string(q) + " is " + std::to_string(g) + ", expected " + std::to_string(w) +
           " (of " + std::to_string(n) + ")");
  }
}

/// Runs `check` the first time `key` is seen (once per kernel and thread count), then never.
template <class F>
void check_once(const std::string& key, F&& check) {
  static std::mutex m;
  static std::set<std::string> done;
  {
    std::lock_guard<std::mutex> lock(m);
    if (!done.insert(key).second) return;
  }
  check();
}

/// Keeps the compiler from dropping stores into `p` (the benchmark library's DoNotOptimize on a
/// pointer is not enough for writes through it), and reads nothing.
template <class T>
inline void touch(T* p) {
  benchmark::DoNotOptimize(p);
  benchmark::ClobberMemory();
}

}  // namespace loom_bench
