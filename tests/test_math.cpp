// tests/test_math.cpp — accuracy of loom's vector math over the full float range (dense sweeps
// against double), special values (infinities, NaN, saturation, exact points), and the same
// bits from scalar and vector evaluation.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;

namespace {

struct sweep_result {
  double max_rel = 0;     // over results >= FLT_MIN
  double at = 0;          // where
  double max_abs_tiny = 0;  // over results below FLT_MIN (denormal or flushed)
  index_t scalar_vector_diffs = 0;
};

/// f over n points evenly spaced in [lo, hi], vectorized and scalar, against ref in double.
template <class T, class Build, class Ref>
sweep_result sweep(double lo, double hi, index_t n, Build build, Ref ref) {
  loom::Tensor<T, 1> a("a", n), v("v", n), s("s", n);
  for (index_t q = 0; q < n; ++q) a(q) = static_cast<T>(lo + (hi - lo) * double(q) / double(n - 1));
  loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>>>(build(v, a));
  loom::run<loom::schedule<>>(build(s, a));
  sweep_result r;
  for (index_t q = 0; q < n; ++q) {
    const double e = ref(double(a(q)));
    const double got = v(q);
    if (!lt::same_bits(v(q), s(q))) ++r.scalar_vector_diffs;
    if (std::abs(e) < std::numeric_limits<T>::min()) {
      r.max_abs_tiny = std::max(r.max_abs_tiny, std::abs(got - e));
      continue;
    }
    const double rel = std::abs(got - e) / std::abs(e);
    if (!(rel <= r.max_rel)) {
      r.max_rel = std::isnan(rel) ? INFINITY : rel;
      r.at = a(q);
    }
  }
  return r;
}

auto exp_def = [](auto& o, auto& a) { return o(x) = exp(a(x)); };
auto sigmoid_def = [](auto& o, auto& a) { return o(x) = sigmoid(a(x)); };
auto log_def = [](auto& o, auto& a) { return o(x) = log(a(x)); };
auto tanh_def = [](auto& o, auto& a) { return o(x) = tanh(a(x)); };
double exp_ref(double v) { return std::exp(v); }
double sigmoid_ref(double v) { return 1.0 / (1.0 + std::exp(-v)); }
double log_ref(double v) { return std::log(v); }
double tanh_ref(double v) { return std::tanh(v); }

template <class T, class Build>
std::vector<T> apply_to(const std::vector<T>& in, Build build, bool vector) {
  const auto n = static_cast<index_t>(in.size());
  loom::Tensor<T, 1> a("a", n), o("o", n);
  std::copy(in.begin(), in.end(), a.begin());
  if (vector) loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>>>(build(o, a));
  else loom::run<loom::schedule<>>(build(o, a));
  return std::vector<T>(o.begin(), o.end());
}

}  // namespace

TEST_CASE("math: float exp within 2 ulp over its whole range", "[math]") {
  const auto r = sweep<float>(-87.3, 88.7, 1 << 20, exp_def, exp_ref);
  INFO("max relative error " << r.max_rel << " at x = " << r.at);
  CHECK(r.max_rel <= 2.4e-7);
  CHECK(r.scalar_vector_diffs == 0);
  const auto r2 = sweep<float>(-0.5, 0.5, 100001, exp_def, exp_ref);
  INFO("near 0: max relative error " << r2.max_rel << " at x = " << r2.at);
  CHECK(r2.max_rel <= 2.4e-7);
}

TEST_CASE("math: float sigmoid within 4e-7 over its whole range", "[math]") {
  const auto r = sweep<float>(-87.0, 88.0, 1 << 20, sigmoid_def, sigmoid_ref);
  INFO("max relative error " << r.max_rel << " at x = " << r.at << "; below FLT_MIN: max abs error " << r.max_abs_tiny);
  CHECK(r.max_rel <= 4e-7);
  CHECK(r.max_abs_tiny <= 2e-38);
  CHECK(r.scalar_vector_diffs == 0);
  const auto r2 = sweep<float>(-1.0, 1.0, 100001, sigmoid_def, sigmoid_ref);
  INFO("near 0: max relative error " << r2.max_rel << " at x = " << r2.at);
  CHECK(r2.max_rel <= 4e-7);
}

TEST_CASE("math: float log and tanh, double exp and sigmoid", "[math]") {
  const auto l = sweep<float>(1e-30, 1e30, 1 << 18, log_def, log_ref);
  INFO("float log: max relative error " << l.max_rel << " at x = " << l.at);
  CHECK(l.max_rel <= 2.4e-7);
  const auto l1 = sweep<float>(0.5, 2.0, 100001, log_def, log_ref);  // log crosses 0 at 1
  INFO("float log near 1: max relative error " << l1.max_rel << " at x = " << l1.at);
  CHECK(l1.max_rel <= 2.4e-7);
  const auto t = sweep<float>(-12.0, 12.0, 1 << 18, tanh_def, tanh_ref);
  INFO("float tanh: max relative error " << t.max_rel << " at x = " << t.at);
  CHECK(t.max_rel <= 3.6e-7);
  const auto ed = sweep<double>(-708.0, 709.0, 1 << 18, exp_def, exp_ref);
  INFO("double exp: max relative error " << ed.max_rel << " at x = " << ed.at);
  CHECK(ed.max_rel <= 9e-16);
  const auto sd = sweep<double>(-700.0, 700.0, 1 << 18, sigmoid_def, sigmoid_ref);
  INFO("double sigmoid: max relative error " << sd.max_rel << " at x = " << sd.at);
  CHECK(sd.max_rel <= 9e-16);
  CHECK(l.scalar_vector_diffs + t.scalar_vector_diffs + ed.scalar_vector_diffs + sd.scalar_vector_diffs == 0);
}


// `e * sigmoid(x)` is evaluated as e / (1 + exp(-x)) (one division instead of a reciprocal and a
// product): either operand order, float and double, as accurate as the sigmoid alone or better.
TEST_CASE("math: a product with a sigmoid, either order, within the sigmoid's bound", "[math]") {
  auto right = [](auto& o, auto& a) {
    using T = typename std::remove_cvref_t<decltype(a)>::value_type;
    return o(x) = (abs(a(x)) + T(1)) * sigmoid(a(x));
  };
  auto left = [](auto& o, auto& a) {
    using T = typename std::remove_cvref_t<decltype(a)>::value_type;
    return o(x) = sigmoid(a(x)) * (abs(a(x)) + T(1));
  };
  auto ref = [](double v) { return (std::abs(v) + 1) / (1 + std::exp(-v)); };
  // 2^18 points each (the sigmoid alone is swept at 2^20 above): this runs under the sanitizers too.
  for (auto r : {sweep<float>(-87.0, 88.0, 1 << 18, right, ref), sweep<float>(-87.0, 88.0, 1 << 18, left, ref),
                 sweep<float>(-1.0, 1.0, 100001, right, ref)}) {
    INFO("float: max relative error " << r.max_rel << " at x = " << r.at << "; below FLT_MIN: max abs error " << r.max_abs_tiny);
    CHECK(r.max_rel <= 4e-7);
    CHECK(r.max_abs_tiny <= 2e-38);
    CHECK(r.scalar_vector_diffs == 0);
  }
  for (auto r : {sweep<double>(-700.0, 700.0, 1 << 16, right, ref), sweep<double>(-700.0, 700.0, 1 << 16, left, ref)}) {
    INFO("double: max relative error " << r.max_rel << " at x = " << r.at);
    CHECK(r.max_rel <= 9e-16);
    CHECK(r.scalar_vector_diffs == 0);
  }
}
TEST_CASE("math: special values of exp and sigmoid", "[math]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> in = {-inf, -1000.f, -100.f, -88.f, -87.5f, 0.f, -0.f, 1.f, 88.8f, 100.f, inf, nan};
  for (bool vec : {false, true}) {
    INFO((vec ? "vectorized" : "scalar"));
    const auto e = apply_to(in, exp_def, vec);
    CHECK(e[0] == 0.f);
    CHECK(e[1] == 0.f);
    CHECK(e[2] == 0.f);
    CHECK(e[3] == 0.f);  // below -87.34: saturates to 0
    CHECK(e[4] == 0.f);
    CHECK(e[5] == 1.f);
    CHECK(e[6] == 1.f);
    CHECK(std::abs(e[7] - 2.71828183f) <= 3e-7f);
    CHECK(e[8] == inf);  // above 88.72: saturates to +inf
    CHECK(e[9] == inf);
    CHECK(e[10] == inf);
    CHECK(std::isnan(e[11]));
    const auto s = apply_to(in, sigmoid_def, vec);
    CHECK(s[0] <= 1e-38f);
    CHECK(s[0] >= 0.f);
    CHECK(s[1] <= 1e-38f);
    CHECK(s[2] <= 1e-38f);
    CHECK(s[2] >= 0.f);
    CHECK(s[5] == 0.5f);
    CHECK(s[6] == 0.5f);
    CHECK(std::abs(s[7] - 0.731058579f) <= 3e-7f);
    CHECK(s[8] == 1.f);
    CHECK(s[9] == 1.f);
    CHECK(s[10] == 1.f);
    CHECK(std::isnan(s[11]));
    for (float v : s) CHECK((std::isnan(v) || (v >= 0.f && v <= 1.f)));
  }
}

TEST_CASE("math: sigmoid is monotone and symmetric to float precision", "[math]") {
  const index_t n = 200001;
  std::vector<float> in(static_cast<std::size_t>(n));
  for (index_t q = 0; q < n; ++q) in[std::size_t(q)] = -20.f + 40.f * float(q) / float(n - 1);
  const auto s = apply_to(in, sigmoid_def, true);
  index_t decreasing = 0, asym = 0;
  for (index_t q = 1; q < n; ++q) decreasing += s[std::size_t(q)] < s[std::size_t(q - 1)];
  for (index_t q = 0; q < n; ++q) asym += std::abs(double(s[std::size_t(q)]) + s[std::size_t(n - 1 - q)] - 1.0) > 4e-7;
  // A few ulp of noise may break strict monotonicity between neighbours one ulp apart; count them.
  CHECK(decreasing <= n / 1000);
  CHECK(asym == 0);
}
