// bench/rowwise_data.hpp — the row-wise benchmarks' input and references (softmax and layer norm
// over NR x NR, computed in double), shared by bench_pipelines.cpp and bench_pipelines_onednn.cpp
// so that every library is checked against the same values.
#pragma once
#include <loom/loom.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "bench_common.hpp"

namespace loom_bench {

inline constexpr loom::index_t NR = 4096;     // softmax / layer norm: NR x NR
inline constexpr float ln_eps = 1e-5f;        // layer norm's epsilon

/// X (uniform in [-3, 3), seed 11), Y, and the two references.
struct RowData {
  loom::Tensor<float, 2> X{"X", NR, NR}, Y{"Y", NR, NR};
  std::vector<float> soft, norm;  // references, computed in double
  RowData() {
    fill_random(X.data(), std::size_t(NR * NR), 11u, -3.f, 3.f);
    soft.resize(std::size_t(NR * NR));
    norm.resize(std::size_t(NR * NR));
    for (loom::index_t a = 0; a < NR; ++a) {
      const float* x = X.data() + a * NR;
      double mx = -1e300, s = 0, mean = 0, var = 0;
      for (loom::index_t b = 0; b < NR; ++b) mx = std::max(mx, double(x[b])), mean += x[b];
      mean /= double(NR);
      for (loom::index_t b = 0; b < NR; ++b) s += std::exp(double(x[b]) - mx), var += (x[b] - mean) * (x[b] - mean);
      var /= double(NR);
      for (loom::index_t b = 0; b < NR; ++b) {
        soft[std::size_t(a * NR + b)] = float(std::exp(double(x[b]) - mx) / s);
        norm[std::size_t(a * NR + b)] = float((x[b] - mean) / std::sqrt(var + double(ln_eps)));
      }
    }
  }
};
inline RowData& rows() {
  static RowData d;
  return d;
}

}  // namespace loom_bench
