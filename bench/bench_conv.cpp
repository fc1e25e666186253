// bench/bench_conv.cpp — loom::conv2d (kernels/conv.hpp) on the layers of ResNet-50 and
// MobileNet-v2, fp32, NHWC activations, HWIO weights, at 1 and 2 OpenMP threads.
// bench/bench_conv_onednn.cpp runs the same layers in oneDNN 2.6; bench/run_conv.sh runs both and
// prints the comparison.
//
//   layer               N  H x W      C -> CO   kernel  stride pad groups
//   r3x3_64_56          1  56 x 56   64 -> 64   3 x 3   1      1   1       ResNet-50 conv2_x
//   r3x3_128_28         1  28 x 28  128 -> 128  3 x 3   1      1   1       conv3_x
//   r3x3_256_14         1  14 x 14  256 -> 256  3 x 3   1      1   1       conv4_x
//   r3x3_512_7          1   7 x 7   512 -> 512  3 x 3   1      1   1       conv5_x
//   r1x1_64_256_56      1  56 x 56   64 -> 256  1 x 1   1      0   1       conv2_x expansion
//   r1x1s2_256_512_56   1  56 x 56  256 -> 512  1 x 1   2      0   1       conv3_1 projection
//   stem7x7             1 224 x 224   3 -> 64   7 x 7   2      3   1       conv1
//   dw32_112            1 112 x 112  32 -> 32   3 x 3   1      1   32      MobileNet-v2 depthwise
//   dw96_112s2          1 112 x 112  96 -> 96   3 x 3   2      1   96
//   dw144_56            1  56 x 56  144 -> 144  3 x 3   1      1   144
//   dw576_14            1  14 x 14  576 -> 576  3 x 3   1      1   576
//   r3x3_64_56_n8       8  56 x 56   64 -> 64   3 x 3   1      1   1       conv2_x at batch 8
//
//   conv/<layer>/loom            loom::conv2d(out, in, pw, params) with weights packed once by
//                                loom::pack_conv2d_weights, outside the timed region, algorithm
//                                automatic (loom's default: Winograd F(4 x 4, 3 x 3) where it applies
//                                and pays, else direct; counter "winograd" says which ran)
//   conv/<layer>/loom_direct     the same with conv_algorithm::direct   } on the layers Winograd
//   conv/<layer>/loom_winograd   the same with conv_algorithm::winograd } applies to (3 x 3, stride 1)
//   conv/<layer>/loom_winograd_2x2 the same with ::winograd_2x2        }
//   conv/<layer>/loom_unpacked   loom::conv2d(out, in, w, params) on the HWIO weights: each call
//                                packs them (1 x 1 stride-1 layers: the GEMM engine on the tensors)
//   conv/<layer>/loom_nchw       the loom row on NCHW tensors (in N x C x H x W, out N x CO x OH x OW)
//                                seen as NHWC through permuted views (stride(3) != 1): conv2d gathers
//                                the input to NHWC and scatters the result back (kernels/conv/layout.hpp)
//   conv/<layer>/loom_index      the convolution in index notation, loom::run of
//                                out(n, y, x, co) = sum(ry, rx, ci, pin(n, y + ry - 1, x + rx - 1, ci)
//                                * w(ry, rx, ci, co)) with pin = constant_exterior(in, 0.f): the engine
//                                packs the weights on each call } only on the layers of that one form
//   conv/<layer>/loom_index_fused   the same as max(sum(...) + bias(co) + skip(n, y, x, co), 0.f),  }
//                                the epilogue on each register tile   } (3 x 3, stride 1, padding 1, dense)
//   conv/<layer>/naive           the plain loop (float sums; output channels innermost, so the
//                                compiler vectorizes it; OpenMP over output rows): what no engine gives
//
// Names: conv/<layer>/<impl>/threads:<T>. Counters: "GFLOP/s" (nominal: 2 N OH OW CO KH KW C/groups,
// padded taps included, as oneDNN and the papers count; Winograd's too, so it may pass the FMA
// peak), "ms" (per run), "err" (the check's largest |got - want| / sum |in x w|). The input and
// weights are fill_random in [-1, 1) (seeds 1 and 2); every implementation is checked once per
// thread count, before it is timed, against a double-precision plain loop: |got - want| <=
// rtol x sum |in x w| over the element's terms, rtol 3e-5 for direct sums (a float sum of K terms
// in any order stays well inside it), 1e-3 where Winograd ran; a wrong result aborts the run.
// loom_index_fused is checked against max(that loop + bias + skip, 0) (bias and skip
// fill_random in [-1, 1), seeds 3 and 4), with 1e-5 more (float sums of the two terms).
//
// Run: bench/run_conv.sh, or bench_conv --benchmark_repetitions=5
// --benchmark_report_aggregates_only=true [--benchmark_filter=^conv/r3x3_64_56/] and read the medians.

#include "bench_common.hpp"
#include "conv_layers.hpp"

#include <loom/kernels/conv.hpp>
#include <loom/run.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace loom_bench;
using loom::index_t;

/// The layer's loom parameters under an algorithm.
loom::conv2d_params conv_params(const Layer& l, loom::conv_algorithm a = loom::conv_algorithm::automatic) {
  return {.stride = {l.stride, l.stride}, .padding = l.pad, .dilation = {1, 1}, .groups = l.groups, .algorithm = a};
}

using Packed = loom::conv2d_packed_weights<loom::default_conv_policy<float>>;

/// The layer's weights packed by loom::pack_conv2d_weights under an algorithm, once.
const Packed& packed(const Layer& l, loom::conv_algorithm a) {
  static std::map<std::pair<std::string, int>, Packed> m;
  const auto k = std::make_pair(std::string(l.name), int(a));
  auto it = m.find(k);
  if (it == m.end()) it = m.emplace(k, loom::pack_conv2d_weights(data(l).w, conv_params(l, a))).first;
  return it->second;
}

/// Whether loom runs Winograd F(4 x 4, 3 x 3) for this layer under algorithm a (the rule of
/// kernels/conv/params.hpp, read from the library).
bool runs_winograd(const Layer& l, loom::conv_algorithm a) {
  auto& d = data(l);
  const auto p = conv_params(l, a);
  const auto s = loom::conv_detail::check(d.out.as_view(), d.in.as_view(), d.w.as_view(), p);
  return loom::conv_detail::chosen_path<float>(s, a) != loom::conv_detail::conv_path::direct;
}
/// Whether Winograd applies to the layer at all (3 x 3, stride 1, one group).
bool winograd_applies(const Layer& l) { return loom::conv_detail::winograd_applies(l.K, l.K, conv_params(l)); }

std::map<std::string, double>& errors() {
  static std::map<std::string, double> m;
  return m;
}

/// The check: the output against the reference; records the largest error relative to sum |in x w|.
void check(const std::string& name, const benchmark::State& st, ConvData& d, double rtol) {
  check_close(name, d.out.data(), d.ref.data(), d.ref.size(), rtol, 0.0, d.scale.data());
  double worst = 0;
  for (std::size_t q = 0; q < d.ref.size(); ++q)
    if (d.scale[q] > 0) worst = std::max(worst, std::abs(double(d.out.data()[q]) - d.ref[q]) / d.scale[q]);
  errors()[key(name, st)] = worst;
}

void set_counters(benchmark::State& st, const Layer& l, const std::string& name) {
  set_flops(st, l.flops());
  st.counters["bytes"] = benchmark::Counter(l.bytes());
  st.counters["ms"] = benchmark::Counter(double(st.iterations()) / 1e3, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.counters["err"] = benchmark::Counter(errors()[key(name, st)]);
}

/// loom::conv2d under algorithm a: with the weights packed once (outside the timed region), or
/// with the raw weights (packed by each call; 1 x 1 stride-1 layers run on the GEMM engine).
void loom_conv(benchmark::State& st, const Layer& l, loom::conv_algorithm a, bool prepacked, const std::string& name) {
  use_threads(st);
  auto& d = data(l);
  const loom::conv2d_params p = conv_params(l, a);
  const Packed* pw = prepacked ? &packed(l, a) : nullptr;
  const bool wino = runs_winograd(l, a);
  auto once = [&] {
    if (prepacked) loom::conv2d(d.out, d.in, *pw, p);
    else loom::conv2d(d.out, d.in, d.w, p);
  };
  check_once(key(name, st), [&] {
    std::fill(d.out.begin(), d.out.end(), std::numeric_limits<float>::quiet_NaN());
    once();
    check(name, st, d, wino ? rtol_winograd : rtol_direct);
  });
  for (auto _ : st) {
    once();
    touch(d.out.data());
  }
  set_counters(st, l, name);
  st.counters["winograd"] = benchmark::Counter(wino ? 1.0 : 0.0);
}

/// The layer's operands as NCHW tensors (in N x C x H x W holding d.in's values, out N x CO x OH x
/// OW) and their NHWC views, made on first use.
struct NchwData {
  loom::Tensor<float, 4> in, out;
  loom::TensorView<float, 4> in_v, out_v;
  explicit NchwData(const Layer& l)
      : in("in", l.N, l.C, l.H, l.W), out("out", l.N, l.CO, l.OH(), l.OW()), in_v(in.permuted<0, 2, 3, 1>()),
        out_v(out.permuted<0, 2, 3, 1>()) {
    const auto& d = data(l);
    for (index_t n = 0; n < l.N; ++n)
      for (index_t y = 0; y < l.H; ++y)
        for (index_t x = 0; x < l.W; ++x)
          for (index_t c = 0; c < l.C; ++c) in_v(n, y, x, c) = d.in(n, y, x, c);
  }
};
NchwData& nchw_data(const Layer& l) {
  static std::map<std::string, std::unique_ptr<NchwData>> m;
  auto& t = m[l.name];
  if (!t) t = std::make_unique<NchwData>(l);
  return *t;
}

/// loom::conv2d on NCHW tensors seen through permuted views, packed weights, algorithm automatic.
void loom_nchw_conv(benchmark::State& st, const Layer& l, const std::string& name) {
  use_threads(st);
  auto& d = data(l);
  auto& t = nchw_data(l);
  const loom::conv2d_params p = conv_params(l);
  const Packed& pw = packed(l, loom::conv_algorithm::automatic);
  const bool wino = runs_winograd(l, loom::conv_algorithm::automatic);
  check_once(key(name, st), [&] {
    std::fill(t.out.begin(), t.out.end(), std::numeric_limits<float>::quiet_NaN());
    loom::conv2d(t.out_v, t.in_v, pw, p);
    for (index_t n = 0; n < l.N; ++n)  // into d.out (NHWC), which check() reads
      for (index_t y = 0; y < l.OH(); ++y)
        for (index_t x = 0; x < l.OW(); ++x)
          for (index_t co = 0; co < l.CO; ++co) d.out(n, y, x, co) = t.out_v(n, y, x, co);
    check(name, st, d, wino ? rtol_winograd : rtol_direct);
  });
  for (auto _ : st) {
    loom::conv2d(t.out_v, t.in_v, pw, p);
    touch(t.out.data());
  }
  set_counters(st, l, name);
  st.counters["winograd"] = benchmark::Counter(wino ? 1.0 : 0.0);
}

/// Whether the layer has the one form the index-notation rows compile: 3 x 3, stride 1, padding 1,
/// dense.
bool index_form(const Layer& l) { return l.K == 3 && l.stride == 1 && l.pad == 1 && l.groups == 1; }

/// The fused row's extra operands (bias fill_random seed 3, skip seed 4) and its expected result,
/// max(reference + bias + skip, 0) in double, made on first use.
struct FusedData {
  loom::Tensor<float, 1> bias;
  loom::Tensor<float, 4> skip;
  std::vector<double> want;
  explicit FusedData(const Layer& l) : bias("bias", l.CO), skip("skip", l.N, l.OH(), l.OW(), l.CO) {
    fill_random(bias.data(), std::size_t(bias.size()), 3u);
    fill_random(skip.data(), std::size_t(skip.size()), 4u);
    const auto& d = data(l);
    want.resize(d.ref.size());
    for (std::size_t q = 0; q < want.size(); ++q)
      want[q] = std::max(d.ref[q] + double(bias.data()[q % std::size_t(l.CO)]) + double(skip.data()[q]), 0.0);
  }
};
FusedData& fused_data(const Layer& l) {
  static std::map<std::string, std::unique_ptr<FusedData>> m;
  auto& f = m[l.name];
  if (!f) f = std::make_unique<FusedData>(l);
  return *f;
}

/// The convolution in loom's index notation (loom::run; the engine picks Winograd or direct as
/// conv2d's automatic choice does), bare or with bias + skip + ReLU fused.
void loom_index_conv(benchmark::State& st, const Layer& l, bool fused, const std::string& name) {
  using loom::vars::n, loom::vars::y, loom::vars::x, loom::vars::ry, loom::vars::rx;
  constexpr loom::Var<"co"> co;
  constexpr loom::Var<"ci"> ci;
  use_threads(st);
  auto& d = data(l);
  auto& f = fused_data(l);
  const bool wino = runs_winograd(l, loom::conv_algorithm::automatic);
  const auto pin = loom::constant_exterior(d.in, 0.f);
  const auto conv = sum(ry, rx, ci, pin(n, y + ry - 1, x + rx - 1, ci) * d.w(ry, rx, ci, co));
  const auto bare = (d.out(n, y, x, co) = conv);
  const auto with_epilogue = (d.out(n, y, x, co) = max(conv + f.bias(co) + f.skip(n, y, x, co), 0.f));
  auto once = [&] {
    if (fused) loom::run(with_epilogue);
    else loom::run(bare);
  };
  check_once(key(name, st), [&] {
    std::fill(d.out.begin(), d.out.end(), std::numeric_limits<float>::quiet_NaN());
    once();
    const double rtol = wino ? rtol_winograd : rtol_direct;
    if (!fused) {
      check(name, st, d, rtol);
      return;
    }
    check_close(name, d.out.data(), f.want.data(), f.want.size(), rtol, 1e-5, d.scale.data());
    double worst = 0;
    for (std::size_t q = 0; q < f.want.size(); ++q)
      if (d.scale[q] > 0) worst = std::max(worst, std::abs(double(d.out.data()[q]) - f.want[q]) / d.scale[q]);
    errors()[key(name, st)] = worst;
  });
  for (auto _ : st) {
    once();
    touch(d.out.data());
  }
  set_counters(st, l, name);
  st.counters["winograd"] = benchmark::Counter(wino ? 1.0 : 0.0);
}

void naive_conv(benchmark::State& st, const Layer& l, const std::string& name) {
  use_threads(st);
  auto& d = data(l);
  check_once(key(name, st), [&] {
    std::fill(d.out.begin(), d.out.end(), std::numeric_limits<float>::quiet_NaN());
    plain_conv<float, false>(l, d.in.data(), d.w.data(), d.out.data(), nullptr, true);
    check(name, st, d, rtol_direct);
  });
  for (auto _ : st) {
    plain_conv<float, false>(l, d.in.data(), d.w.data(), d.out.data(), nullptr, true);
    touch(d.out.data());
  }
  set_counters(st, l, name);
}

template <class F>
void reg(const std::string& name, F&& f) {
  benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(f))->Apply(thread_args);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Layer& l : layers) {
    const std::string base = std::string("conv/") + l.name;
    using loom::conv_algorithm;
    reg(base + "/loom", [&l, base](benchmark::State& st) { loom_conv(st, l, conv_algorithm::automatic, true, base + "/loom"); });
    if (winograd_applies(l)) {
      reg(base + "/loom_direct",
          [&l, base](benchmark::State& st) { loom_conv(st, l, conv_algorithm::direct, true, base + "/loom_direct"); });
      reg(base + "/loom_winograd",
          [&l, base](benchmark::State& st) { loom_conv(st, l, conv_algorithm::winograd, true, base + "/loom_winograd"); });
      reg(base + "/loom_winograd_2x2",
          [&l, base](benchmark::State& st) { loom_conv(st, l, conv_algorithm::winograd_2x2, true, base + "/loom_winograd_2x2"); });
    }
    reg(base + "/loom_unpacked",
        [&l, base](benchmark::State& st) { loom_conv(st, l, conv_algorithm::automatic, false, base + "/loom_unpacked"); });
    reg(base + "/loom_nchw", [&l, base](benchmark::State& st) { loom_nchw_conv(st, l, base + "/loom_nchw"); });
    if (index_form(l)) {
      reg(base + "/loom_index", [&l, base](benchmark::State& st) { loom_index_conv(st, l, false, base + "/loom_index"); });
      reg(base + "/loom_index_fused", [&l, base](benchmark::State& st) { loom_index_conv(st, l, true, base + "/loom_index_fused"); });
    }
    reg(base + "/naive", [&l, base](benchmark::State& st) { naive_conv(st, l, base + "/naive"); });
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  using P = loom::default_conv_policy<float>;
  benchmark::AddCustomContext("loom_simd_width_float", std::to_string(loom::simd::native_width<float>));
  benchmark::AddCustomContext("loom_conv_tile", std::to_string(P::pixels) + " pixels x " + std::to_string(P::vectors) + " x " +
                                                    std::to_string(P::lanes) + " channels");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
