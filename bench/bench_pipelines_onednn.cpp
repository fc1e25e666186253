// bench/bench_pipelines_onednn.cpp — the row-wise kernels of bench/bench_pipelines.cpp (softmax
// and layer norm over the rows of X, 4096 x 4096 float) in oneDNN 2.6 (Debian's libdnnl-dev), at
// 1 and 2 OpenMP threads: the same input (fill_random, seed 11, [-3, 3)), the same double-precision
// row-loop reference and the same tolerances, checked once per thread count before anything is timed.
//
//   softmax/onednn     softmax_forward, prop_kind::forward_inference, axis 1 (Y = exp(X - max) / sum)
//   layernorm/onednn   layer_normalization_forward, forward_inference, epsilon 1e-5, no flags: no
//                      scale or shift, statistics computed from each row (loom's layer norm is
//                      (X - mean) / sqrt(var + 1e-5) with the biased variance, the same math)
//
// X and Y are loom::Tensor<float, 2> (64-byte aligned, row-major) wrapped as plain `ab` memory; the
// primitives are created once per kernel and thread count, after omp_set_num_threads, with a user
// scratchpad allocated once and kept from run to run (as loom keeps its arena; layer norm keeps its
// per-row mean and variance there); only execute + stream.wait() are timed.
//
// Threads: Debian's libdnnl uses OpenMP (libgomp, the runtime loom's benchmarks use), so
// use_threads' omp_set_num_threads(T) sets oneDNN's thread count; bench/run_pipelines.sh runs each
// thread count in its own process (--benchmark_filter=^<kernel>/onednn/threads:<T>), as it does
// Halide. Names follow bench_pipelines: <kernel>/onednn/threads:<T>. Counters as there: "GB/s"
// (input + output once), "ms", "storage_bytes" (the primitive's scratchpad). The context records
// oneDNN's version, the ISA it dispatches to and each primitive's implementation (impl_info_str);
// DNNL_VERBOSE=1 prints the same per execution.

#include "bench_common.hpp"
#include "onednn_context.hpp"
#include "rowwise_data.hpp"

#include <loom/core/tensor.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using namespace loom_bench;
using loom::index_t;

struct Dnnl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::memory::desc md{{NR, NR}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab};
};
Dnnl& dnnl_env() {
  static Dnnl d;
  return d;
}

enum class rowwise { softmax, layernorm };

/// The primitive descriptor of a kernel (user scratchpad), made under the current thread count.
template <rowwise K>
auto make_pd() {
  auto& e = dnnl_env();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if constexpr (K == rowwise::softmax) {
    const dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, e.md, 1);
    return dnnl::softmax_forward::primitive_desc(desc, attr, e.eng);
  } else {
    const dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, e.md, ln_eps,
                                                       dnnl::normalization_flags::none);
    return dnnl::layer_normalization_forward::primitive_desc(desc, attr, e.eng);
  }
}

/// One kernel's primitive and its arguments (X, Y and the scratchpad), kept from run to run.
struct Prim {
  dnnl::primitive prim;
  dnnl::memory scratch;
  std::unordered_map<int, dnnl::memory> args;
  std::size_t scratch_bytes = 0;
};

template <rowwise K>
Prim make_prim() {
  auto& e = dnnl_env();
  auto& d = rows();
  const auto pd = make_pd<K>();
  Prim p;
  if constexpr (K == rowwise::softmax)
    p.prim = dnnl::softmax_forward(pd);
  else
    p.prim = dnnl::layer_normalization_forward(pd);
  p.scratch_bytes = pd.scratchpad_desc().get_size();
  p.scratch = dnnl::memory(pd.scratchpad_desc(), e.eng);  // allocated by oneDNN, once
  p.args = {{DNNL_ARG_SRC, dnnl::memory(e.md, e.eng, static_cast<void*>(d.X.data()))},
            {DNNL_ARG_DST, dnnl::memory(e.md, e.eng, static_cast<void*>(d.Y.data()))},
            {DNNL_ARG_SCRATCHPAD, p.scratch}};
  return p;
}

template <rowwise K>
void onednn_kernel(benchmark::State& st, const std::string& name) {
  use_threads(st);  // omp_set_num_threads: oneDNN's OpenMP regions use this thread's setting
  auto& d = rows();
  auto& strm = dnnl_env().strm;
  static std::map<std::string, Prim> prims;  // one per thread count, made under that count
  auto it = prims.find(key(name, st));
  if (it == prims.end()) it = prims.emplace(key(name, st), make_prim<K>()).first;
  Prim& p = it->second;
  check_once(key(name, st), [&] {
    std::fill(d.Y.begin(), d.Y.end(), std::numeric_limits<float>::quiet_NaN());
    p.prim.execute(strm, p.args);
    strm.wait();
    const auto& ref = K == rowwise::softmax ? d.soft : d.norm;
    check_close(name, d.Y.data(), ref.data(), ref.size(), 1e-4, K == rowwise::softmax ? 1e-9 : 1e-5);
  });
  for (auto _ : st) {
    p.prim.execute(strm, p.args);
    strm.wait();
    touch(d.Y.data());
  }
  set_bytes(st, 2.0 * 4.0 * double(NR * NR));
  st.counters["ms"] = benchmark::Counter(double(st.iterations()) / 1e3, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.counters["storage_bytes"] = benchmark::Counter(double(p.scratch_bytes));
}

template <class F>
void reg(const std::string& name, F&& f) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(f))->Apply(thread_args);
}

}  // namespace

int main(int argc, char** argv) {
  reg("softmax/onednn", [](benchmark::State& st) { onednn_kernel<rowwise::softmax>(st, "softmax/onednn"); });
  reg("layernorm/onednn", [](benchmark::State& st) { onednn_kernel<rowwise::layernorm>(st, "layernorm/onednn"); });
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  add_onednn_context();
  benchmark::AddCustomContext("onednn_softmax_impl", make_pd<rowwise::softmax>().impl_info_str());
  benchmark::AddCustomContext("onednn_layernorm_impl", make_pd<rowwise::layernorm>().impl_info_str());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
