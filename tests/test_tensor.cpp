// tests/test_tensor.cpp — Tensor and TensorView: extents, strides, alignment, names, element
// access, copies, views (transposed, block, strided, permuted, loom::view with any strides) and
// static extents.
#include "support.hpp"

#include <cstdint>
#include <set>
#include <utility>

using loom::index_t;

namespace {
template <class T>
bool aligned64(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 64 == 0;
}
}  // namespace

TEST_CASE("Tensor: extents, row-major strides, size, name, zero initialisation", "[tensor]") {
  loom::Tensor<float, 2> A("A", 3, 5);
  CHECK(A.extent(0) == 3);
  CHECK(A.extent(1) == 5);
  CHECK(A.stride(0) == 5);
  CHECK(A.stride(1) == 1);
  CHECK(A.size() == 15);
  CHECK(A.name() == "A");
  CHECK(A.extents().extent(0) == 3);
  CHECK(A.extents().size() == 15);
  CHECK(std::all_of(A.begin(), A.end(), [](float v) { return v == 0.f; }));
  CHECK(A.end() - A.begin() == 15);

  loom::Tensor<double, 3> B(2, 3, 4);
  CHECK(B.stride(0) == 12);
  CHECK(B.stride(1) == 4);
  CHECK(B.stride(2) == 1);
  CHECK(B.size() == 24);
  CHECK(std::all_of(B.begin(), B.end(), [](double v) { return v == 0.0; }));

  loom::Tensor<int, 1> C(loom::shape(7), "C");
  CHECK(C.extent(0) == 7);
  CHECK(C.name() == "C");
  CHECK(std::all_of(C.begin(), C.end(), [](int v) { return v == 0; }));

  // Zero extents are valid; the strides of the dimensions after a zero still count them as 1.
  loom::Tensor<float, 2> E(0, 4);
  CHECK(E.size() == 0);
  CHECK(E.extent(0) == 0);
  CHECK(E.stride(0) == 4);
  CHECK(E.data() != nullptr);
  loom::Tensor<float, 2> E2(4, 0);
  CHECK(E2.size() == 0);
  CHECK(E2.stride(0) == 1);
  CHECK(E2.begin() == E2.end());
}

TEST_CASE("Tensor: 64-byte aligned data for every type and size", "[tensor]") {
  for (index_t n : {0, 1, 2, 3, 5, 17, 31, 64, 65, 1000}) {
    INFO("n = " << n);
    loom::Tensor<float, 1> f(n);
    loom::Tensor<double, 2> d(n, 3);
    loom::Tensor<int, 3> i(2, n, 1);
    CHECK(aligned64(f.data()));
    CHECK(aligned64(d.data()));
    CHECK(aligned64(i.data()));
  }
  loom::Tensor<float, 0> s;
  CHECK(aligned64(s.data()));
  CHECK(s.size() == 1);
  CHECK(s.data()[0] == 0.f);
}

TEST_CASE("Tensor: unnamed tensors get distinct names; set_name; long names are truncated", "[tensor]") {
  loom::Tensor<float, 1> a(3), b(3), c(3);
  std::set<std::string> names{std::string(a.name()), std::string(b.name()), std::string(c.name())};
  CHECK(names.size() == 3);
  for (const auto& n : names) CHECK(!n.empty());

  a.set_name("weights");
  CHECK(a.name() == "weights");
  const std::string longname(40, 'x');
  a.set_name(longname);
  CHECK(a.name() == longname.substr(0, loom::tensor_name::capacity));
  loom::Tensor<float, 1> named(loom::shape(2), "named");
  CHECK(named.view().name() == "named");
}

TEST_CASE("Tensor: element access by integers is row-major over data()", "[tensor]") {
  loom::Tensor<int, 3> T("T", 2, 3, 4);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) T(a, b, c) = 100 * a + 10 * b + c;
  for (int q = 0; q < 24; ++q) CHECK(T.data()[q] == 100 * (q / 12) + 10 * (q / 4 % 3) + q % 4);
  const auto& cT = T;
  CHECK(cT(1, 2, 3) == 123);
  CHECK(&cT(1, 2, 3) == T.data() + 23);
  // A view shares the storage.
  auto v = T.view();
  v(0, 1, 2) = -5;
  CHECK(T(0, 1, 2) == -5);
  CHECK(v.offset({1, 1, 1}) == 17);
}

TEST_CASE("Tensor: copies are deep, moves transfer the storage", "[tensor]") {
  loom::Tensor<float, 2> A("A", 4, 3);
  for (index_t q = 0; q < A.size(); ++q) A.data()[q] = float(q) + 0.5f;
  loom::Tensor<float, 2> B(A);
  CHECK(B.name() == "A");
  CHECK(B.data() != A.data());
  CHECK(aligned64(B.data()));
  CHECK(std::equal(A.begin(), A.end(), B.begin(), B.end()));
  B(0, 0) = 99.f;
  CHECK(A(0, 0) == 0.5f);

  loom::Tensor<float, 2> C(1, 1);
  C = A;
  CHECK(C.extent(0) == 4);
  CHECK(C.extent(1) == 3);
  CHECK(std::equal(A.begin(), A.end(), C.begin(), C.end()));
  auto& alias = C;
  C = alias;  // self-assignment keeps the contents
  CHECK(std::equal(A.begin(), A.end(), C.begin(), C.end()));
  // Assigning a tensor of the same extents keeps the storage: views taken before stay valid.
  const auto before = C.view();
  const float* storage = C.data();
  B = C;  // B was A's copy with B(0, 0) = 99
  loom::Tensor<float, 2> F("F", 4, 3);
  const auto fv = F.view();
  const float* fdata = F.data();
  F = B;
  CHECK(F.data() == fdata);
  CHECK(F.name() == "A");
  CHECK(fv(3, 2) == 11.5f);
  CHECK(std::equal(B.begin(), B.end(), F.begin(), F.end()));
  CHECK(C.data() == storage);
  CHECK(before(1, 1) == C(1, 1));

  const float* p = A.data();
  loom::Tensor<float, 2> D(std::move(A));
  CHECK(D.data() == p);
  CHECK(D(3, 2) == 11.5f);
  loom::Tensor<float, 2> E(2, 2);
  E = std::move(D);
  CHECK(E.data() == p);
  CHECK(E.extent(0) == 4);

  // A moved-from tensor owns nothing (it aliased the new owner's storage, and read it after it
  // was freed): no elements, a null pointer, its name; a run reading it is a shape error, a copy
  // of it is empty, and it takes a new value by assignment.
  CHECK(D.size() == 0);
  CHECK(D.extent(0) == 0);
  CHECK(D.data() == nullptr);
  CHECK(D.name() == "A");
  CHECK(A.size() == 0);
  loom::Tensor<float, 2> out("out", 4, 3);
  using namespace loom::vars;
  CHECK_THROWS_AS(loom::run(out(i, j) = D(i, j) * 2.f), loom::shape_error);
  const loom::Tensor<float, 2> G(D);
  CHECK(G.size() == 0);
  D = E;
  CHECK(D.extent(0) == 4);
  CHECK(D.data() != nullptr);
  CHECK(D(3, 2) == 11.5f);
  loom::run(out(i, j) = D(i, j) * 2.f);
  CHECK(out(3, 2) == 23.f);
  auto& self = D;
  D = std::move(self);  // self-move keeps the tensor
  CHECK(D(3, 2) == 11.5f);
  loom::Tensor<double, 2, loom::extents<3, 4>> S;
  S(2, 3) = 5.0;
  loom::Tensor<double, 2, loom::extents<3, 4>> T(std::move(S));
  CHECK(T(2, 3) == 5.0);
  CHECK(S.data() == nullptr);
  S = T;
  CHECK(S(2, 3) == 5.0);
  CHECK(S.data() != T.data());
}

TEST_CASE("Tensor: an empty tensor's other extents may be huge; its size is 0 in any order", "[tensor]") {
  const index_t G = index_t{1} << 40;
  for (const auto& e : {loom::shape(0, G, G), loom::shape(G, 0, G), loom::shape(G, G, 0)}) {
    INFO(e[0] << " x " << e[1] << " x " << e[2]);
    loom::Tensor<float, 3> t(e, "t");
    CHECK(t.size() == 0);
    CHECK(t.extents().size() == 0);
    CHECK(t.data() != nullptr);
    const loom::TensorView<float, 3> v = loom::view(static_cast<float*>(nullptr), e, loom::strides(1, 1, 1));
    CHECK(v.size() == 0);
  }
  // Not empty: too large.
  CHECK_THROWS_AS((loom::Tensor<float, 3>(G, G, 2)), loom::shape_error);
}

TEST_CASE("TensorView: transposed and permuted views", "[tensor][view]") {
  loom::Tensor<float, 2> A("A", 3, 5);
  for (index_t q = 0; q < A.size(); ++q) A.data()[q] = float(q);
  auto T = A.transposed();
  CHECK(T.extent(0) == 5);
  CHECK(T.extent(1) == 3);
  CHECK(T.stride(0) == 1);
  CHECK(T.stride(1) == 5);
  CHECK(T.name() == "A");
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 5; ++b) CHECK(&T(b, a) == &A(a, b));
  auto P = A.permuted<1, 0>();
  CHECK(P.extent(0) == 5);
  CHECK(P.strides() == T.strides());
  CHECK(P.data() == T.data());
  auto TT = T.transposed();
  CHECK(TT.strides() == A.view().strides());

  loom::Tensor<int, 3> B(2, 3, 4);
  auto Q = B.permuted<2, 0, 1>();  // Q(c, a, b) = B(a, b, c)
  CHECK(Q.extent(0) == 4);
  CHECK(Q.extent(1) == 2);
  CHECK(Q.extent(2) == 3);
  CHECK(Q.stride(0) == 1);
  CHECK(Q.stride(1) == 12);
  CHECK(Q.stride(2) == 4);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) CHECK(&Q(c, a, b) == &B(a, b, c));
}

TEST_CASE("TensorView: block views, and out-of-range blocks throw bounds_error", "[tensor][view]") {
  loom::Tensor<double, 2> A("A", 6, 7);
  for (index_t q = 0; q < A.size(); ++q) A.data()[q] = double(q);
  auto b = A.block({2, 3}, {3, 4});
  CHECK(b.extent(0) == 3);
  CHECK(b.extent(1) == 4);
  CHECK(b.stride(0) == 7);
  CHECK(b.stride(1) == 1);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) CHECK(&b(r, c) == &A(r + 2, c + 3));
  // A block of a block.
  auto bb = b.block({1, 1}, {2, 2});
  CHECK(&bb(0, 0) == &A(3, 4));
  CHECK(&bb(1, 1) == &A(4, 5));
  // The whole tensor, and empty blocks (even at the far edge).
  CHECK(A.block({0, 0}, {6, 7}).data() == A.data());
  CHECK(A.block({6, 0}, {0, 7}).size() == 0);
  CHECK(A.block({2, 7}, {3, 0}).size() == 0);

  CHECK_THROWS_AS(A.block({4, 0}, {3, 1}), loom::bounds_error);
  CHECK_THROWS_AS(A.block({0, 0}, {1, 8}), loom::bounds_error);
  CHECK_THROWS_AS(A.block({-1, 0}, {1, 1}), loom::bounds_error);
  CHECK_THROWS_AS(A.block({0, 0}, {1, -1}), loom::bounds_error);
  try {
    (void)A.block({1, 5}, {2, 3});
    FAIL("block past the extent did not throw");
  } catch (const loom::bounds_error& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("'A'") && Catch::Contains("dimension 1") && Catch::Contains("[5, 8)") &&
                        Catch::Contains("extent 7"));
  }
  // bounds_error is a loom::error.
  CHECK_THROWS_AS(A.block({7, 0}, {1, 1}), loom::error);
}

TEST_CASE("TensorView: strided views, and a step below 1 throws shape_error", "[tensor][view]") {
  loom::Tensor<float, 2> A("A", 7, 10);
  for (index_t q = 0; q < A.size(); ++q) A.data()[q] = float(q);
  auto s = A.strided({2, 3});
  CHECK(s.extent(0) == 4);  // rows 0, 2, 4, 6
  CHECK(s.extent(1) == 4);  // cols 0, 3, 6, 9
  CHECK(s.stride(0) == 20);
  CHECK(s.stride(1) == 3);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) CHECK(&s(r, c) == &A(2 * r, 3 * c));
  auto s1 = A.strided({1, 1});
  CHECK(s1.strides() == A.view().strides());
  CHECK(s1.extent(0) == 7);
  auto s2 = A.strided({7, 11});
  CHECK(s2.extent(0) == 1);
  CHECK(s2.extent(1) == 1);
  CHECK_THROWS_AS(A.strided({0, 1}), loom::shape_error);
  CHECK_THROWS_AS(A.strided({1, -2}), loom::shape_error);
  // Strided of a transposed view.
  auto ts = A.transposed().strided({2, 1});
  CHECK(ts.extent(0) == 5);
  CHECK(ts.extent(1) == 7);
  CHECK(&ts(2, 3) == &A(3, 4));
}

TEST_CASE("loom::view: non-owning views with any strides", "[tensor][view]") {
  std::vector<float> mem(12);
  for (std::size_t q = 0; q < mem.size(); ++q) mem[q] = float(q);
  auto rm = loom::view(mem.data(), loom::shape(3, 4));
  CHECK(rm.stride(0) == 4);
  CHECK(rm.stride(1) == 1);
  CHECK(rm(2, 1) == 9.f);
  CHECK(rm.name() == "view");
  auto cm = loom::view(mem.data(), loom::shape(3, 4), loom::strides(1, 3), "cm");
  CHECK(cm.name() == "cm");
  CHECK(cm.stride(0) == 1);
  CHECK(cm.stride(1) == 3);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) CHECK(cm(r, c) == float(r + 3 * c));
  // Negative strides: the rows backwards.
  auto rev = loom::view(mem.data() + 8, loom::shape(3, 4), loom::strides(-4, 1), "rev");
  CHECK(rev(0, 0) == 8.f);
  CHECK(rev(2, 3) == 3.f);
  // Views of const memory, and conversion of a mutable view to a const one.
  const std::vector<float>& cmem = mem;
  auto cv = loom::view(cmem.data(), loom::shape(12));
  static_assert(std::is_same_v<decltype(cv), loom::TensorView<const float, 1, loom::dims<1>, loom::layout_right>>);
  CHECK(cv(11) == 11.f);
  loom::TensorView<const float, 2> crm = rm;
  CHECK(crm(1, 1) == 5.f);
  CHECK(crm.data() == rm.data());
  // A view's as_view / dynamic are the same view.
  CHECK(rm.as_view().data() == rm.data());
  CHECK(rm.dynamic().strides() == rm.strides());
  CHECK(rm.set_name("renamed").name() == "renamed");
}

TEST_CASE("Tensor: static extents", "[tensor][static]") {
  using E = loom::extents<16, loom::dyn>;
  static_assert(E::rank == 2);
  static_assert(E::rank_dynamic == 1);
  static_assert(E::static_extent(0) == 16);
  static_assert(E::static_extent(1) == loom::dyn);

  loom::Tensor<float, 2, E> S(16, 5);
  CHECK(S.extent(0) == 16);
  CHECK(S.extent(1) == 5);
  CHECK(S.stride(0) == 5);
  CHECK(S.size() == 80);
  CHECK(aligned64(S.data()));
  loom::Tensor<float, 2, E> S2(7);  // only the dynamic extent
  CHECK(S2.extent(0) == 16);
  CHECK(S2.extent(1) == 7);
  loom::Tensor<float, 2, E> S3("S3", 9);
  CHECK(S3.name() == "S3");
  CHECK(S3.extent(1) == 9);

  CHECK_THROWS_AS((loom::Tensor<float, 2, E>(15, 5)), loom::shape_error);
  CHECK_THROWS_AS((loom::Tensor<float, 2, E>(loom::shape(17, 5))), loom::shape_error);
  try {
    loom::Tensor<float, 2, E> bad(8, 3);
    FAIL("a static extent mismatch did not throw");
  } catch (const loom::shape_error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("dimension 0") && Catch::Contains("16") && Catch::Contains("8"));
  }
  try {
    loom::Tensor<float, 2, E> bad("weights", 15, 3);
    FAIL("a static extent mismatch did not throw");
  } catch (const loom::shape_error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("'weights'") && Catch::Contains("dimension 0") && Catch::Contains("15"));
  }

  // Fully static: default constructible.
  loom::Tensor<double, 2, loom::extents<3, 4>> F;
  CHECK(F.size() == 12);
  CHECK(F.stride(0) == 4);
  CHECK(std::all_of(F.begin(), F.end(), [](double v) { return v == 0.0; }));
  loom::Tensor<int, 1, loom::extents<8>> G;
  G(7) = 3;
  CHECK(G.data()[7] == 3);

  // Negative extents are a shape_error.
  CHECK_THROWS_AS((loom::Tensor<float, 2>(-1, 3)), loom::shape_error);
  CHECK_THROWS_AS((loom::Tensor<float, 2, E>(-2)), loom::shape_error);
}

TEST_CASE("Tensor: static-extent views keep extents and convert to const", "[tensor][static]") {
  loom::Tensor<float, 2, loom::extents<4, loom::dyn>> S(4, 6);
  auto v = S.view();
  static_assert(std::is_same_v<decltype(v), loom::TensorView<float, 2, loom::extents<4, loom::dyn>, loom::layout_right>>);
  CHECK(v.extent(0) == 4);
  const auto& cS = S;
  auto cv = cS.view();
  static_assert(std::is_same_v<decltype(cv), loom::TensorView<const float, 2, loom::extents<4, loom::dyn>, loom::layout_right>>);
  CHECK(cv.data() == S.data());
  auto d = v.dynamic();
  static_assert(std::is_same_v<decltype(d), loom::TensorView<float, 2, loom::dims<2>, loom::layout_right>>);
  CHECK(d.extent(0) == 4);
  CHECK(d.extent(1) == 6);
  auto t = S.transposed();
  CHECK(t.extent(0) == 6);
  CHECK(t.extent(1) == 4);
}

TEST_CASE("TensorView: layouts", "[tensor][view][layout]") {
  // A tensor's rows are unit-stride by type (layout_right); so are a row-major view's and blocks
  // of either. Transposed, strided and explicitly strided views are layout_stride.
  loom::Tensor<float, 2> A("A", 5, 6);
  using right = loom::layout_right;
  using stride = loom::layout_stride;
  static_assert(std::is_same_v<decltype(A.view())::layout_type, right>);
  static_assert(std::is_same_v<decltype(A.block({1, 1}, {2, 2}))::layout_type, right>);
  static_assert(std::is_same_v<decltype(A.view().block({1, 1}, {2, 2}))::layout_type, right>);
  static_assert(std::is_same_v<decltype(A.transposed())::layout_type, stride>);
  static_assert(std::is_same_v<decltype(A.strided({1, 2}))::layout_type, stride>);
  static_assert(std::is_same_v<decltype(loom::view(A.data(), loom::shape(5, 6)))::layout_type, right>);
  static_assert(std::is_same_v<decltype(loom::view(A.data(), loom::shape(5, 6), loom::strides(6, 1)))::layout_type, stride>);
  CHECK(A.view().stride(1) == 1);
  CHECK(A.view().stride(0) == 6);
  // Conversions that lose nothing are implicit: to layout_stride, to const, to dynamic extents.
  loom::TensorView<float, 2> s = A;
  loom::TensorView<const float, 2> cs = A.view();
  loom::TensorView<const float, 2, loom::dims<2>, right> cr = A;
  CHECK(s.data() == A.data());
  CHECK(cs.stride(0) == 6);
  CHECK(cr.stride(1) == 1);
  loom::Tensor<float, 2, loom::extents<3, 4>> S;
  loom::TensorView<float, 2> sd = S;
  CHECK(sd.extent(0) == 3);
  CHECK(sd.extent(1) == 4);
  static_assert(!std::is_convertible_v<loom::TensorView<float, 2>, loom::TensorView<float, 2, loom::dims<2>, right>>,
                "a strided view must not become layout_right implicitly");
  // Building a layout_right view with a non-unit last stride is an error, not a wrong answer.
  std::vector<float> mem(30);
  CHECK_THROWS_AS((loom::TensorView<float, 2, loom::dims<2>, right>(mem.data(), loom::dims<2>(5, 3), {1, 5})),
                  loom::shape_error);
}

TEST_CASE("Index expressions print as written", "[tensor][index]") {
  using namespace loom::vars;
  CHECK(loom::to_string(x + 1) == "x + 1");
  CHECK(loom::to_string(2 * y - 1) == "2 * y - 1");
  CHECK(loom::to_string(x + r) == "x + r");
  CHECK(loom::to_string(x - ry) == "x - ry");
  constexpr auto e = 3 * (x + 2) - y;
  static_assert(e.coef<loom::loop_t<x>>() == 3);
  static_assert(e.coef<loom::loop_t<y>>() == -1);
  static_assert(e.offset() == 6);
  constexpr loom::Var<"q"> q;
  CHECK(decltype(q)::name() == "q");
  CHECK(loom::to_string(q * 4 + 1) == "4 * q + 1");
  loom::Tensor<float, 2> A("A", 3, 3);
  CHECK(loom::to_string(A(x + 1, 2 * y)) == "A(x + 1, 2 * y)");
  CHECK(loom::to_string(A(i, 0)) == "A(i, 0)");
}
