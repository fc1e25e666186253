// bench/conv_layers.hpp — what bench_conv.cpp (loom) and bench_conv_onednn.cpp (oneDNN) share:
// the layers, their operands (NHWC in, HWIO w, fill_random seeds 1 and 2), the plain loop that is
// both the reference (in double, with sum |in x w| per element for the tolerance) and the naive
// row, and the tolerances.
#pragma once

#include "bench_common.hpp"

#include <loom/core/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loom_bench {

using loom::index_t;

struct Layer {
  const char* name;
  index_t N, H, W, C, CO, K, stride, pad, groups;
  index_t OH() const { return (H + 2 * pad - K) / stride + 1; }
  index_t OW() const { return (W + 2 * pad - K) / stride + 1; }
  index_t Cg() const { return C / groups; }
  index_t COg() const { return CO / groups; }
  bool depthwise() const { return groups > 1; }
  /// Nominal flops: 2 N OH OW CO KH KW C/groups, padded taps included.
  double flops() const { return 2.0 * double(N) * double(OH()) * double(OW()) * double(CO) * double(K * K) * double(Cg()); }
  /// Compulsory bytes (fp32): the input and the weights read once, the output written once (the
  /// roofline's traffic, bench/plot_roofline.py).
  double bytes() const {
    return 4.0 * (double(N) * double(H) * double(W) * double(C) + double(K * K) * double(Cg()) * double(CO) +
                  double(N) * double(OH()) * double(OW()) * double(CO));
  }
};

constexpr Layer layers[] = {
    {"r3x3_64_56", 1, 56, 56, 64, 64, 3, 1, 1, 1},
    {"r3x3_128_28", 1, 28, 28, 128, 128, 3, 1, 1, 1},
    {"r3x3_256_14", 1, 14, 14, 256, 256, 3, 1, 1, 1},
    {"r3x3_512_7", 1, 7, 7, 512, 512, 3, 1, 1, 1},
    {"r1x1_64_256_56", 1, 56, 56, 64, 256, 1, 1, 0, 1},
    {"r1x1s2_256_512_56", 1, 56, 56, 256, 512, 1, 2, 0, 1},
    {"stem7x7", 1, 224, 224, 3, 64, 7, 2, 3, 1},
    {"dw32_112", 1, 112, 112, 32, 32, 3, 1, 1, 32},
    {"dw96_112s2", 1, 112, 112, 96, 96, 3, 2, 1, 96},
    {"dw144_56", 1, 56, 56, 144, 144, 3, 1, 1, 144},
    {"dw576_14", 1, 14, 14, 576, 576, 3, 1, 1, 576},
    {"r3x3_64_56_n8", 8, 56, 56, 64, 64, 3, 1, 1, 1},
};

/// The plain loop over NHWC in, HWIO w (unit channel stride, dense rows): out(n, oy, ox, co) in
/// Acc, taps then input channels in order, output channels innermost. With Scale, also
/// scale = sum |in x w| of each element's terms (the tolerance's scale).
template <class Acc, bool Scale, class Out>
void plain_conv(const Layer& l, const float* in, const float* w, Out* out, double* scale, bool parallel) {
  const index_t OH = l.OH(), OW = l.OW(), Cg = l.Cg(), COg = l.COg(), CO = l.CO, C = l.C, K = l.K;
  auto row = [&](index_t nr) {
    const index_t n = nr / OH, oy = nr % OH;
    std::vector<Acc> acc(static_cast<std::size_t>(COg));
    std::vector<double> sc(Scale ? std::size_t(COg) : 0);
    for (index_t ox = 0; ox < OW; ++ox)
      for (index_t g = 0; g < l.groups; ++g) {
        std::fill(acc.begin(), acc.end(), Acc(0));
        std::fill(sc.begin(), sc.end(), 0.0);
        for (index_t ky = 0; ky < K; ++ky) {
          const index_t iy = oy * l.stride + ky - l.pad;
          if (iy < 0 || iy >= l.H) continue;
          for (index_t kx = 0; kx < K; ++kx) {
            const index_t ix = ox * l.stride + kx - l.pad;
            if (ix < 0 || ix >= l.W) continue;
            const float* a = in + ((n * l.H + iy) * l.W + ix) * C + g * Cg;
            const float* wk = w + (ky * K + kx) * Cg * CO + g * COg;
            for (index_t c = 0; c < Cg; ++c) {
              const Acc av = Acc(a[c]);
              const float* wc = wk + c * CO;
              Acc* ac = acc.data();
#pragma omp simd
              for (index_t j = 0; j < COg; ++j) ac[j] += av * Acc(wc[j]);
              if constexpr (Scale)
                for (index_t j = 0; j < COg; ++j) sc[std::size_t(j)] += std::abs(double(av) * double(wc[j]));
            }
          }
        }
        const index_t o = ((n * OH + oy) * OW + ox) * CO + g * COg;
        for (index_t j = 0; j < COg; ++j) {
          out[o + j] = Out(acc[std::size_t(j)]);
          if constexpr (Scale) scale[o + j] = sc[std::size_t(j)];
        }
      }
  };
  const index_t rows = l.N * OH;
  if (parallel) {
#pragma omp parallel for schedule(static)
    for (index_t nr = 0; nr < rows; ++nr) row(nr);
  } else {
    for (index_t nr = 0; nr < rows; ++nr) row(nr);
  }
}

/// One layer's operands and the reference, made on first use.
struct ConvData {
  const Layer& l;
  loom::Tensor<float, 4> in, w, out;
  std::vector<double> ref, scale;
  explicit ConvData(const Layer& layer)
      : l(layer), in("in", l.N, l.H, l.W, l.C), w("w", l.K, l.K, l.Cg(), l.CO), out("out", l.N, l.OH(), l.OW(), l.CO) {
    fill_random(in.data(), std::size_t(in.size()), 1u);
    fill_random(w.data(), std::size_t(w.size()), 2u);
    ref.resize(std::size_t(out.size()));
    scale.resize(std::size_t(out.size()));
    plain_conv<double, true>(l, in.data(), w.data(), ref.data(), scale.data(), true);
  }
};
ConvData& data(const Layer& l) {
  static std::map<std::string, std::unique_ptr<ConvData>> m;
  auto& d = m[l.name];
  if (!d) d = std::make_unique<ConvData>(l);
  return *d;
}

/// Tolerance, of sum |in x w|: float sums of the direct kernels (a sum of K terms in any order
/// stays well inside it); Winograd's transforms lose more (docs/conv.md: about 8x).
constexpr double rtol_direct = 3e-5, rtol_winograd = 1e-3;

}  // namespace loom_bench
