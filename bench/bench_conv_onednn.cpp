// bench/bench_conv_onednn.cpp — the convolution layers of bench/bench_conv.cpp (ResNet-50 and
// MobileNet-v2, fp32, batch 1, and the 64 @ 56^2 3 x 3 layer at batch 8) in oneDNN 2.6 (Debian's
// libdnnl-dev), convolution_forward with prop_kind::forward_inference, at 1 and 2 OpenMP threads:
// the same input and weights (fill_random, seeds 1 and 2, [-1, 1)), NHWC activations and HWIO
// weights in memory as loom has them, the same double-precision plain-loop reference and
// tolerance, checked once per thread count before anything is timed.
//
//   conv/<layer>/onednn_direct     convolution_direct, format_tag::any for src, weights and dst:
//                                  oneDNN picks its layouts (nChw16c, ...). The weights are
//                                  reordered into its layout once, outside the timed region (as
//                                  loom's are packed once); src and dst are kept in its layouts,
//                                  only the convolution is timed (the fair comparison with loom's
//                                  packed weights)
//   conv/<layer>/onednn_reorders   the two reorders the row above leaves out: the NHWC input into
//                                  oneDNN's src layout and its dst back to NHWC (an empty loop,
//                                  "reorders" 0, where oneDNN chose NHWC itself); GB/s counts what
//                                  they read and write
//   conv/<layer>/onednn_winograd   convolution_winograd, every format any, weights transformed once
//                                  outside the timed region; only where oneDNN implements it
//                                  (3 x 3 stride 1 layers are tried; an unimplemented one is not
//                                  registered). Its GFLOP/s is nominal (direct) flops per second
//   conv/<layer>/onednn_nhwc       convolution_direct on the NHWC src and dst as they are
//                                  (format_tag::nhwc, no reorder at all), weights hwio (loom's
//                                  layout, as they are) for the dense layers; for the depthwise
//                                  ones (groups dims G x 1 x 1 x KH x KW) the weights are `any`,
//                                  reordered once outside the timed region, since hwio has no
//                                  groups dimension
//
// A primitive is created once per layer, variant and thread count, after omp_set_num_threads
// (Debian's libdnnl uses OpenMP, libgomp, as loom does), with a user scratchpad allocated once
// and kept from run to run; only execute + stream.wait() are timed. Names: conv/<layer>/<impl>/
// threads:<T>. Counters: "GFLOP/s" (nominal: 2 N OH OW CO KH KW C/groups, padded taps included),
// "ms", "err" (the check's largest |got - want| / sum |in x w|). The context records oneDNN's
// version, the ISA it dispatches to and each primitive's implementation (impl_info_str, at one
// thread); DNNL_VERBOSE=1 prints the same per execution. bench/run_conv.sh runs this binary in
// its own process per thread count (--benchmark_filter=^conv/.*/onednn[a-z_]*/threads:<T>).

#include "bench_common.hpp"
#include "onednn_context.hpp"
#include "conv_layers.hpp"

#include <loom/core/tensor.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using namespace loom_bench;
using loom::index_t;

// ---- oneDNN ----
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct Dnnl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
};
Dnnl& dnnl_env() {
  static Dnnl d;
  return d;
}

dnnl::memory::dims src_dims(const Layer& l) { return {l.N, l.C, l.H, l.W}; }
dnnl::memory::dims dst_dims(const Layer& l) { return {l.N, l.CO, l.OH(), l.OW()}; }
dnnl::memory::dims w_dims(const Layer& l) {
  if (l.groups == 1) return {l.CO, l.C, l.K, l.K};
  return {l.groups, l.COg(), l.Cg(), l.K, l.K};
}
dnnl::memory::desc user_src(const Layer& l) { return {src_dims(l), dt::f32, tag::nhwc}; }
dnnl::memory::desc user_dst(const Layer& l) { return {dst_dims(l), dt::f32, tag::nhwc}; }
/// loom's HWIO weights: hwio, or with groups (G, O/G, I/G, KH, KW) at HWIO's strides.
dnnl::memory::desc user_w(const Layer& l) {
  if (l.groups == 1) return {w_dims(l), dt::f32, tag::hwio};
  const index_t Cg = l.Cg(), CO = l.CO;
  return {w_dims(l), dt::f32, dnnl::memory::dims{l.COg(), 1, CO, l.K * Cg * CO, Cg * CO}};
}

enum class variant { direct, winograd, nhwc };

/// The primitive descriptor of a variant (user scratchpad), made under the current thread count.
/// Throws dnnl::error where oneDNN has no implementation.
dnnl::convolution_forward::primitive_desc make_pd(const Layer& l, variant v) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const bool plain = v == variant::nhwc;
  const dnnl::memory::desc src = plain ? user_src(l) : dnnl::memory::desc(src_dims(l), dt::f32, tag::any);
  const dnnl::memory::desc dst = plain ? user_dst(l) : dnnl::memory::desc(dst_dims(l), dt::f32, tag::any);
  const dnnl::memory::desc wei = plain && l.groups == 1 ? user_w(l) : dnnl::memory::desc(w_dims(l), dt::f32, tag::any);
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                             v == variant::winograd ? dnnl::algorithm::convolution_winograd
                                                                    : dnnl::algorithm::convolution_direct,
                                             src, wei, dst, {l.stride, l.stride}, {l.pad, l.pad}, {l.pad, l.pad});
  return {desc, attr, dnnl_env().eng};
}

/// One variant's primitive: the convolution on memories in its own layouts (weights reordered
/// into theirs once, here), the reorders from and to the NHWC tensors, the scratchpad.
struct Prim {
  dnnl::convolution_forward conv;
  dnnl::memory user_src, user_dst, src, wei, dst, scratch;
  std::unordered_map<int, dnnl::memory> args;
  dnnl::reorder src_reorder, dst_reorder;
  bool reorder_src = false, reorder_dst = false;
  std::string impl;
};

Prim make_prim(ConvData& d, variant v) {
  auto& e = dnnl_env();
  const Layer& l = d.l;
  const auto pd = make_pd(l, v);
  Prim p;
  p.conv = dnnl::convolution_forward(pd);
  p.impl = pd.impl_info_str();
  p.user_src = dnnl::memory(user_src(l), e.eng, static_cast<void*>(d.in.data()));
  p.user_dst = dnnl::memory(user_dst(l), e.eng, static_cast<void*>(d.out.data()));
  p.reorder_src = pd.src_desc() != user_src(l);
  p.reorder_dst = pd.dst_desc() != user_dst(l);
  p.src = p.reorder_src ? dnnl::memory(pd.src_desc(), e.eng) : p.user_src;
  p.dst = p.reorder_dst ? dnnl::memory(pd.dst_desc(), e.eng) : p.user_dst;
  if (p.reorder_src) p.src_reorder = dnnl::reorder(p.user_src, p.src);
  if (p.reorder_dst) p.dst_reorder = dnnl::reorder(p.dst, p.user_dst);
  // The weights, into the primitive's layout once (loom packs its weights once likewise).
  dnnl::memory w(user_w(l), e.eng, static_cast<void*>(d.w.data()));
  if (pd.weights_desc() != user_w(l)) {
    p.wei = dnnl::memory(pd.weights_desc(), e.eng);
    dnnl::reorder(w, p.wei).execute(e.strm, w, p.wei);
    e.strm.wait();
  } else {
    p.wei = w;
  }
  p.scratch = dnnl::memory(pd.scratchpad_desc(), e.eng);
  p.args = {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_WEIGHTS, p.wei}, {DNNL_ARG_DST, p.dst}, {DNNL_ARG_SCRATCHPAD, p.scratch}};
  return p;
}

/// The primitive of (layer, variant) for this thread count, made on first use under it.
Prim& prim(ConvData& d, variant v, const benchmark::State& st) {
  static std::map<std::string, Prim> prims;
  const std::string k = std::string(d.l.name) + "/" + std::to_string(int(v)) + "/" + std::to_string(st.range(0));
  auto it = prims.find(k);
  if (it == prims.end()) it = prims.emplace(k, make_prim(d, v)).first;
  return it->second;
}

/// NHWC in -> reorder -> convolution -> reorder -> NHWC out, once, compared with the reference;
/// returns the largest error relative to sum |in x w|.
double check_prim(const std::string& name, ConvData& d, Prim& p, double rtol) {
  auto& strm = dnnl_env().strm;
  std::fill(d.out.begin(), d.out.end(), std::numeric_limits<float>::quiet_NaN());
  if (p.reorder_dst) {  // poison oneDNN's own dst too: a conv that writes nothing must not pass
    std::vector<float> nan(p.dst.get_desc().get_size() / sizeof(float), std::numeric_limits<float>::quiet_NaN());
    std::copy(nan.begin(), nan.end(), static_cast<float*>(p.dst.get_data_handle()));
  }
  if (p.reorder_src) p.src_reorder.execute(strm, p.user_src, p.src);
  p.conv.execute(strm, p.args);
  if (p.reorder_dst) p.dst_reorder.execute(strm, p.dst, p.user_dst);
  strm.wait();
  check_close(name, d.out.data(), d.ref.data(), d.ref.size(), rtol, 0.0, d.scale.data());
  double worst = 0;
  for (std::size_t q = 0; q < d.ref.size(); ++q)
    if (d.scale[q] > 0) worst = std::max(worst, std::abs(double(d.out.data()[q]) - d.ref[q]) / d.scale[q]);
  return worst;
}

std::map<std::string, double>& errors() {
  static std::map<std::string, double> m;
  return m;
}

void set_counters(benchmark::State& st, const Layer& l, double err) {
  set_flops(st, l.flops());
  st.counters["bytes"] = benchmark::Counter(l.bytes());
  st.counters["ms"] = benchmark::Counter(double(st.iterations()) / 1e3, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.counters["err"] = benchmark::Counter(err);
}

/// The convolution alone (src, weights, dst in the primitive's layouts).
void onednn_conv(benchmark::State& st, const Layer& l, variant v, const std::string& name) {
  use_threads(st);  // omp_set_num_threads: oneDNN's OpenMP regions use this thread's setting
  auto& d = data(l);
  auto& strm = dnnl_env().strm;
  Prim* p = nullptr;
  try {
    p = &prim(d, v, st);
  } catch (const dnnl::error& e) {
    st.SkipWithError((std::string("oneDNN: ") + e.what()).c_str());
    return;
  }
  check_once(key(name, st), [&] { errors()[key(name, st)] = check_prim(name, d, *p, v == variant::winograd ? rtol_winograd : rtol_direct); });
  for (auto _ : st) {
    p->conv.execute(strm, p->args);
    strm.wait();
    touch(d.out.data());
  }
  set_counters(st, l, errors()[key(name, st)]);
}

/// The reorders onednn_direct leaves out: NHWC in -> oneDNN's src layout, its dst -> NHWC out.
void onednn_reorders(benchmark::State& st, const Layer& l, const std::string& name) {
  use_threads(st);
  auto& d = data(l);
  auto& strm = dnnl_env().strm;
  Prim& p = prim(d, variant::direct, st);
  check_once(key(name, st), [&] { errors()[key(name, st)] = check_prim(name, d, p, rtol_direct); });
  for (auto _ : st) {
    if (p.reorder_src) p.src_reorder.execute(strm, p.user_src, p.src);
    if (p.reorder_dst) p.dst_reorder.execute(strm, p.dst, p.user_dst);
    strm.wait();
    touch(d.out.data());
  }
  const double bytes = 2.0 * 4.0 * ((p.reorder_src ? double(d.in.size()) : 0.0) + (p.reorder_dst ? double(d.out.size()) : 0.0));
  set_bytes(st, bytes);
  st.counters["ms"] = benchmark::Counter(double(st.iterations()) / 1e3, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.counters["reorders"] = benchmark::Counter(double(int(p.reorder_src) + int(p.reorder_dst)));
}

/// The implementation oneDNN picks for (layer, variant) at the current thread count, or why none.
std::string impl_of(const Layer& l, variant v) {
  try {
    return make_pd(l, v).impl_info_str();
  } catch (const dnnl::error& e) {
    return std::string("none (") + e.what() + ")";
  }
}

template <class F>
void reg(const std::string& name, F&& f) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(f))->Apply(thread_args);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Winograd is registered only where oneDNN implements it (probed at one thread: it has one
  // implementation, avx512_core's F(4, 3), whatever the thread count).
  omp_set_num_threads(1);
  for (const Layer& l : layers) {
    const std::string base = std::string("conv/") + l.name;
    reg(base + "/onednn_direct", [&l, base](benchmark::State& st) { onednn_conv(st, l, variant::direct, base + "/onednn_direct"); });
    reg(base + "/onednn_reorders", [&l, base](benchmark::State& st) { onednn_reorders(st, l, base + "/onednn_reorders"); });
    if (l.K == 3 && l.stride == 1) {
      const std::string wino = impl_of(l, variant::winograd);
      benchmark::AddCustomContext(std::string("onednn_") + l.name + "_winograd", wino);
      if (wino.rfind("none", 0) != 0)
        reg(base + "/onednn_winograd",
            [&l, base](benchmark::State& st) { onednn_conv(st, l, variant::winograd, base + "/onednn_winograd"); });
    }
    reg(base + "/onednn_nhwc", [&l, base](benchmark::State& st) { onednn_conv(st, l, variant::nhwc, base + "/onednn_nhwc"); });
    benchmark::AddCustomContext(std::string("onednn_") + l.name + "_direct", impl_of(l, variant::direct));
    benchmark::AddCustomContext(std::string("onednn_") + l.name + "_nhwc", impl_of(l, variant::nhwc));
  }
  add_onednn_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
