// tests/test_elementwise.cpp — every elementwise operator and function against a plain loop
// computed in double (or exactly, for int32), each through a scalar schedule, a vectorized one
// with masked tails and the default schedule, on sizes around every vector width and on inputs
// in every memory layout.
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;

namespace {

using lt::idx_t;

/// Runs out(x) = build(...) over sizes around every width, through a scalar and a vectorized
/// schedule with masked tails (and optionally the default schedule), and compares
/// with ref(a, b, c) evaluated on the same inputs (ints exactly, floating point in double).
/// Inputs: a in [lo_a, hi_a], b in [lo_b, hi_b], c in [-1, 1].
template <class T>
struct op_check {
  std::string what;
  double lo_a = -1, hi_a = 1, lo_b = -1, hi_b = 1;
  double tol = 1e-6;     // relative
  double floor = 1e-30;  // |expected| below this counts as this for the relative tolerance
  bool nonzero_b = false;

  /// WithDefault: also through the default schedule (the schedule matrix covers it broadly; here
  /// only where an operator's vector form meets the default's shifted tails).
  template <bool WithDefault = false, class Build, class Ref>
  void run(Build build, Ref ref) const {
    auto g = lt::make_rng(lt::str("op ", what, " ", lt::type_name<T>()));
    std::vector<index_t> sizes = lt::sizes_up_to(200);
    sizes.push_back(lt::uniform(g, 201, 1500));
    for (index_t n : sizes) {
      auto a = lt::random_buffer<T, 1>({n}, lt::pick_layout(g), "a", g, lo_a, hi_a);
      auto b = lt::random_buffer<T, 1>({n}, lt::pick_layout(g), "b", g, lo_b, hi_b);
      auto c = lt::random_buffer<T, 1>({n}, lt::pick_layout(g), "c", g, -1, 1);
      if (nonzero_b)
        for (index_t q = 0; q < n; ++q)
          if (b.view(q) == T(0)) b.view(q) = T(1);
      auto o = lt::make_buffer<T, 1>({n}, lt::pick_layout(g), "out");
      std::vector<double> expect(static_cast<std::size_t>(n));
      for (index_t q = 0; q < n; ++q) {
        if constexpr (std::is_integral_v<T>)
          expect[std::size_t(q)] = static_cast<double>(ref(a.view(q), b.view(q), c.view(q)));
        else
          expect[std::size_t(q)] = static_cast<double>(ref(double(a.view(q)), double(b.view(q)), double(c.view(q))));
      }
      INFO(what << " on " << lt::type_name<T>() << ", n = " << n << "; " << a.describe() << "; " << b.describe() << "; "
                << c.describe() << "; " << o.describe());
      auto check = [&](const char* sched) {
        INFO("schedule: " << sched);
        const auto r = lt::compare(o.view, expect, tol, floor);
        INFO(r.message);
        CHECK(r.ok);
        CHECK(o.untouched().ok);
        lt::fill(o.view, lt::sentinel<T>());
      };
      lt::fill(o.view, lt::sentinel<T>());
      loom::run<loom::schedule<>>(build(o.view, a.view, b.view, c.view));
      check("schedule<> (scalar)");
      loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>>>(build(o.view, a.view, b.view, c.view));
      check("vectorize<x, native, masked>");
      if constexpr (WithDefault) {
        loom::run(build(o.view, a.view, b.view, c.view));
        check("default");
      }
    }
  }
};

template <class T>
op_check<T> op(std::string what) {
  op_check<T> c;
  c.what = std::move(what);
  return c;
}

}  // namespace

TEST_CASE("elementwise: + - * / and unary minus", "[elementwise][ops]") {
  auto add = [](auto& o, auto& a, auto& b, auto&) { return o(x) = a(x) + b(x); };
  auto sub = [](auto& o, auto& a, auto& b, auto&) { return o(x) = a(x) - b(x); };
  auto mul = [](auto& o, auto& a, auto& b, auto&) { return o(x) = a(x) * b(x); };
  auto dvd = [](auto& o, auto& a, auto& b, auto&) { return o(x) = a(x) / b(x); };
  auto neg = [](auto& o, auto& a, auto&, auto&) { return o(x) = -a(x); };
  auto r_add = [](auto a, auto b, auto) { return a + b; };
  auto r_sub = [](auto a, auto b, auto) { return a - b; };
  auto r_mul = [](auto a, auto b, auto) { return a * b; };
  auto r_div = [](auto a, auto b, auto) { return a / b; };
  auto r_neg = [](auto a, auto, auto) { return -a; };

  SECTION("float") {
    op<float>("a + b").run<true>(add, r_add);
    op<float>("a - b").run(sub, r_sub);
    op<float>("a * b").run<true>(mul, r_mul);
    auto d = op<float>("a / b");
    d.lo_b = 0.1;
    d.hi_b = 4;
    d.run(dvd, r_div);
    op<float>("-a").run(neg, r_neg);
  }
  SECTION("double") {
    auto t = [](std::string w) {
      auto c = op<double>(std::move(w));
      c.tol = 1e-15;
      return c;
    };
    t("a - b").run(sub, r_sub);
    auto d = t("a / b");
    d.lo_b = -3;
    d.hi_b = -0.1;
    d.run(dvd, r_div);
  }
  SECTION("int32") {
    auto t = [](std::string w) {
      auto c = op<int>(std::move(w));
      c.lo_a = -1000;
      c.hi_a = 1000;
      c.lo_b = -1000;
      c.hi_b = 1000;
      return c;
    };
    t("a + b").run(add, r_add);
    t("a - b").run(sub, r_sub);
    t("a * b").run(mul, r_mul);
    t("-a").run(neg, r_neg);
    // Division: see the next test case.
  }
}

// int32 division through a vectorized loop: lanes past the extent of a masked tail (or of a
// vector loop shorter than one vector) must not be divided. In loom at the time of writing they
// are loaded as zero and divided, and the integer division by zero traps (SIGFPE), so this runs
// in a child process: the failure is reported here instead of ending the test run.
TEST_CASE("elementwise: int32 division in masked vector tails does not trap", "[elementwise][ops][int-division]") {
  const std::vector<index_t> sizes = lt::sizes_up_to(70);
  std::string failure;
  auto body = [&]() -> int {
    auto g = lt::make_rng("int division");
    for (index_t n : sizes) {
      auto a = lt::random_buffer<int, 1>({n}, lt::pick_layout(g), "a", g, -100000, 100000);
      auto b = lt::random_buffer<int, 1>({n}, lt::pick_layout(g), "b", g, 1, 50);
      for (index_t q = 0; q < n; q += 2) b.view(q) = -b.view(q);
      auto o = lt::make_buffer<int, 1>({n}, lt::pick_layout(g), "out");
      auto ref = [&](const lt::idx_t<1>& q) { return a.view(q[0]) / b.view(q[0]); };
      auto def = o.view(x) = a.view(x) / b.view(x);
      loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::guard>>>(def);
      if (!lt::compare(o.view, ref, 0).ok) return 10;
      loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>>>(def);
      if (!lt::compare(o.view, ref, 0).ok) return 11;
      loom::run(def);
      if (!lt::compare(o.view, ref, 0).ok) return 12;
    }
    return 0;
  };
  const auto r = lt::run_in_child(body);
  INFO("out(x) = a(x) / b(x) on int32, b never zero, n in 1..70, schedules vectorize<x> with guard / masked tails "
       "and the default schedule: "
       << r.describe());
  CHECK(r.ok());
}

TEST_CASE("elementwise: scalar operands on either side, literals lifted to the element type", "[elementwise][ops]") {
  // Scalars captured when the definition is written; int and double literals become T.
  auto f = op<float>("2.5f * a - 1 + b / 4");
  f.floor = 1;
  f.run([](auto& o, auto& a, auto& b, auto&) { return o(x) = 2.5f * a(x) - 1 + b(x) / 4; },
        [](auto a, auto b, auto) { return 2.5 * a - 1 + b / 4; });
  op<float>("1 / a").run([](auto& o, auto& a, auto&, auto&) { return o(x) = 1.f / a(x); },
                         [](auto a, auto, auto) { return 1.0 / a; });
  auto d = op<double>("3 - a * 0.5");
  d.tol = 1e-15;
  d.floor = 1;
  d.run([](auto& o, auto& a, auto&, auto&) { return o(x) = 3 - a(x) * 0.5; }, [](auto a, auto, auto) { return 3 - a * 0.5; });
  auto i = op<int>("7 * a - 3 - 100 * b");
  i.lo_a = -100000;
  i.hi_a = 100000;
  i.lo_b = 1;
  i.hi_b = 30;
  i.run([](auto& o, auto& a, auto& b, auto&) { return o(x) = 7 * a(x) - 3 - 100 * b(x); },
        [](auto a, auto b, auto) { return 7 * a - 3 - 100 * b; });
}

TEST_CASE("elementwise: min, max, abs, sqrt", "[elementwise][ops]") {
  auto mn = [](auto& o, auto& a, auto& b, auto&) { return o(x) = min(a(x), b(x)); };
  auto mx = [](auto& o, auto& a, auto& b, auto&) { return o(x) = max(a(x), b(x)); };
  auto mxs = [](auto& o, auto& a, auto&, auto&) { return o(x) = max(a(x), 0) + min(0, a(x)) * 2; };
  auto ab = [](auto& o, auto& a, auto&, auto&) { return o(x) = abs(a(x)); };
  auto r_mn = [](auto a, auto b, auto) { return std::min(a, b); };
  auto r_mx = [](auto a, auto b, auto) { return std::max(a, b); };
  auto r_mxs = [](auto a, auto, auto) { return std::max(a, decltype(a)(0)) + std::min(decltype(a)(0), a) * 2; };
  auto r_ab = [](auto a, auto, auto) { return std::abs(a); };
  op<float>("min").run(mn, r_mn);
  op<float>("max").run(mx, r_mx);
  op<float>("max(a, 0) + min(0, a) * 2").run(mxs, r_mxs);
  op<float>("abs").run(ab, r_ab);
  op<double>("max").run(mx, r_mx);
  auto ints = [](std::string w) {
    auto c = op<int>(std::move(w));
    c.lo_a = c.lo_b = -1000000;
    c.hi_a = c.hi_b = 1000000;
    return c;
  };
  ints("min").run(mn, r_mn);
  ints("max").run(mx, r_mx);
  ints("max(a, 0) + min(0, a) * 2").run(mxs, r_mxs);
  ints("abs").run(ab, r_ab);

  auto sq = [](auto& o, auto& a, auto&, auto&) { return o(x) = sqrt(a(x)); };
  auto r_sq = [](auto a, auto, auto) { return std::sqrt(a); };
  auto f = op<float>("sqrt");
  f.lo_a = 0;
  f.hi_a = 1e4;
  f.run(sq, r_sq);
  auto dd = op<double>("sqrt");
  dd.lo_a = 0;
  dd.hi_a = 1e6;
  dd.tol = 2e-16;
  dd.run(sq, r_sq);
}

TEST_CASE("elementwise: exp, log, tanh, sigmoid within a few ulp", "[elementwise][ops][math]") {
  auto ex = [](auto& o, auto& a, auto&, auto&) { return o(x) = exp(a(x)); };
  auto lg = [](auto& o, auto& a, auto&, auto&) { return o(x) = log(a(x)); };
  auto th = [](auto& o, auto& a, auto&, auto&) { return o(x) = tanh(a(x)); };
  auto sg = [](auto& o, auto& a, auto&, auto&) { return o(x) = sigmoid(a(x)); };
  auto r_ex = [](auto a, auto, auto) { return std::exp(a); };
  auto r_lg = [](auto a, auto, auto) { return std::log(a); };
  auto r_th = [](auto a, auto, auto) { return std::tanh(a); };
  auto r_sg = [](auto a, auto, auto) { return 1.0 / (1.0 + std::exp(-a)); };
  auto make = [](std::string w, double lo, double hi, double tol) {
    auto c = op<float>(std::move(w));
    c.lo_a = lo;
    c.hi_a = hi;
    c.tol = tol;
    return c;
  };
  make("exp", -80, 80, 2.4e-7).run(ex, r_ex);   // 2 ulp
  make("exp", -1, 1, 2.4e-7).run(ex, r_ex);
  make("log", 1e-3, 1e3, 2.4e-7).run(lg, r_lg);
  make("tanh", -9, 9, 3.6e-7).run(th, r_th);
  make("tanh", -0.05, 0.05, 3.6e-7).run(th, r_th);
  make("sigmoid", -30, 30, 4.8e-7).run(sg, r_sg);  // 4 ulp
  auto maked = [](std::string w, double lo, double hi) {
    auto c = op<double>(std::move(w));
    c.lo_a = lo;
    c.hi_a = hi;
    c.tol = 9e-16;
    return c;
  };
  maked("exp", -700, 700).run(ex, r_ex);
  maked("log", 1e-6, 1e6).run(lg, r_lg);
  maked("tanh", -19, 19).run(th, r_th);
  maked("sigmoid", -40, 40).run(sg, r_sg);
}

TEST_CASE("elementwise: fma", "[elementwise][ops]") {
  auto f = [](auto& o, auto& a, auto& b, auto& c) { return o(x) = fma(a(x), b(x), c(x)); };
  auto fs = [](auto& o, auto& a, auto&, auto& c) { return o(x) = fma(a(x), 3, c(x)) + fma(2, a(x), 1); };
  // fma rounds once: the float result is the double product-sum rounded once.
  auto ff = op<float>("fma(a, b, c)");
  ff.tol = 1.2e-7;  // one ulp: an unfused a * b + c is far off where it cancels
  ff.run(f, [](auto a, auto b, auto c) { return double(float(a * b + c)); });
  auto f2 = op<float>("fma(a, 3, c) + fma(2, a, 1)");
  f2.floor = 1;
  f2.run(fs, [](auto a, auto, auto c) { return (a * 3 + c) + (2 * a + 1); });
  auto fd = op<double>("fma(a, b, c)");
  fd.tol = 0;
  fd.run(f, [](auto a, auto b, auto c) { return std::fma(a, b, c); });
  auto fi = op<int>("fma(a, b, c)");
  fi.lo_a = fi.lo_b = -3000;
  fi.hi_a = fi.hi_b = 3000;
  fi.run(f, [](auto a, auto b, auto c) { return a * b + c; });
}

TEST_CASE("elementwise: comparisons and select", "[elementwise][ops]") {
  auto lt_ = [](auto& o, auto& a, auto& b, auto& c) { return o(x) = select(a(x) < b(x), a(x), c(x)); };
  auto le_ = [](auto& o, auto& a, auto& b, auto& c) { return o(x) = select(a(x) <= b(x), b(x), c(x)); };
  auto gt_ = [](auto& o, auto& a, auto& b, auto& c) { return o(x) = select(a(x) > b(x), a(x) - b(x), c(x)); };
  auto ge_ = [](auto& o, auto& a, auto& b, auto& c) { return o(x) = select(a(x) >= b(x), c(x), a(x)); };
  auto eq_ = [](auto& o, auto& a, auto& b, auto& c) { return o(x) = select(a(x) == b(x), c(x), b(x)); };
  auto ne_ = [](auto& o, auto& a, auto& b, auto& c) { return o(x) = select(a(x) != b(x), a(x), c(x)); };
  auto r_lt = [](auto a, auto b, auto c) { return a < b ? a : c; };
  auto r_le = [](auto a, auto b, auto c) { return a <= b ? b : c; };
  auto r_gt = [](auto a, auto b, auto c) { return a > b ? a - b : c; };
  auto r_ge = [](auto a, auto b, auto c) { return a >= b ? c : a; };
  auto r_eq = [](auto a, auto b, auto c) { return a == b ? c : b; };
  auto r_ne = [](auto a, auto b, auto c) { return a != b ? a : c; };
  SECTION("float") {
    op<float>("select <").run(lt_, r_lt);
    op<float>("select <=").run(le_, r_le);
    op<float>("select >").run(gt_, r_gt);
    op<float>("select >=").run(ge_, r_ge);
    // Few distinct values so == and != take both branches.
    auto small = [](std::string w) {
      auto c = op<float>(std::move(w));
      c.lo_a = c.lo_b = -2;
      c.hi_a = c.hi_b = 2;
      return c;
    };
    auto eqf = [](auto& o, auto& a, auto& b, auto& c) { return o(x) = select(a(x) * 0.f + 1.f == b(x) * 0.f + 1.f, c(x), b(x)); };
    small("select == (always true)").run(eqf, [](auto, auto, auto c) { return c; });
    op<float>("select == (never true)").run(eq_, r_eq);
    op<float>("select !=").run(ne_, r_ne);
  }
  SECTION("int32 (few distinct values: == and != both taken)") {
    auto t = [](std::string w) {
      auto c = op<int>(std::move(w));
      c.lo_a = c.lo_b = -2;
      c.hi_a = c.hi_b = 2;
      return c;
    };
    t("select <").run(lt_, r_lt);
    t("select <=").run(le_, r_le);
    t("select >").run(gt_, r_gt);
    t("select >=").run(ge_, r_ge);
    t("select ==").run(eq_, r_eq);
    t("select !=").run(ne_, r_ne);
  }
  SECTION("double") {
    op<double>("select >=").run(ge_, r_ge);
  }
  SECTION("scalars in comparisons and branches") {
    op<float>("relu via select").run([](auto& o, auto& a, auto&, auto&) { return o(x) = select(a(x) > 0, a(x), 0); },
                                     [](auto a, auto, auto) { return a > 0 ? a : 0.0; });
    op<float>("select(0.25 >= a, 1, b)").run(
        [](auto& o, auto& a, auto& b, auto&) { return o(x) = select(0.25f >= a(x), 1.f, b(x)); },
        [](auto a, auto b, auto) { return 0.25 >= a ? 1.0 : b; });
    auto i = op<int>("select(a < 0, -a, a * b)");
    i.lo_a = -5;
    i.hi_a = 5;
    i.run([](auto& o, auto& a, auto& b, auto&) { return o(x) = select(a(x) < 0, -a(x), a(x) * b(x)); },
          [](auto a, auto b, auto) { return a < 0 ? -a : a * b; });
    // Nested selects.
    op<float>("clamp via nested select")
        .run([](auto& o, auto& a, auto&, auto&) { return o(x) = select(a(x) < -0.5f, -0.5f, select(a(x) > 0.5f, 0.5f, a(x))); },
             [](auto a, auto, auto) { return std::clamp(a, -0.5, 0.5); });
  }
}

TEST_CASE("elementwise: a comparison on int32 selects float values and vice versa", "[elementwise][ops]") {
  auto g = lt::make_rng("select mixed");
  for (index_t n : lt::sizes_up_to(100)) {
    auto ia = lt::random_buffer<int, 1>({n}, lt::pick_layout(g), "ia", g, -3, 3);
    auto fa = lt::random_buffer<float, 1>({n}, lt::pick_layout(g), "fa", g);
    auto fb = lt::random_buffer<float, 1>({n}, lt::pick_layout(g), "fb", g);
    auto fo = lt::make_buffer<float, 1>({n}, lt::pick_layout(g), "fo");
    auto io = lt::make_buffer<int, 1>({n}, lt::pick_layout(g), "io");
    auto fdef = fo.view(x) = select(ia.view(x) > 0, fa.view(x), fb.view(x));
    auto idef = io.view(x) = select(fa.view(x) < fb.view(x), ia.view(x), 7);
    auto fref = [&](const idx_t<1>& q) { return ia.view(q[0]) > 0 ? fa.view(q[0]) : fb.view(q[0]); };
    auto iref = [&](const idx_t<1>& q) { return fa.view(q[0]) < fb.view(q[0]) ? ia.view(q[0]) : 7; };
    INFO("n = " << n);
    loom::run<loom::schedule<>>(fdef);
    CHECK(lt::compare(fo.view, fref, 0).ok);
    loom::run<loom::schedule<>>(idef);
    CHECK(lt::compare(io.view, iref, 0).ok);
    lt::fill(fo.view, 0);
    lt::fill(io.view, 0);
    loom::run<loom::schedule<loom::vectorize<x>>>(fdef);
    CHECK(lt::compare(fo.view, fref, 0).ok);
    loom::run<loom::schedule<loom::vectorize<x>>>(idef);
    CHECK(lt::compare(io.view, iref, 0).ok);
  }
}

TEST_CASE("elementwise: cast between float, int32 and double", "[elementwise][ops]") {
  auto g = lt::make_rng("cast");
  for (index_t n : lt::sizes_up_to(130)) {
    INFO("n = " << n);
    auto f = lt::random_buffer<float, 1>({n}, lt::pick_layout(g), "f", g, -1000, 1000);
    auto i = lt::random_buffer<int, 1>({n}, lt::pick_layout(g), "i", g, -16000000, 16000000);
    auto d = lt::random_buffer<double, 1>({n}, lt::pick_layout(g), "d", g, -1000, 1000);
    auto fo = lt::make_buffer<float, 1>({n}, lt::pick_layout(g), "fo");
    auto io = lt::make_buffer<int, 1>({n}, lt::pick_layout(g), "io");
    auto dout = lt::make_buffer<double, 1>({n}, lt::pick_layout(g), "do");

    // float -> int32 truncates toward zero; int32 -> float (exact below 2^24).
    auto to_int = io.view(x) = loom::cast<int>(f.view(x) * 2.f) + 1;
    auto to_int_ref = [&](const idx_t<1>& q) { return static_cast<int>(f.view(q[0]) * 2.f) + 1; };
    auto to_float = fo.view(x) = loom::cast<float>(i.view(x)) * 0.5f;
    auto to_float_ref = [&](const idx_t<1>& q) { return static_cast<float>(i.view(q[0])) * 0.5f; };
    loom::run<loom::schedule<>>(to_int);
    CHECK(lt::compare(io.view, to_int_ref, 0).ok);
    loom::run<loom::schedule<>>(to_float);
    CHECK(lt::compare(fo.view, to_float_ref, 0).ok);
    lt::fill(io.view, 0);
    lt::fill(fo.view, 0);
    loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>>>(to_int);
    CHECK(lt::compare(io.view, to_int_ref, 0).ok);
    loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::guard>>>(to_float);
    CHECK(lt::compare(fo.view, to_float_ref, 0).ok);
    lt::fill(io.view, 0);
    loom::run(to_int);
    CHECK(lt::compare(io.view, to_int_ref, 0).ok);

    // Different sizes (float <-> double): scalar schedules only.
    auto widen = dout.view(x) = loom::cast<double>(f.view(x)) + d.view(x);
    loom::run<loom::schedule<loom::split<x, 4>>>(widen);
    CHECK(lt::compare(dout.view, [&](const idx_t<1>& q) { return double(f.view(q[0])) + d.view(q[0]); }, 0).ok);
    auto narrow = fo.view(x) = loom::cast<float>(d.view(x)) - f.view(x);
    loom::run<loom::schedule<>>(narrow);
    CHECK(lt::compare(fo.view, [&](const idx_t<1>& q) { return float(float(d.view(q[0])) - f.view(q[0])); }, 0).ok);
    // A cast to the same type is the identity.
    auto same = fo.view(x) = loom::cast<float>(f.view(x));
    loom::run<loom::schedule<loom::vectorize<x>>>(same);
    CHECK(lt::compare(fo.view, [&](const idx_t<1>& q) { return f.view(q[0]); }, 0).ok);
  }
}

namespace {
template <class T, class Build>
void check_scalar_vector_bits(const char* what, double lo, double hi, Build build) {
  auto g = lt::make_rng(lt::str("bits ", what, lt::type_name<T>()));
  const index_t n = 1001;
  auto a = lt::random_buffer<T, 1>({n}, lt::layout::row_major, "a", g, lo, hi);
  auto s = lt::make_buffer<T, 1>({n}, lt::layout::row_major, "s");
  auto v = lt::make_buffer<T, 1>({n}, lt::layout::row_major, "v");
  loom::run<loom::schedule<>>(build(s.view, a.view));
  loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::guard>>>(build(v.view, a.view));
  const auto r = lt::compare_bits(s.view, v.view);
  INFO(what << " on " << lt::type_name<T>() << ": " << r.message);
  CHECK(r.ok);
}
}  // namespace

TEST_CASE("elementwise: transcendental functions give the same bits in scalar and vector code", "[elementwise][math]") {
  auto ex = [](auto& o, auto& a) { return o(x) = exp(a(x)); };
  auto lg = [](auto& o, auto& a) { return o(x) = log(a(x)); };
  auto th = [](auto& o, auto& a) { return o(x) = tanh(a(x)); };
  auto sg = [](auto& o, auto& a) { return o(x) = sigmoid(a(x)); };
  check_scalar_vector_bits<float>("exp", -90, 90, ex);
  check_scalar_vector_bits<float>("log", 1e-6, 1e6, lg);
  check_scalar_vector_bits<float>("tanh", -10, 10, th);
  check_scalar_vector_bits<float>("sigmoid", -90, 90, sg);
  check_scalar_vector_bits<double>("exp", -700, 700, ex);
  check_scalar_vector_bits<double>("sigmoid", -50, 50, sg);
}

TEST_CASE("elementwise: a deep expression mixing everything", "[elementwise][ops]") {
  auto big = [](auto& o, auto& a, auto& b, auto& c) {
    return o(x) = select(abs(a(x)) > 0.5f, sqrt(abs(b(x)) + 1.f) * -c(x), fma(a(x), b(x), c(x)) / (2.f + a(x))) +
                  max(min(a(x), b(x)), c(x)) - exp(c(x)) * 0.25f;
  };
  auto ref = [](auto a, auto b, auto c) {
    const double s = std::abs(a) > 0.5 ? std::sqrt(std::abs(b) + 1) * -c : (a * b + c) / (2 + a);
    return s + std::max(std::min(a, b), c) - std::exp(c) * 0.25;
  };
  auto f = op<float>("deep expression");
  f.tol = 2e-6;
  f.floor = 1;
  f.run<true>(big, ref);
  auto d = op<double>("deep expression");
  d.tol = 1e-14;
  d.floor = 1;
  d.run(big, ref);
}

// IEEE comparisons with NaN operands: every comparison is false except !=, which is true; the
// scalar and the vector code must agree (a result must not depend on the schedule).
TEST_CASE("elementwise: comparisons with NaN operands follow IEEE in scalar and vector code", "[elementwise][ops][nan]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const index_t n = 37;
  loom::Tensor<float, 1> a("a", n), b("b", n);
  for (index_t q = 0; q < n; ++q) {
    a(q) = q % 3 == 0 ? nan : float(q);
    b(q) = q % 5 == 0 ? nan : float(n - q);
  }
  auto expect = [&](const char* op, auto cmp, const loom::Tensor<float, 1>& got, const char* sched) {
    index_t bad = 0, first = -1;
    for (index_t q = 0; q < n; ++q) {
      const float e = cmp(a(q), b(q)) ? 1.f : 0.f;
      if (got(q) != e && bad++ == 0) first = q;
    }
    INFO("a " << op << " b under " << sched << ": " << bad << " wrong, first at " << first << " (a = " << (first >= 0 ? a(first) : 0.f)
              << ", b = " << (first >= 0 ? b(first) : 0.f) << ")");
    CHECK(bad == 0);
  };
  loom::Tensor<float, 1> o("o", n), one("one", n);
  lt::fill(one.view(), 1.f);
  using V = loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>>;
  using S = loom::schedule<>;
  loom::run<S>(o(x) = select(a(x) != b(x), one(x), 0.f));
  expect("!=", [](float u, float v) { return u != v; }, o, "schedule<>");
  loom::run<V>(o(x) = select(a(x) != b(x), one(x), 0.f));
  expect("!=", [](float u, float v) { return u != v; }, o, "vectorize<x>");
  loom::run<S>(o(x) = select(a(x) == b(x), one(x), 0.f));
  expect("==", [](float u, float v) { return u == v; }, o, "schedule<>");
  loom::run<V>(o(x) = select(a(x) == b(x), one(x), 0.f));
  expect("==", [](float u, float v) { return u == v; }, o, "vectorize<x>");
  loom::run<V>(o(x) = select(a(x) < b(x), one(x), 0.f));
  expect("<", [](float u, float v) { return u < v; }, o, "vectorize<x>");
  loom::run<V>(o(x) = select(a(x) >= b(x), one(x), 0.f));
  expect(">=", [](float u, float v) { return u >= v; }, o, "vectorize<x>");
}

TEST_CASE("elementwise: the default of a fused chain that outgrows the cache", "[elementwise][large]") {
  // Out of cache the 1-D default takes large blocks, reads its inputs 2 KiB ahead and walks 4
  // parts of each block at once (choices its one nest makes per run), and beyond twice the cache
  // it streams its stores too:
  // run both, each with a last block moved back (n is no multiple of the block) ending in a
  // shifted last vector (nor of the vector width), against a double reference.
  const index_t cache = loom::simd::outgrows_cache_bytes();
  for (const index_t bytes : {cache, loom::simd::streaming_threshold_bytes()}) {
    const index_t n = bytes / index_t(3 * sizeof(float)) + 37;
    loom::Tensor<float, 1> xs("x", n), cs("c", n), out("out", n);
    for (index_t q = 0; q < n; ++q) {
      xs(q) = float(q % 1013) * 0.002f - 1.f;
      cs(q) = float(q % 769) * 0.02f - 7.f;
    }
    const float a = 1.5f, b = 0.25f;
    const std::string nest = loom::print_loop_nest(out(i) = max(a * xs(i) + b, 0.f) * sigmoid(cs(i)));
    REQUIRE(nest.find("prefetch") != std::string::npos);
    REQUIRE(nest.find("interleave: each strip's vector loop walks 4 parts") != std::string::npos);
    loom::run(out(i) = max(a * xs(i) + b, 0.f) * sigmoid(cs(i)));
    index_t bad = 0;
    for (index_t q = 0; q < n; ++q) {
      const double want = std::max(double(a) * double(xs(q)) + double(b), 0.0) / (1.0 + std::exp(-double(cs(q))));
      // a x + b rounds in float (fused or not, by the compiler's choice) to about an ulp of its
      // terms, which near its zero is no small part of it; sigmoid adds 4 ulp of the result.
      const double terms = std::abs(double(a) * double(xs(q))) + double(b);
      bad += !(std::abs(double(out(q)) - want) <= 2.4e-7 * terms + 6e-7 * std::abs(want));
    }
    INFO(n << " floats per tensor");
    CHECK(bad == 0);
  }
}

TEST_CASE("elementwise: split factors and read-ahead distances near 2^63 neither overflow nor skip points", "[elementwise][schedule]") {
  // A factor beyond every extent is one block; `(n + F - 1) / F` wrapped for F near 2^63 and no
  // block ran (g++ and clang at -O0), and a distance that far overflowed the read-ahead's bytes.
  constexpr index_t big = std::numeric_limits<index_t>::max();
  using namespace loom;
  for (index_t n : {1, 17, 1000}) {
    INFO("n = " << n);
    Tensor<float, 1> a(n), o(n);
    for (index_t q = 0; q < n; ++q) a(q) = float(q);
    run<schedule<split<i, big>>>(o(i) = a(i) + 1.f);
    for (index_t q = 0; q < n; ++q) REQUIRE(o(q) == float(q) + 1.f);
    Tensor<float, 2> A(3, n), O(3, n);
    for (index_t r = 0; r < 3; ++r)
      for (index_t q = 0; q < n; ++q) A(r, q) = float(r * n + q);
    run<schedule<split<j, big>, vectorize<inner<j>>>>(O(i, j) = A(i, j) * 2.f);
    for (index_t r = 0; r < 3; ++r)
      for (index_t q = 0; q < n; ++q) REQUIRE(O(r, q) == A(r, q) * 2.f);
    run<schedule<vectorize<j>, prefetch<j, big, 0>>>(O(i, j) = A(i, j) + 1.f);
    for (index_t r = 0; r < 3; ++r)
      for (index_t q = 0; q < n; ++q) REQUIRE(O(r, q) == A(r, q) + 1.f);
    Tensor<float, 1> rs(3);
    run<schedule<vectorize<j>, prefetch<i, index_t{1} << 60, 0>>>(rs(i) = sum(j, A(i, j)));
    for (index_t r = 0; r < 3; ++r) {
      double want = 0;
      for (index_t q = 0; q < n; ++q) want += double(A(r, q));
      REQUIRE(std::abs(double(rs(r)) - want) <= 1e-6 * want + 1e-6);
    }
  }
}
