// tests/test_boundary.cpp — boundary conditions (expr/boundary.hpp): repeat_edge,
// constant_exterior, mirror_image and mirror_interior against plain loops whose index remapping
// is written here by repeated reflection (not the library's modulo), on every side and corner,
// offsets past the extent, every view kind and schedule; strip_boundaries and the interior box.
#include "support.hpp"

// The sweeps over every condition, layout, schedule and offset (1-D, 2-D sides and corners,
// regions, reductions) compile for several minutes; CI builds the rest, and
// -DLOOM_TEST_BOUNDARY_FULL=1 builds them all (run them after changing boundary.hpp).
#ifndef LOOM_TEST_BOUNDARY_FULL
#define LOOM_TEST_BOUNDARY_FULL 0
#endif

using loom::index_t;
using loom::vars::n;
using loom::vars::rx;
using loom::vars::ry;
using loom::vars::x;
using loom::vars::y;
using lt::idx_t;

namespace {

enum class cond { repeat_edge, constant_exterior, mirror_image, mirror_interior };

[[maybe_unused]] const char* cond_name(cond k) {
  switch (k) {
    case cond::repeat_edge: return "repeat_edge";
    case cond::constant_exterior: return "constant_exterior";
    case cond::mirror_image: return "mirror_image";
    case cond::mirror_interior: return "mirror_interior";
  }
  return "?";
}

/// The index in [0, e) that index i reads (-1: outside, constant_exterior), by reflecting until
/// it lands inside: the library folds by a period instead.
index_t ref_index(cond k, index_t i, index_t e) {
  switch (k) {
    case cond::repeat_edge: return std::clamp<index_t>(i, 0, e - 1);
    case cond::constant_exterior: return i >= 0 && i < e ? i : -1;
    case cond::mirror_image:
      while (i < 0 || i >= e) i = i < 0 ? -1 - i : 2 * e - 1 - i;
      return i;
    case cond::mirror_interior:
      if (e == 1) return 0;
      while (i < 0 || i >= e) i = i < 0 ? -i : 2 * (e - 1) - i;
      return i;
  }
  return -1;
}

/// The value view v (indices relative to `origin`) gives under k at true indices `at`.
template <class V, std::size_t R = V::rank>
double ref_read(cond k, const V& v, const idx_t<R>& at, double outside, const idx_t<R>& origin = {}) {
  idx_t<R> in{};
  for (std::size_t d = 0; d < R; ++d) {
    in[d] = ref_index(k, at[d] - origin[d], v.extent(d));
    if (in[d] < 0) return outside;
  }
  return static_cast<double>(lt::at(v, in));
}

/// The library's bounded view of kind K (the constant only for constant_exterior).
template <cond K, class In>
auto bounded(In&& in, double outside) {
  if constexpr (K == cond::repeat_edge) return loom::repeat_edge(std::forward<In>(in));
  else if constexpr (K == cond::constant_exterior) return loom::constant_exterior(std::forward<In>(in), outside);
  else if constexpr (K == cond::mirror_image) return loom::mirror_image(std::forward<In>(in));
  else return loom::mirror_interior(std::forward<In>(in));
}

// The schedules every elementwise case runs under.
using scalar = loom::schedule<>;
using lanes_x = loom::schedule<loom::vectorize<x>>;  // shifted tail
using masked_x = loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>>;
using guarded_x = loom::schedule<loom::vectorize<x, loom::native, loom::tail::guard>>;
using masked_y = loom::schedule<loom::vectorize<y, loom::native, loom::tail::masked>>;
using by_default = loom::auto_schedule;

template <class S>
const char* sched_name() {
  if constexpr (std::is_same_v<S, scalar>) return "schedule<> (scalar)";
  else if constexpr (std::is_same_v<S, lanes_x>) return "vectorize<x> (shifted tail)";
  else if constexpr (std::is_same_v<S, masked_x>) return "vectorize<x, native, masked>";
  else if constexpr (std::is_same_v<S, guarded_x>) return "vectorize<x, native, guard>";
  else if constexpr (std::is_same_v<S, masked_y>) return "vectorize<y, native, masked>";
  else if constexpr (std::is_same_v<S, by_default>) return "default schedule";
  else return "another schedule";
}

/// Runs def under S after filling its output with the sentinel, then compares with ref.
template <class S, class Def, class Out, class Ref>
void run_and_compare(const Def& def, const Out& out, Ref&& ref, double tol, const std::string& what) {
  lt::fill(out, lt::sentinel<typename Out::value_type>());
  loom::run<S>(def);
  const auto r = lt::compare(out, ref, tol);
  INFO(what << "; schedule " << sched_name<S>() << " " << lt::type_string<S>());
  INFO(r.message);
  CHECK(r.ok);
}

/// Extents of two variables, as a run's state gives them (ext.template extent<V>()).
template <class V0, class V1>
struct ext2 {
  index_t e0, e1;
  template <class V>
  index_t extent() const { return std::is_same_v<V, V0> ? e0 : e1; }
};
/// Extents of the variables of a list.
template <class Vars>
struct ext_of {
  std::array<index_t, Vars::size> e;
  template <class V>
  index_t extent() const { return e[loom::meta::index_of<Vars, V>]; }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// The patterns themselves, written out by hand.
// ---------------------------------------------------------------------------------------------

TEST_CASE("boundary: each condition reads the pattern Halide's does, written out", "[boundary]") {
  // in = 10, 11, 12 (extent 3); out(x) = b(x - 7) reads indices -7 .. 9.
  loom::Tensor<float, 1> in3("in", 3), in2("in", 2), in1("in", 1);
  for (index_t q = 0; q < 3; ++q) in3(q) = float(10 + q);
  for (index_t q = 0; q < 2; ++q) in2(q) = float(10 + q);
  in1(0) = 10;
  loom::Tensor<float, 1> out("out", 17);
  const float C = -1;  // constant_exterior's value
  auto expect = [&](std::vector<float> want, const char* what) {
    REQUIRE(want.size() == 17);
    std::vector<float> got(out.begin(), out.end());
    INFO(what);
    CHECK(got == want);
  };
  auto both = [&](auto def, std::vector<float> want, const char* what) {
    lt::fill(out.view(), -99);
    loom::run<scalar>(def);
    expect(want, what);
    lt::fill(out.view(), -99);
    loom::run<masked_x>(def);
    expect(want, what);
  };
  //                                   -7  -6  -5  -4  -3  -2  -1 | 0   1   2 | 3   4   5   6   7   8   9
  both(out(x) = loom::repeat_edge(in3)(x - 7), {10, 10, 10, 10, 10, 10, 10, 10, 11, 12, 12, 12, 12, 12, 12, 12, 12}, "repeat_edge, 3");
  both(out(x) = loom::constant_exterior(in3, C)(x - 7), {C, C, C, C, C, C, C, 10, 11, 12, C, C, C, C, C, C, C}, "constant_exterior, 3");
  both(out(x) = loom::mirror_image(in3)(x - 7), {10, 10, 11, 12, 12, 11, 10, 10, 11, 12, 12, 11, 10, 10, 11, 12, 12}, "mirror_image, 3");
  both(out(x) = loom::mirror_interior(in3)(x - 7), {11, 12, 11, 10, 11, 12, 11, 10, 11, 12, 11, 10, 11, 12, 11, 10, 11}, "mirror_interior, 3");
  //                                   -7  -6  -5  -4  -3  -2  -1 | 0   1 | 2   3   4   5   6   7   8   9
  both(out(x) = loom::mirror_image(in2)(x - 7), {11, 11, 10, 10, 11, 11, 10, 10, 11, 11, 10, 10, 11, 11, 10, 10, 11}, "mirror_image, 2");
  both(out(x) = loom::mirror_interior(in2)(x - 7), {11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11}, "mirror_interior, 2");
  // Extent 1: every reflection reads the one element.
  const std::vector<float> ones(17, 10.f);
  both(out(x) = loom::repeat_edge(in1)(x - 7), ones, "repeat_edge, 1");
  both(out(x) = loom::mirror_image(in1)(x - 7), ones, "mirror_image, 1");
  both(out(x) = loom::mirror_interior(in1)(x - 7), ones, "mirror_interior, 1");
  both(out(x) = loom::constant_exterior(in1, C)(x - 7), {C, C, C, C, C, C, C, 10, C, C, C, C, C, C, C, C, C}, "constant_exterior, 1");
}

TEST_CASE("boundary: the reference remapping agrees with the written-out patterns", "[boundary]") {
  // The sweeps below trust ref_index; pin it to the same patterns as above.
  std::vector<index_t> got;
  for (index_t i = -7; i <= 9; ++i) got.push_back(ref_index(cond::mirror_interior, i, 3));
  CHECK(got == std::vector<index_t>{1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1});
  got.clear();
  for (index_t i = -7; i <= 9; ++i) got.push_back(ref_index(cond::mirror_image, i, 3));
  CHECK(got == std::vector<index_t>{0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2});
  got.clear();
  for (index_t i = -7; i <= 9; ++i) got.push_back(ref_index(cond::mirror_image, i, 2));
  CHECK(got == std::vector<index_t>{1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1});
}

// ---------------------------------------------------------------------------------------------
// 1-D: every condition, extents 1, 2, 3 and primes, offsets past the extent, scaled indices.
// ---------------------------------------------------------------------------------------------

namespace {
template <cond K, class T, class... S>
void sweep_1d() {
  auto g = lt::make_rng(lt::str("boundary 1-D ", cond_name(K), " ", lt::type_name<T>()));
  const T outside = T(-3.5);
  for (index_t e : {1, 2, 3, 5, 7, 13, 17, 31, 33, 97}) {
    auto in = lt::random_buffer<T, 1>({e}, lt::pick_layout(g), "in", g);
    auto b = bounded<K>(in.view, outside);
    for (index_t m : {1, 3, 8, 17, 40}) {
      auto out = lt::make_buffer<T, 1>({m}, lt::pick_layout(g), "out");
      for (index_t k : {1, -1, 2, 3, -2}) {
        for (index_t off : {index_t(-9), index_t(-2), index_t(-1), index_t(0), index_t(1), index_t(2), index_t(7),
                            -(e + 5), 2 * e + 3}) {
          auto def = out.view(x) = b(k * x + off);
          auto ref = [&](const idx_t<1>& q) { return ref_read(K, in.view, {k * q[0] + off}, double(outside)); };
          const std::string what = lt::str(cond_name(K), " ", lt::type_name<T>(), ": out(x) = b(", k, " * x + ", off,
                                           "), ", in.describe(), ", out extent ", m);
          (run_and_compare<S>(def, out.view, ref, 0, what), ...);
          CHECK(out.untouched().ok);
        }
      }
    }
  }
}
}  // namespace

#if LOOM_TEST_BOUNDARY_FULL
TEST_CASE("boundary: 1-D, every condition, offsets +-1, +-2 and past the extent, scaled indices", "[boundary]") {
  // Each schedule is one more compiled pipeline per condition (interior and border nests): the
  // tails (shifted, masked, guarded) are spread over the conditions rather than multiplied.
  sweep_1d<cond::repeat_edge, float, scalar, masked_x>();
  sweep_1d<cond::constant_exterior, float, lanes_x, by_default>();
  sweep_1d<cond::mirror_image, float, guarded_x, by_default>();
  sweep_1d<cond::mirror_interior, float, scalar, masked_x>();
  sweep_1d<cond::repeat_edge, double, by_default>();
  sweep_1d<cond::mirror_interior, double, masked_x>();
}

#endif  // LOOM_TEST_BOUNDARY_FULL

// ---------------------------------------------------------------------------------------------
// 2-D: every side and corner, every view layout (row-major Tensor, transposed, strided, ...).
// ---------------------------------------------------------------------------------------------

namespace {
/// out(y, x) = b(y + dy, x + dx) for offsets reaching every side and corner, on `in` (a view).
template <cond K, class T, class In, class... S>
void sides_and_corners(const In& in, const std::string& describe, lt::rng_t& g) {
  const T outside = T(7.25);
  auto b = bounded<K>(in, outside);
  const index_t H = in.extent(0), W = in.extent(1);
  const index_t offsets[] = {-7, -2, -1, 0, 1, 2, 7};
  for (index_t dy : offsets) {
    for (index_t dx : offsets) {
      if (!lt::coin(g, 0.4) && !(dy == -7 && dx == 7)) continue;  // a sample, one far corner always
      const index_t Ho = lt::uniform(g, 1, H + 4), Wo = lt::uniform(g, 1, W + 19);
      auto out = lt::make_buffer<T, 2>({Ho, Wo}, lt::pick_layout(g), "out");
      auto def = out.view(y, x) = b(y + dy, x + dx);
      auto ref = [&](const idx_t<2>& q) { return ref_read(K, in, {q[0] + dy, q[1] + dx}, double(outside)); };
      const std::string what = lt::str(cond_name(K), " ", lt::type_name<T>(), ": out(y, x) = b(y + ", dy, ", x + ", dx,
                                       "), in ", describe, ", ", out.describe());
      (run_and_compare<S>(def, out.view, ref, 0, what), ...);
    }
  }
}

template <cond K, class T, class... S>
void sweep_2d() {
  auto g = lt::make_rng(lt::str("boundary 2-D ", cond_name(K), " ", lt::type_name<T>()));
  const idx_t<2> shapes[] = {{1, 1}, {1, 5}, {2, 3}, {3, 2}, {3, 17}, {13, 9}, {5, 33}};
  for (const auto& s : shapes) {
    // Every layout of the test buffers (layout_stride views): row-major, column-major,
    // transposed(), strided(), block(), reversed, odd offset.
    for (lt::layout l : lt::all_layouts()) {
      auto in = lt::random_buffer<T, 2>(s, l, "in", g);
      sides_and_corners<K, T, decltype(in.view), S...>(in.view, in.describe(), g);
    }
    // A Tensor (layout_right: rows unit-stride by type), and Tensor::transposed() directly.
    loom::Tensor<T, 2> t(s, "t");
    lt::fill_random(t.view(), g);
    sides_and_corners<K, T, typename loom::Tensor<T, 2>::view_type, S...>(t.view(), "Tensor (layout_right)", g);
    loom::Tensor<T, 2> u(idx_t<2>{s[1], s[0]}, "u");
    lt::fill_random(u.view(), g);
    sides_and_corners<K, T, loom::TensorView<T, 2>, S...>(u.transposed(), "Tensor::transposed()", g);
  }
}
}  // namespace

#if LOOM_TEST_BOUNDARY_FULL
TEST_CASE("boundary: 2-D, every side and corner, every layout, float", "[boundary]") {
  sweep_2d<cond::repeat_edge, float, masked_y>();
  sweep_2d<cond::constant_exterior, float, lanes_x>();
  sweep_2d<cond::mirror_image, float, by_default>();
  sweep_2d<cond::mirror_interior, float, masked_x>();
}

TEST_CASE("boundary: 2-D, every side and corner, every layout, double", "[boundary]") {
  sweep_2d<cond::repeat_edge, double, by_default>();
  sweep_2d<cond::mirror_image, double, masked_x>();
}

#endif  // LOOM_TEST_BOUNDARY_FULL

TEST_CASE("boundary: the 3-point blur of the documentation, a const Tensor, a large parallel run", "[boundary]") {
  auto g = lt::make_rng("boundary blur");
  for (const idx_t<2> s : {idx_t<2>{1, 1}, idx_t<2>{4, 7}, idx_t<2>{9, 31}, idx_t<2>{300, 259}}) {
    loom::Tensor<float, 2> in_store(s, "in"), out(s, "out");
    lt::fill_random(in_store.view(), g);
    const loom::Tensor<float, 2>& in = in_store;  // a const tensor: a view of const elements
    auto pin = loom::repeat_edge(in);
    static_assert(std::is_const_v<typename decltype(pin)::view_type::element_type>);
    auto def = out(y, x) = (pin(y, x - 1) + pin(y, x) + pin(y, x + 1)) / 3.f;
    auto ref = [&](const idx_t<2>& q) {
      double t = 0;
      for (index_t d = -1; d <= 1; ++d) t += ref_read(cond::repeat_edge, in.view(), {q[0], q[1] + d}, 0);
      return t / 3;
    };
    const std::string what = lt::str("blur of ", s[0], " x ", s[1]);
    run_and_compare<scalar>(def, out.view(), ref, lt::tolerance<float>(3), what);
    run_and_compare<lanes_x>(def, out.view(), ref, lt::tolerance<float>(3), what);
    run_and_compare<by_default>(def, out.view(), ref, lt::tolerance<float>(3), what);
  }
}

// ---------------------------------------------------------------------------------------------
// Regions: indices in the space, [origin, origin + extent); outputs over a box that starts
// elsewhere than 0 (the run's starts reach the node through bind).
// ---------------------------------------------------------------------------------------------

namespace {
template <cond K, class... S>
void regions() {
  auto g = lt::make_rng(lt::str("boundary regions ", cond_name(K)));
  const float outside = -2;
  for (int rep = 0; rep < 6; ++rep) {
    const index_t H = lt::uniform(g, 1, 9), W = lt::uniform(g, 1, 21);
    const idx_t<2> origin{lt::uniform(g, -6, 6), lt::uniform(g, -6, 6)};
    loom::Tensor<float, 2> store(idx_t<2>{H, W}, "space");
    lt::fill_random(store.view(), g);
    const loom::region_view<float, 2> r(store.view(), origin);
    // The same region over a transposed (layout_stride) view.
    loom::Tensor<float, 2> tstore(idx_t<2>{W, H}, "space_t");
    lt::fill_random(tstore.view(), g);
    const loom::region_view<float, 2, loom::layout_stride> rt(tstore.transposed(), origin);
    auto b = bounded<K>(r, outside);
    auto bt = bounded<K>(rt, outside);
    const index_t dy = lt::uniform(g, -4, 4), dx = lt::uniform(g, -4, 4);
    const index_t Ho = lt::uniform(g, 1, H + 8), Wo = lt::uniform(g, 1, W + 20);
    const std::string what = lt::str(cond_name(K), ": region ", H, " x ", W, " at (", origin[0], ", ", origin[1],
                                     "), offsets (", dy, ", ", dx, "), out ", Ho, " x ", Wo);
    // A plain output: y and x start at 0, reading around the region's origin.
    loom::Tensor<float, 2> out(idx_t<2>{Ho, Wo}, "out");
    auto at_origin = [&](auto base) {  // the reference over base (a view, by value)
      return [&, base](const idx_t<2>& q) {
        return ref_read(K, base, {q[0] + origin[0] + dy, q[1] + origin[1] + dx}, outside, origin);
      };
    };
    (run_and_compare<S>(out(y, x) = b(y + origin[0] + dy, x + origin[1] + dx), out.view(), at_origin(store.view()), 0,
                        what + ", plain output"),
     ...);
    (run_and_compare<S>(out(y, x) = bt(y + origin[0] + dy, x + origin[1] + dx), out.view(),
                        at_origin(tstore.transposed()), 0, what + ", transposed region, plain output"),
     ...);
    // An output that is itself a region starting at `first`: y takes first[0] .. first[0] + Ho - 1.
    const idx_t<2> first{lt::uniform(g, -9, 9), lt::uniform(g, -9, 9)};
    const loom::region_view<float, 2> ro(out.view(), first);
    auto ref_ro = [&](const idx_t<2>& q) {
      return ref_read(K, store.view(), {q[0] + first[0] + dy, q[1] + first[1] + dx}, outside, origin);
    };
    (run_and_compare<S>(ro(y, x) = b(y + dy, x + dx), out.view(), ref_ro, 0, what + lt::str(", output region at (", first[0], ", ", first[1], ")")), ...);
  }
}
}  // namespace

#if LOOM_TEST_BOUNDARY_FULL
TEST_CASE("boundary: region views with a non-zero origin, and outputs over a region", "[boundary][region]") {
  regions<cond::repeat_edge, masked_x>();
  regions<cond::constant_exterior, by_default>();
  regions<cond::mirror_image, scalar>();
  regions<cond::mirror_interior, masked_y>();
}

#endif  // LOOM_TEST_BOUNDARY_FULL

// ---------------------------------------------------------------------------------------------
// Reductions: the boundary read inside a sum, lanes along a pure or the reduction variable.
// ---------------------------------------------------------------------------------------------

#if LOOM_TEST_BOUNDARY_FULL
TEST_CASE("boundary: in reductions (1-D and 2-D convolutions, a strided 4-D one)", "[boundary][reduction]") {
  auto g = lt::make_rng("boundary reductions");
  for (const idx_t<2> s : {idx_t<2>{1, 1}, idx_t<2>{3, 2}, idx_t<2>{7, 19}, idx_t<2>{12, 40}}) {
    const index_t W = s[1];
    auto in = lt::random_buffer<float, 2>(s, lt::pick_layout(g), "in", g);
    loom::Tensor<float, 1> w3("w", 5);
    lt::fill_random(w3.view(), g);
    loom::Tensor<float, 2> w33("w2", 3, 3);
    lt::fill_random(w33.view(), g);
    loom::Tensor<float, 2> out(s, "out");
    const std::string what = lt::str("in ", in.describe());

    // sum(rx, pin(y, x + rx - 2) * w(rx)): 5 taps along the rows.
    auto pin = loom::repeat_edge(in.view);
    auto def1 = out(y, x) = loom::sum(rx, pin(y, x + rx - 2) * w3(rx));
    auto ref1 = [&](const idx_t<2>& q) {
      double t = 0;
      for (index_t r = 0; r < 5; ++r) t += ref_read(cond::repeat_edge, in.view, {q[0], q[1] + r - 2}, 0) * w3(r);
      return t;
    };
    run_and_compare<scalar>(def1, out.view(), ref1, lt::tolerance<float>(5), what + ", 5 taps along x");
    run_and_compare<masked_x>(def1, out.view(), ref1, lt::tolerance<float>(5), what + ", 5 taps along x");
    run_and_compare<loom::schedule<loom::vectorize<rx, loom::native, loom::tail::masked>>>(def1, out.view(), ref1,
                                                                                      lt::tolerance<float>(5),
                                                                                      what + ", 5 taps along x, lanes along rx");
    run_and_compare<by_default>(def1, out.view(), ref1, lt::tolerance<float>(5), what + ", 5 taps along x");

    // sum(ry, rx, c0(y + ry - 1, x + rx - 1) * w(ry, rx)): a 3 x 3 convolution, zero outside.
    auto c0 = loom::constant_exterior(in.view, 0);
    auto def2 = out(y, x) = loom::sum(ry, rx, c0(y + ry - 1, x + rx - 1) * w33(ry, rx));
    auto ref2 = [&](const idx_t<2>& q) {
      double t = 0;
      for (index_t a = 0; a < 3; ++a)
        for (index_t b = 0; b < 3; ++b)
          t += ref_read(cond::constant_exterior, in.view, {q[0] + a - 1, q[1] + b - 1}, 0) * w33(a, b);
      return t;
    };
    run_and_compare<scalar>(def2, out.view(), ref2, lt::tolerance<float>(9), what + ", 3 x 3");
    run_and_compare<lanes_x>(def2, out.view(), ref2, lt::tolerance<float>(9), what + ", 3 x 3");
    run_and_compare<by_default>(def2, out.view(), ref2, lt::tolerance<float>(9), what + ", 3 x 3");

    // A column of 5 taps into a 1-D output: out(x) = sum(ry, mi(ry - 2, x) * w(ry)).
    auto mi = loom::mirror_image(in.view);
    loom::Tensor<float, 1> col("col", W);
    auto def3 = col(x) = loom::sum(ry, mi(ry - 2, x) * w3(ry));
    auto ref3 = [&](const idx_t<1>& q) {
      double t = 0;
      for (index_t r = 0; r < 5; ++r) t += ref_read(cond::mirror_image, in.view, {r - 2, q[0]}, 0) * w3(r);
      return t;
    };
    run_and_compare<scalar>(def3, col.view(), ref3, lt::tolerance<float>(5), what + ", a column of 5 taps");
    run_and_compare<masked_x>(def3, col.view(), ref3, lt::tolerance<float>(5), what + ", a column of 5 taps");
    run_and_compare<by_default>(def3, col.view(), ref3, lt::tolerance<float>(5), what + ", a column of 5 taps");
  }

  // out(n, y, x, c) = sum(ry, rx, c0(n, 2 * y + ry - 1, x + rx - 1, c) * w(ry, rx)): stride 2 down.
  loom::Tensor<float, 4> in4("in4", 2, 9, 6, 3);
  lt::fill_random(in4.view(), g);
  loom::Tensor<float, 2> w("w", 3, 3);
  lt::fill_random(w.view(), g);
  loom::Tensor<float, 4> out4("out4", 2, 5, 6, 3);
  using loom::vars::c;
  auto c0 = loom::constant_exterior(in4, 0.f);
  auto def4 = out4(n, y, x, c) = loom::sum(ry, rx, c0(n, 2 * y + ry - 1, x + rx - 1, c) * w(ry, rx));
  auto ref4 = [&](const idx_t<4>& q) {
    double t = 0;
    for (index_t a = 0; a < 3; ++a)
      for (index_t b = 0; b < 3; ++b)
        t += ref_read(cond::constant_exterior, in4.view(), {q[0], 2 * q[1] + a - 1, q[2] + b - 1, q[3]}, 0) * w(a, b);
    return t;
  };
  run_and_compare<scalar>(def4, out4.view(), ref4, lt::tolerance<float>(9), "4-D, stride 2");
  run_and_compare<loom::schedule<loom::vectorize<c, loom::native, loom::tail::masked>>>(def4, out4.view(), ref4,
                                                                                   lt::tolerance<float>(9), "4-D, stride 2, lanes along c");
  run_and_compare<by_default>(def4, out4.view(), ref4, lt::tolerance<float>(9), "4-D, stride 2");
}

#endif  // LOOM_TEST_BOUNDARY_FULL

// A chunked parallel reduction (parallel<outer<ry>>, the default of a column sum over many rows)
// binds each chunk with the reduction variable's start moved to the chunk's first row, so a
// boundary access (which finds its indices from the starts) reads the right rows.
TEST_CASE("boundary: a chunked parallel reduction over a boundary condition", "[boundary][reduction]") {
  const index_t H = 600, W = 40;
  loom::Tensor<float, 2> in("in", H, W);
  loom::Tensor<float, 1> w("w", H), out("out", W);
  auto g = lt::make_rng("boundary chunked");
  lt::fill_random(in.view(), g);
  lt::fill_random(w.view(), g);
  auto pin = loom::repeat_edge(in);
  loom::run<loom::schedule<loom::split<ry, 64>, loom::reorder<loom::outer<ry>, loom::inner<ry>, x>, loom::vectorize<x>,
                           loom::parallel<loom::outer<ry>>>>(out(x) = loom::sum(ry, pin(ry - 1, x) * w(ry)));
  std::vector<double> ref(static_cast<std::size_t>(W));
  for (index_t q = 0; q < W; ++q) {
    double t = 0;
    for (index_t r = 0; r < H; ++r) t += double(in(std::max<index_t>(r - 1, 0), q)) * w(r);
    ref[std::size_t(q)] = t;
  }
  CHECK(lt::compare(out.view(), ref, lt::tolerance<float>(H)).ok);
  loom::run(out(x) = loom::sum(ry, pin(ry - 1, x) * w(ry)));  // the default: chunked too
  CHECK(lt::compare(out.view(), ref, lt::tolerance<float>(H)).ok);
}

// ---------------------------------------------------------------------------------------------
// The interior: strip_boundaries, narrow_to_interior, interior_of.
// ---------------------------------------------------------------------------------------------

TEST_CASE("boundary: strip_boundaries gives the plain tree, the same values on an interior box", "[boundary][interior]") {
  auto g = lt::make_rng("boundary strip");
  loom::Tensor<float, 2> in("in", 11, 23);
  lt::fill_random(in.view(), g);
  auto pin = loom::repeat_edge(in);
  auto mi = loom::mirror_interior(in);
  auto c0 = loom::constant_exterior(in, 5);
  // Reads rows y .. y + 2 and columns x .. x + 3: inside for out of 9 x 20.
  loom::Tensor<float, 2> out("out", 9, 20), plain("plain", 9, 20);
  auto rhs = pin(y + 1, x) * 2.f + mi(y, x + 3) - c0(y + 2, x + 1) + in(y, x);
  auto stripped = loom::strip_boundaries(rhs);
  static_assert(loom::has_boundary<decltype(rhs)>);
  static_assert(!loom::has_boundary<decltype(stripped)>);
  static_assert(std::is_same_v<decltype(loom::strip_boundaries(pin(y, x - 1))), decltype(in(y, x - 1))>);
  CHECK(loom::to_string(stripped) == "((((in(y + 1, x) * 2) + in(y, x + 3)) - in(y + 2, x + 1)) + in(y, x))");
  auto ref = [&](const idx_t<2>& q) {
    return 2.0 * in(q[0] + 1, q[1]) + in(q[0], q[1] + 3) - in(q[0] + 2, q[1] + 1) + in(q[0], q[1]);
  };
  run_and_compare<masked_x>(out(y, x) = rhs, out.view(), ref, lt::tolerance<float>(4), "with boundaries");
  run_and_compare<masked_x>(plain(y, x) = stripped, plain.view(), ref, lt::tolerance<float>(4), "stripped");
  CHECK(lt::compare_bits(out.view(), plain.view()).ok);
  run_and_compare<by_default>(plain(y, x) = stripped, plain.view(), ref, lt::tolerance<float>(4), "stripped");
  // Past the interior the stripped tree is plain: the run's bounds check rejects it.
  loom::Tensor<float, 2> full("full", 11, 23);
  CHECK_THROWS_AS(loom::run(full(y, x) = stripped), loom::bounds_error);
  CHECK_NOTHROW(loom::run(full(y, x) = rhs));
}

TEST_CASE("boundary: narrow_to_interior against brute force", "[boundary][interior]") {
  using Y = loom::var<'y'>;
  using X = loom::var<'x'>;
  using RX = loom::var<'r', 'x'>;
  auto g = lt::make_rng("boundary narrow");
  loom::Tensor<float, 2> store("space", 40, 40);
  const index_t coefs[] = {1, -1, 2, -2, 3};
  int nonempty = 0, empty = 0;
  for (int rep = 0; rep < 400; ++rep) {
    const index_t H = lt::uniform(g, 0, 12), W = lt::uniform(g, 1, 12);
    const idx_t<2> origin{lt::uniform(g, -5, 5), lt::uniform(g, -5, 5)};
    const loom::region_view<float, 2> r(store.view().block({0, 0}, {H, W}), origin);
    auto b = loom::mirror_image(r);
    const index_t a1 = coefs[lt::uniform(g, 0, 4)], a2 = coefs[lt::uniform(g, 0, 4)];
    const index_t c1 = lt::uniform(g, -12, 12), c2 = lt::uniform(g, -12, 12);
    const idx_t<2> start{lt::uniform(g, -8, 8), lt::uniform(g, -8, 8)}, ext{lt::uniform(g, 0, 14), lt::uniform(g, 0, 14)};
    auto inside = [&](std::size_t d, index_t i) { return i >= origin[d] && i < origin[d] + (d == 0 ? H : W); };
    const std::string what = lt::str("b(", a1, " * y + ", c1, ", ", a2, " * x + ", c2, ") on a region ", H, " x ", W,
                                     " at (", origin[0], ", ", origin[1], "), y from ", start[0], " (", ext[0],
                                     "), x from ", start[1], " (", ext[1], ")");
    INFO(what);
    {
      // One variable per dimension: the box is exactly the values whose index is inside.
      auto a = b(a1 * y + c1, a2 * x + c2);
      using Vars = loom::meta::list<Y, X>;
      loom::var_starts<Vars> st;
      st.first = {start[0], start[1]};
      auto box = loom::var_box<Vars>::of_run(ext2<Y, X>{ext[0], ext[1]}, st);
      const bool any = loom::narrow_to_interior<Vars>(a, box);
      CHECK(any == !box.empty());
      bool y_any = false, x_any = false;
      for (index_t v = start[0]; v < start[0] + ext[0]; ++v) {
        const bool ok = inside(0, a1 * v + c1);
        y_any = y_any || ok;
        if (any) CHECK(ok == (v >= box.first<Y>() && v < box.end<Y>()));
      }
      for (index_t v = start[1]; v < start[1] + ext[1]; ++v) {
        const bool ok = inside(1, a2 * v + c2);
        x_any = x_any || ok;
        if (any) CHECK(ok == (v >= box.first<X>() && v < box.end<X>()));
      }
      CHECK(any == (y_any && x_any));  // maximal: empty only when no point is inside
      (any ? nonempty : empty)++;
    }
    {
      // Several variables in a dimension (rx held at its range, x and y both narrowed): every
      // point of the box reads inside, and the box lies within the run's.
      const index_t R = lt::uniform(g, 1, 4);
      auto a = b(a1 * y + rx + c1, a2 * x - y + c2);
      using Vars = loom::meta::list<Y, X, RX>;
      loom::var_starts<Vars> st;
      st.first = {start[0], start[1], 0};
      auto box = loom::var_box<Vars>::of_run(ext_of<Vars>{{ext[0], ext[1], R}}, st);
      const bool any = loom::narrow_to_interior<loom::meta::list<Y, X>>(a, box);
      CHECK(any == !box.empty());
      CHECK(box.first<RX>() == 0);
      CHECK(box.end<RX>() == R);
      if (any) {
        CHECK(box.first<Y>() >= start[0]);
        CHECK(box.end<Y>() <= start[0] + ext[0]);
        CHECK(box.first<X>() >= start[1]);
        CHECK(box.end<X>() <= start[1] + ext[1]);
        index_t outside = 0;
        for (index_t vy = box.first<Y>(); vy < box.end<Y>(); ++vy)
          for (index_t vx = box.first<X>(); vx < box.end<X>(); ++vx)
            for (index_t vr = 0; vr < R; ++vr)
              outside += !inside(0, a1 * vy + vr + c1) || !inside(1, a2 * vx - vy + c2);
        CHECK(outside == 0);
      }
    }
  }
  // The draws must reach both answers, or the checks above prove little.
  CHECK(nonempty > 20);
  CHECK(empty > 20);
}

TEST_CASE("boundary: interior_of splits a run into a plain interior and boundary borders", "[boundary][interior]") {
  using Y = loom::var<'y'>;
  using X = loom::var<'x'>;
  using Vars = loom::meta::list<Y, X>;
  auto g = lt::make_rng("boundary split");
  for (int rep = 0; rep < 12; ++rep) {
    const index_t H = lt::uniform(g, 1, 14), W = lt::uniform(g, 1, 30);
    loom::Tensor<float, 2> in(idx_t<2>{H, W}, "in");
    lt::fill_random(in.view(), g);
    auto pin = loom::repeat_edge(in);
    auto mi = loom::mirror_image(in);
    loom::Tensor<float, 1> wrow("wrow", W);  // a plain access: it does not narrow the box
    lt::fill_random(wrow.view(), g);
    const index_t dy = lt::uniform(g, -3, 3), dx = lt::uniform(g, -3, 3);
    auto rhs = pin(y + dy, x - 1) + mi(y - 1, x + dx) * 0.5f + wrow(x);
    auto ref = [&](const idx_t<2>& q) {
      return ref_read(cond::repeat_edge, in.view(), {q[0] + dy, q[1] - 1}, 0) +
             ref_read(cond::mirror_image, in.view(), {q[0] - 1, q[1] + dx}, 0) * 0.5 + wrow(q[1]);
    };
    loom::Tensor<float, 2> out(idx_t<2>{H, W}, "out");
    lt::fill(out.view(), lt::sentinel<float>());
    const auto box = loom::interior_of<Vars, Vars>(rhs, ext2<Y, X>{H, W});
    // The interior (possibly empty) and the four borders around it, each a region of out.
    const index_t y0 = box.empty() ? 0 : box.first<Y>(), y1 = box.empty() ? 0 : box.end<Y>();
    const index_t x0 = box.empty() ? 0 : box.first<X>(), x1 = box.empty() ? 0 : box.end<X>();
    auto part = [&](index_t fy, index_t ny, index_t fx, index_t nx, bool interior) {
      if (ny <= 0 || nx <= 0) return;
      const loom::region_view<float, 2> r(out.view().block({fy, fx}, {ny, nx}), {fy, fx});
      if (interior) loom::run<masked_x>(r(y, x) = loom::strip_boundaries(rhs));
      else loom::run<masked_x>(r(y, x) = rhs);
    };
    part(y0, y1 - y0, x0, x1 - x0, true);
    part(0, y0, 0, W, false);
    part(y1, H - y1, 0, W, false);
    part(y0, y1 - y0, 0, x0, false);
    part(y0, y1 - y0, x1, W - x1, false);
    INFO("in " << H << " x " << W << ", offsets (" << dy << ", " << dx << "), interior [" << y0 << ", " << y1 << ") x ["
               << x0 << ", " << x1 << ")");
    const auto r = lt::compare(out.view(), ref, lt::tolerance<float>(3));
    INFO(r.message);
    CHECK(r.ok);
    // The exact interior of these reads: rows needing y + dy and y - 1 inside, columns x - 1, x + dx.
    const index_t ey0 = std::max<index_t>({0, -dy, 1}), ey1 = std::min<index_t>({H, H - dy, H + 1});
    const index_t ex0 = std::max<index_t>({0, 1, -dx}), ex1 = std::min<index_t>({W, W + 1, W - dx});
    if (ey0 < ey1 && ex0 < ex1) {
      CHECK(!box.empty());
      CHECK(y0 == ey0);
      CHECK(y1 == ey1);
      CHECK(x0 == ex0);
      CHECK(x1 == ex1);
    } else {
      CHECK(box.empty());
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The rest of the node's contract.
// ---------------------------------------------------------------------------------------------

TEST_CASE("boundary: printing, traits, substitution keeps the condition", "[boundary]") {
  loom::Tensor<float, 2> in("in", 4, 5);
  auto pin = loom::repeat_edge(in);
  CHECK(loom::to_string(pin(y, x - 1)) == "repeat_edge(in)(y, x - 1)");
  CHECK(loom::to_string(loom::constant_exterior(in, 0.5)(2 * y - 1, x)) == "constant_exterior(in, 0.5)(2 * y - 1, x)");
  CHECK(loom::to_string(loom::mirror_image(in)(y, 3)) == "mirror_image(in)(y, 3)");
  CHECK(loom::to_string(loom::mirror_interior(in)(y + 7, x)) == "mirror_interior(in)(y + 7, x)");
  static_assert(loom::is_boundary_access<decltype(pin(y, x))>);
  static_assert(loom::is_boundary_access<const decltype(pin(y, x))&>);
  static_assert(!loom::is_boundary_access<decltype(in(y, x))>);
  static_assert(std::is_same_v<decltype(pin(y, x))::accesses, loom::meta::list<decltype(pin(y, x))>>);
  static_assert(std::is_base_of_v<decltype(in(y, x - 1)), decltype(pin(y, x - 1))>);
  // A pipeline's inlining substitutes indices; the condition must survive it, and map_accesses
  // must hand each access over as its own type.
  loom::index_substitution<loom::meta::list<loom::var<'x'>>, decltype(x + 2)> sub{{x + 2}};
  auto e = loom::substitute(pin(y, x - 1) * 2.f, sub);
  CHECK(loom::to_string(e) == "(repeat_edge(in)(y, x + 2 - 1) * 2)");
  static_assert(loom::has_boundary<decltype(e)>);
  auto same = loom::map_accesses(pin(y, x) + in(y, x), [](const auto& a) { return a; });
  static_assert(std::is_same_v<decltype(same), decltype(pin(y, x) + in(y, x))>);
  // Integer indices build a node too: a fixed index, remapped like any other.
  for (index_t q = 0; q < 20; ++q) in.data()[q] = float(q);
  loom::Tensor<float, 1> o("o", 3);
  loom::run<scalar>(o(x) = pin(-3, 1000) + loom::mirror_interior(in)(5, x - 2));
  // in(r, c) = 5 r + c. pin(-3, 1000) reads (0, 4); row 5 of 4 reflects to 1 (... 2 3 | 2 1),
  // columns -2, -1, 0 to 2, 1, 0.
  CHECK(o(0) == 4 + 7);
  CHECK(o(1) == 4 + 6);
  CHECK(o(2) == 4 + 5);
}

TEST_CASE("boundary: an in-place run reads the old values; an empty view", "[boundary]") {
  auto g = lt::make_rng("boundary in place");
  for (index_t e : {1, 2, 9, 33}) {
    loom::Tensor<double, 1> a("a", e);
    lt::fill_random(a.view(), g);
    const std::vector<double> before(a.begin(), a.end());
    auto pa = loom::mirror_interior(a);
    loom::run<masked_x>(a(x) = pa(x - 1) + pa(x + 1));  // output overlaps the input: a temporary
    for (index_t q = 0; q < e; ++q) {
      const double want = before[std::size_t(ref_index(cond::mirror_interior, q - 1, e))] +
                          before[std::size_t(ref_index(cond::mirror_interior, q + 1, e))];
      CHECK(a(q) == want);
    }
  }
  // No element: nothing to clamp to or reflect (bounds_error); constant_exterior still has its value.
  loom::Tensor<float, 1> none("none", 0), out("out", 4);
  CHECK_THROWS_AS(loom::run(out(x) = loom::repeat_edge(none)(x)), loom::bounds_error);
  CHECK_THROWS_AS(loom::run(out(x) = loom::mirror_interior(none)(x - 1)), loom::bounds_error);
  loom::run(out(x) = loom::constant_exterior(none, 4.5f)(x + 1));
  for (index_t q = 0; q < 4; ++q) CHECK(out(q) == 4.5f);
}
