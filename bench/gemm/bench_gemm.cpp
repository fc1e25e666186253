// bench/gemm/bench_gemm.cpp — C = A B (row-major, float and double) timed with ONE library per
// binary, chosen at compile time by LOOM_GEMM_LIB:
//
//   loom      loom::gemm, the index-notation entry (plain and with a fused bias + ReLU) and the
//             static small-shape path
//   openblas  cblas_sgemm/dgemm (libopenblas-dev)        blis     bli_sgemm/dgemm (libblis-dev)
//   eigen     Eigen 3.4 matrix product (RowMajor)        onednn   dnnl_sgemm (libdnnl-dev)
//   libxsmm   a dispatched small-matrix kernel (libxsmm-dev; shapes <= 64 only)
//
// One library per process: OpenBLAS's and BLIS's cblas symbols clash, and OpenBLAS's pthread
// workers keep spinning after a call, which would slow whatever OpenMP code ran next in the same
// process. bench/run_gemm.sh builds every binary it can and runs them in turn.
//
// Benchmarks are named  <lib>/<s|d>gemm/<M>x<N>x<K>/threads:<t>  (loom adds gemm_bias_relu and
// static). Every kernel is checked once against a double-precision dot product on sampled
// elements before it is timed; a wrong result aborts the run.
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../bench_common.hpp"

#define LOOM_GEMM_LIB_loom 1
#define LOOM_GEMM_LIB_openblas 2
#define LOOM_GEMM_LIB_blis 3
#define LOOM_GEMM_LIB_eigen 4
#define LOOM_GEMM_LIB_onednn 5
#define LOOM_GEMM_LIB_libxsmm 6
#define LOOM_GEMM_CAT2(a, b) a##b
#define LOOM_GEMM_CAT(a, b) LOOM_GEMM_CAT2(a, b)
#define LOOM_GEMM_ID LOOM_GEMM_CAT(LOOM_GEMM_LIB_, LOOM_GEMM_LIB)
#define LOOM_GEMM_STR2(a) #a
#define LOOM_GEMM_STR(a) LOOM_GEMM_STR2(a)

#if LOOM_GEMM_ID == LOOM_GEMM_LIB_loom
#include <loom/loom.hpp>
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_openblas
#include <cblas.h>
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_blis
#include <blis.h>
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_eigen
#if !defined(LOOM_HAVE_EIGEN)
#error "LOOM_GEMM_LIB=eigen needs -DLOOM_HAVE_EIGEN=1 and Eigen's include path"
#endif
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_onednn
#include <dnnl.h>
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_libxsmm
#include <libxsmm.h>
#else
#error "define LOOM_GEMM_LIB as one of loom, openblas, blis, eigen, onednn, libxsmm"
#endif

namespace {

using idx = long;
const char* const lib_name = LOOM_GEMM_STR(LOOM_GEMM_LIB);

struct shape {
  idx M, N, K;
};
/// The shapes: squares, a wide panel (M small) and a ResNet convolution as GEMM.
const shape shapes[] = {{16, 16, 16},     {32, 32, 32},       {64, 64, 64},     {128, 128, 128},
                        {256, 256, 256},  {512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048},
                        {64, 4096, 1024}, {3136, 64, 576}};

template <class T>
struct operands {
  idx M, N, K;
  std::unique_ptr<T[], void (*)(T*)> a{nullptr, [](T*) {}}, b{nullptr, [](T*) {}}, c{nullptr, [](T*) {}},
      bias{nullptr, [](T*) {}};
  static T* alloc(idx n) {
    void* p = std::aligned_alloc(64, std::size_t((n * idx(sizeof(T)) + 63) / 64 * 64));
    return static_cast<T*>(p);
  }
  explicit operands(shape s) : M(s.M), N(s.N), K(s.K) {
    auto own = [](idx n) { return std::unique_ptr<T[], void (*)(T*)>(alloc(n), [](T* p) { std::free(p); }); };
    a = own(M * K);
    b = own(K * N);
    c = own(M * N);
    bias = own(N);
    loom_bench::fill_random(a.get(), std::size_t(M * K), 1);
    loom_bench::fill_random(b.get(), std::size_t(K * N), 2);
    loom_bench::fill_random(bias.get(), std::size_t(N), 3);
    std::fill(c.get(), c.get() + M * N, T(0));
  }
};

/// Checks ~100 sampled elements of C against max(A B + bias, 0) (relu) or A B, in double.
template <class T>
void check(const std::string& name, const operands<T>& o, bool bias_relu) {
  std::vector<T> got;
  std::vector<double> want, scale;
  const idx samples = std::min<idx>(o.M * o.N, 97);
  for (idx s = 0; s < samples; ++s) {
    const idx q = (s * 7919 + s * s * 104729) % (o.M * o.N);
    const idx r = q / o.N, col = q % o.N;
    double d = 0, a = 0;
    for (idx k = 0; k < o.K; ++k) {
      d += double(o.a[std::size_t(r * o.K + k)]) * double(o.b[std::size_t(k * o.N + col)]);
      a += std::abs(double(o.a[std::size_t(r * o.K + k)]) * double(o.b[std::size_t(k * o.N + col)]));
    }
    if (bias_relu) d = std::max(d + double(o.bias[std::size_t(col)]), 0.0);
    got.push_back(o.c[std::size_t(q)]);
    want.push_back(d);
    scale.push_back(a + 1);
  }
  const double eps = std::numeric_limits<T>::epsilon();
  loom_bench::check_close(name, got.data(), want.data(), got.size(), double(o.K + 2) * eps, 0.0, scale.data());
}

// ---------------------------------------------------------------------------------------------
// The library under test: set_threads(t) and gemm(o) computing C = A B, row-major.
// ---------------------------------------------------------------------------------------------
#if LOOM_GEMM_ID == LOOM_GEMM_LIB_loom
void set_threads(int t) { omp_set_num_threads(t); }
/// A, B, C as row-major loom views of the operands' memory (layout_right: contiguous rows, as
/// loom::view makes them). Inlined, as a user's own code that builds its views where it calls
/// loom would be: returned through memory from a call, the three views (strides and 32-byte
/// names) cost ~30 ns per call, a quarter of a 16^3 product.
template <class T>
LOOM_INLINE auto views(operands<T>& o) {
  struct {
    loom::TensorView<T, 2, loom::dims<2>, loom::layout_right> A, B, C;
  } v{loom::view(o.a.get(), loom::shape(o.M, o.K), "A"), loom::view(o.b.get(), loom::shape(o.K, o.N), "B"),
      loom::view(o.c.get(), loom::shape(o.M, o.N), "C")};
  return v;
}
template <class T>
void gemm(operands<T>& o) {
  auto [A, B, C] = views(o);
  loom::gemm(C, A, B);
}
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_openblas
void set_threads(int t) { openblas_set_num_threads(t); }
template <class T>
void gemm(operands<T>& o) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(o.M), int(o.N), int(o.K), 1.f, o.a.get(), int(o.K),
                o.b.get(), int(o.N), 0.f, o.c.get(), int(o.N));
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(o.M), int(o.N), int(o.K), 1.0, o.a.get(), int(o.K),
                o.b.get(), int(o.N), 0.0, o.c.get(), int(o.N));
}
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_blis
void set_threads(int t) { bli_thread_set_num_threads(t); }
template <class T>
void gemm(operands<T>& o) {
  T one = 1, zero = 0;
  if constexpr (std::is_same_v<T, float>)
    bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, o.M, o.N, o.K, &one, o.a.get(), o.K, 1, o.b.get(), o.N, 1, &zero,
              o.c.get(), o.N, 1);
  else
    bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, o.M, o.N, o.K, &one, o.a.get(), o.K, 1, o.b.get(), o.N, 1, &zero,
              o.c.get(), o.N, 1);
}
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_eigen
void set_threads(int t) {
  omp_set_num_threads(t);
  Eigen::setNbThreads(t);
}
template <class T>
void gemm(operands<T>& o) {
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Mat> A(o.a.get(), o.M, o.K), B(o.b.get(), o.K, o.N);
  Eigen::Map<Mat> C(o.c.get(), o.M, o.N);
  C.noalias() = A * B;
}
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_onednn
void set_threads(int t) { omp_set_num_threads(t); }
template <class T>
void gemm(operands<T>& o) {
  if constexpr (std::is_same_v<T, float>) {
    if (dnnl_sgemm('N', 'N', o.M, o.N, o.K, 1.f, o.a.get(), o.K, o.b.get(), o.N, 0.f, o.c.get(), o.N) != dnnl_success)
      loom_bench::fail("dnnl_sgemm failed");
  } else {
    loom_bench::fail("oneDNN has no double GEMM");
  }
}
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_libxsmm
void set_threads(int) {}
// libxsmm is column-major: C^T = B^T A^T is the row-major product, with B's pointer as "A".
template <class T>
struct xsmm_kernel {
  libxsmm_mmfunction<T> f;
  explicit xsmm_kernel(const operands<T>& o)
      : f(LIBXSMM_GEMM_FLAG_NONE, libxsmm_blasint(o.N), libxsmm_blasint(o.M), libxsmm_blasint(o.K),
          libxsmm_blasint(o.N), libxsmm_blasint(o.K), libxsmm_blasint(o.N), T(1), T(0)) {}
};
template <class T>
void gemm(operands<T>& o) {
  static thread_local idx cached_m = -1, cached_n = -1, cached_k = -1;
  static thread_local std::unique_ptr<xsmm_kernel<T>> k;
  if (o.M != cached_m || o.N != cached_n || o.K != cached_k) {
    k = std::make_unique<xsmm_kernel<T>>(o);
    if (!k->f) loom_bench::fail("libxsmm could not dispatch a kernel");
    cached_m = o.M, cached_n = o.N, cached_k = o.K;
  }
  k->f(o.b.get(), o.a.get(), o.c.get());
}
#endif

constexpr bool library_has(shape s, bool is_double) {
#if LOOM_GEMM_ID == LOOM_GEMM_LIB_onednn
  if (is_double) return false;
#elif LOOM_GEMM_ID == LOOM_GEMM_LIB_libxsmm
  (void)is_double;
  return s.M <= 64 && s.N <= 64 && s.K <= 64;
#endif
  (void)s, (void)is_double;
  return true;
}

std::string shape_name(shape s) {
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
}

template <class T, class Run>
void register_one(const std::string& kernel, shape s, int threads, Run run, bool bias_relu = false) {
  const std::string name = std::string(lib_name) + "/" + kernel + "/" + shape_name(s);
  benchmark::RegisterBenchmark((name + "/threads:" + std::to_string(threads)).c_str(),
                               [=](benchmark::State& state) {
                                 set_threads(threads);
                                 operands<T> o(s);
                                 run(o);
                                 loom_bench::check_once(name + std::to_string(threads),
                                                        [&] { check(name, o, bias_relu); });
                                 for (auto _ : state) {
                                   run(o);
                                   loom_bench::touch(o.c.get());
                                 }
                                 loom_bench::set_flops(state, 2.0 * double(s.M) * double(s.N) * double(s.K));
                               })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

#if LOOM_GEMM_ID == LOOM_GEMM_LIB_loom
/// C(i, j) = max(sum(k, A(i, k) * B(k, j)) + bias(j), 0): one engine call, epilogue fused.
template <class T>
void gemm_bias_relu(operands<T>& o) {
  using namespace loom::vars;
  auto [A, B, C] = views(o);
  auto bias = loom::view(o.bias.get(), loom::shape(o.N), "bias");
  loom::run(C(i, j) = max(sum(k, A(i, k) * B(k, j)) + bias(j), T(0)));
}
/// The same product written in index notation without an epilogue.
template <class T>
void gemm_notation(operands<T>& o) {
  using namespace loom::vars;
  auto [A, B, C] = views(o);
  loom::run(C(i, j) = sum(k, A(i, k) * B(k, j)));
}
/// Static extents: the compiler knows every loop trip (the small-shape path).
template <class T, idx S>
void gemm_static(operands<T>& o) {
  using E = loom::extents<S, S>;
  // Row-major rows (layout_right): the unit column strides are part of the type.
  using V = loom::TensorView<T, 2, E, loom::layout_right>;
  V A(o.a.get(), E{}, "A"), B(o.b.get(), E{}, "B"), C(o.c.get(), E{}, "C");
  loom::gemm(C, A, B);
}
#endif

int register_all() {
  for (shape s : shapes) {
    for (int t : loom_bench::thread_counts) {
      if (t > 1 && s.M * s.N * s.K < 64 * 64 * 64) continue;  // too small to share
      if (library_has(s, false)) register_one<float>("sgemm", s, t, [](operands<float>& o) { gemm(o); });
#if LOOM_GEMM_ID == LOOM_GEMM_LIB_loom
      register_one<float>("sgemm_notation", s, t, [](operands<float>& o) { gemm_notation(o); });
      register_one<float>("sgemm_bias_relu", s, t, [](operands<float>& o) { gemm_bias_relu(o); }, true);
#endif
      if (library_has(s, true) && s.M == s.N && s.N == s.K && s.M >= 256)
        register_one<double>("dgemm", s, t, [](operands<double>& o) { gemm(o); });
    }
  }
#if LOOM_GEMM_ID == LOOM_GEMM_LIB_loom
  register_one<float>("sgemm_static", {16, 16, 16}, 1, [](operands<float>& o) { gemm_static<float, 16>(o); });
  register_one<float>("sgemm_static", {32, 32, 32}, 1, [](operands<float>& o) { gemm_static<float, 32>(o); });
  register_one<float>("sgemm_static", {64, 64, 64}, 1, [](operands<float>& o) { gemm_static<float, 64>(o); });
#endif
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("gemm_library", lib_name);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
