// bench/bench_threads.cpp — loom called from an app's own threads (docs/threads.md).
//
// Each iteration runs a batch of 32 independent problems, each into its own output:
//   gemm_batch      C_b = A B, 256 x 256 x 256 floats (the GEMM engine)
//   rowsum_batch    s_b(i) = sum(j, X(i, j)), 256 x 4096 floats, parallel<i> (the loop nest)
//   plain_rowsum_batch  the same row sums as a plain loop (`omp simd` reduction, 4 partial sums per
//                   row), no loom and no threads of its own: what the machine loses when two
//                   cores stream the same matrix at once, the yardstick for loom's row sums
// in four ways:
//   serial          the benchmark's thread, loom at one thread (omp_set_num_threads(1))
//   omp_for         the app's `#pragma omp parallel for num_threads(2)` over the batch
//   std_threads     two std::threads of the app, half the batch each, loom's threads as they are
//   std_threads_1   the same, each thread holding loom::thread_limit(1) (when the header exists)
// On 2 cores, omp_for and std_threads_1 should come near twice serial's rate ("items/s").
// docs/threads.md has the command and the figures.
#include <barrier>
#include <functional>
#include <thread>
#include <vector>

#include "bench_common.hpp"
#include "loom/loom.hpp"

// (So that the same file measures the commits from before loom::thread_limit.)
#if __has_include("loom/core/threads.hpp")
#define LOOM_BENCH_HAVE_THREAD_LIMIT 1
#endif

namespace {

using namespace loom_bench;
using loom::vars::i;
using loom::vars::j;

constexpr int batch = 32;
constexpr loom::index_t n_gemm = 256, rows = 256, cols = 4096;

struct Data {
  loom::Tensor<float, 2> A{n_gemm, n_gemm}, B{n_gemm, n_gemm}, X{rows, cols};
  std::vector<loom::Tensor<float, 2>> C;
  std::vector<loom::Tensor<float, 1>> s;
  Data() {
    fill_random(A.data(), std::size_t(n_gemm * n_gemm), 1);
    fill_random(B.data(), std::size_t(n_gemm * n_gemm), 2);
    fill_random(X.data(), std::size_t(rows * cols), 3);
    for (int b = 0; b < batch; ++b) {
      C.emplace_back(n_gemm, n_gemm);
      s.emplace_back(rows);
    }
  }
};
Data& data() {
  static Data d;
  return d;
}

using rowsum_schedule = loom::schedule<loom::split<j, 64>, loom::vectorize<loom::inner<j>>, loom::parallel<i>>;

void gemm_item(int b) { loom::gemm(data().C[std::size_t(b)], data().A, data().B); }
void rowsum_item(int b) {
  auto& d = data();
  loom::run<rowsum_schedule>(d.s[std::size_t(b)](i) = loom::sum(j, d.X(i, j)));
}
void plain_rowsum_item(int b) {
  auto& d = data();
  const float* x = d.X.data();
  float* out = d.s[std::size_t(b)].data();
  for (loom::index_t r = 0; r < rows; ++r) {
    float acc = 0.f;
#pragma omp simd reduction(+ : acc)
    for (loom::index_t c = 0; c < cols; ++c) acc += x[r * cols + c];
    out[r] = acc;
  }
}

/// Checks every output of the batch against a plain loop (once per process and kernel).
void check_gemm() {
  auto& d = data();
  std::vector<double> ref(std::size_t(n_gemm * n_gemm)), scale(ref.size());
  for (loom::index_t r = 0; r < n_gemm; ++r)
    for (loom::index_t c = 0; c < n_gemm; ++c) {
      double acc = 0, mag = 0;
      for (loom::index_t q = 0; q < n_gemm; ++q) {
        acc += double(d.A.data()[r * n_gemm + q]) * double(d.B.data()[q * n_gemm + c]);
        mag += std::abs(double(d.A.data()[r * n_gemm + q]) * double(d.B.data()[q * n_gemm + c]));
      }
      ref[std::size_t(r * n_gemm + c)] = acc;
      scale[std::size_t(r * n_gemm + c)] = mag;
    }
  for (int b = 0; b < batch; ++b)
    check_close("gemm_batch item " + std::to_string(b), d.C[std::size_t(b)].data(), ref.data(), ref.size(), 1e-5, 1e-6,
                scale.data());
}
void check_rowsum() {
  auto& d = data();
  std::vector<double> ref(static_cast<std::size_t>(rows)), scale(ref.size());
  for (loom::index_t r = 0; r < rows; ++r)
    for (loom::index_t c = 0; c < cols; ++c) {
      ref[std::size_t(r)] += double(d.X.data()[r * cols + c]);
      scale[std::size_t(r)] += std::abs(double(d.X.data()[r * cols + c]));
    }
  for (int b = 0; b < batch; ++b)
    check_close("rowsum_batch item " + std::to_string(b), d.s[std::size_t(b)].data(), ref.data(), ref.size(), 1e-5,
                1e-6, scale.data());
}

/// Two long-lived threads of the "app": each call of run() hands both the same job and waits.
class app_threads {
 public:
  explicit app_threads(bool limit_one) : start_(3), done_(3) {
    for (int t = 0; t < 2; ++t)
      threads_.emplace_back([this, t, limit_one] {
#if defined(LOOM_BENCH_HAVE_THREAD_LIMIT)
        loom::thread_limit guard(limit_one ? 1 : 0);
#else
        (void)limit_one;
#endif
        for (;;) {
          start_.arrive_and_wait();
          if (stop_) return;
          job_(t);
          done_.arrive_and_wait();
        }
      });
  }
  ~app_threads() {
    stop_ = true;
    start_.arrive_and_wait();
    for (auto& t : threads_) t.join();
  }
  void run(std::function<void(int)> job) {
    job_ = std::move(job);
    start_.arrive_and_wait();
    done_.arrive_and_wait();
  }

 private:
  std::barrier<> start_, done_;
  std::function<void(int)> job_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

enum class way { serial, omp_for, std_threads, std_threads_1 };

template <void (*Item)(int), void (*Check)()>
void batch_bench(benchmark::State& st, way w) {
  data();
  omp_set_num_threads(w == way::serial ? 1 : 2);
  std::unique_ptr<app_threads> app;
  if (w == way::std_threads || w == way::std_threads_1) app = std::make_unique<app_threads>(w == way::std_threads_1);
  auto once = [&] {
    switch (w) {
      case way::serial:
        for (int b = 0; b < batch; ++b) Item(b);
        break;
      case way::omp_for:
#pragma omp parallel for num_threads(2) schedule(static)
        for (int b = 0; b < batch; ++b) Item(b);
        break;
      case way::std_threads:
      case way::std_threads_1:
        app->run([](int t) {
          for (int b = t * batch / 2; b < (t + 1) * batch / 2; ++b) Item(b);
        });
        break;
    }
  };
  once();
  Check();
  for (auto _ : st) {
    once();
    touch(data().C[0].data());
  }
  st.counters["items/s"] = benchmark::Counter(double(batch) * double(st.iterations()), benchmark::Counter::kIsRate);
}

void register_all() {
  const std::pair<const char*, way> ways[] = {{"serial", way::serial},
                                              {"omp_for", way::omp_for},
                                              {"std_threads", way::std_threads},
#if defined(LOOM_BENCH_HAVE_THREAD_LIMIT)
                                              {"std_threads_1", way::std_threads_1}
#endif
  };
  for (const auto& [name, w] : ways) {
    benchmark::RegisterBenchmark((std::string("gemm_batch/") + name).c_str(), batch_bench<gemm_item, check_gemm>, w)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("rowsum_batch/") + name).c_str(), batch_bench<rowsum_item, check_rowsum>,
                                 w)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    if (w != way::std_threads_1)  // (no loom threads to limit)
      benchmark::RegisterBenchmark((std::string("plain_rowsum_batch/") + name).c_str(),
                                   batch_bench<plain_rowsum_item, check_rowsum>, w)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
