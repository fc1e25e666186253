// tests/test_conv_layout.cpp — the relayout around loom::conv2d (kernels/conv/layout.hpp): inputs
// and outputs whose channels are not unit stride (NCHW tensors seen through permuted views; views
// into bigger NCHW tensors, padded between rows, planes and images; other orders and reversed
// rows, which take the general path) are copied to NHWC and back. Checked: the gather and the
// scatter themselves, element by element, over runs and channel counts at and around the block
// (every tail), float and double; then conv2d with NCHW in and out, only in, only out, dense and
// depthwise, 3 x 3 and 1 x 1, against the NHWC call on the same values (bit for bit: a relayout
// changes no arithmetic; a 1 x 1 on NCHW planes is a GEMM per image, checked against the reference) and against conv2d_reference, with nothing outside the output written,
// on 1 and 2 threads (loom::set_num_threads).
//
// Few template instantiations on purpose (the file must compile quickly in CI): every convolution
// operand is a loom::TensorView<float, 4> and there is no epilogue.
#include "support.hpp"

#include <loom/kernels/conv.hpp>

using loom::index_t;
using lt::idx_t;

namespace {

template <class T>
using view4 = loom::TensorView<T, 4>;

/// How a logical (N, H, W, C) view lies in its storage: the storage order of the four dimensions
/// (outermost first), extra elements per dimension (padding the storage), and whether W runs
/// backwards.
struct layout {
  const char* name;
  std::array<std::size_t, 4> order;
  idx_t<4> pad{};
  bool reverse_w = false;
};

const layout nhwc{"NHWC", {0, 1, 2, 3}};
const layout nchw{"NCHW", {0, 3, 1, 2}};
const layout nchw_padded{"NCHW padded between rows, planes and images", {0, 3, 1, 2}, {1, 2, 3, 2}};
const layout nchw_plane_padded{"NCHW, planes padded (rows not)", {0, 3, 1, 2}, {1, 1, 0, 0}};
const layout cnhw{"CNHW", {3, 0, 1, 2}};
const layout nchw_reversed{"NCHW, rows reversed", {0, 3, 1, 2}, {0, 0, 1, 0}, true};
const layout hwcn{"HWCN", {1, 2, 3, 0}, {0, 0, 0, 1}};

/// A view of extents ext in layout l over its own storage; the storage outside the view holds NaN.
template <class T>
struct laid {
  std::vector<T> store;
  view4<T> view;
  std::vector<char> inside;

  laid(const idx_t<4>& ext, const layout& l, std::string_view name) {
    idx_t<4> big{}, strides{};
    for (std::size_t d = 0; d < 4; ++d) big[d] = ext[d] + l.pad[d];
    index_t acc = 1;
    for (std::size_t k = 4; k-- > 0;) {
      strides[l.order[k]] = acc;
      acc *= big[l.order[k]];
    }
    store.assign(std::size_t(acc), std::numeric_limits<T>::quiet_NaN());
    index_t origin = 0;  // the view starts half its padding in, along each dimension
    for (std::size_t d = 0; d < 4; ++d) origin += (l.pad[d] + 1) / 2 * strides[d];
    if (l.reverse_w) {
      origin += (ext[2] - 1) * strides[2];
      strides[2] = -strides[2];
    }
    view = loom::view(store.data() + origin, ext, strides, name);
    inside.assign(store.size(), 0);
    lt::for_each_index(ext, [&](const auto& idx) { inside[std::size_t(&lt::at(view, idx) - store.data())] = 1; });
  }
  /// Every storage element outside the view still holds NaN.
  bool untouched() const {
    for (std::size_t q = 0; q < store.size(); ++q)
      if (!inside[q] && !std::isnan(store[q])) return false;
    return true;
  }
};

/// v = the values of a row-major (N, H, W, C) vector.
template <class T>
void set_values(const view4<T>& v, const std::vector<T>& values) {
  std::size_t q = 0;
  lt::for_each_index(lt::extents_of(v), [&](const auto& idx) { lt::at(v, idx) = values[q++]; });
}

/// The first element of v whose bits differ from the row-major vector want ("" if none).
template <class T>
std::string first_difference(const view4<T>& v, const std::vector<T>& want) {
  std::string found;
  std::size_t q = 0;
  lt::for_each_index(lt::extents_of(v), [&](const auto& idx) {
    if (found.empty() && !lt::same_bits(lt::at(v, idx), want[q]))
      found = lt::str("at ", lt::to_string(idx), ": ", lt::at(v, idx), ", expected ", want[q]);
    ++q;
  });
  return found;
}

/// loom::set_num_threads for a scope (0, the default, after it).
struct threads_scope {
  explicit threads_scope(int n) { loom::set_num_threads(n); }
  ~threads_scope() { loom::set_num_threads(0); }
  threads_scope(const threads_scope&) = delete;
  threads_scope& operator=(const threads_scope&) = delete;
};

const layout* const every_layout[] = {&nhwc, &nchw, &nchw_padded, &nchw_plane_padded, &cnhw, &nchw_reversed, &hwcn};

/// gather_nhwc and scatter_nhwc against the definition, for a view of extents ext in every layout.
template <class T>
void check_relayout(lt::rng_t& g, const idx_t<4>& ext) {
  std::vector<T> values(std::size_t(lt::count(ext)));
  for (T& v : values) v = lt::random_value<T>(g);
  for (const layout* l : every_layout) {
    INFO(lt::type_name<T>() << " extents " << lt::to_string(ext) << ", " << l->name);
    laid<T> a(ext, *l, "a");
    set_values(a.view, values);
    const T* dense = loom::conv_detail::gather_nhwc<loom::conv_detail::relayout_in_scratch>(
        loom::conv_detail::strided_of<const T>(a.view));
    REQUIRE(std::equal(values.begin(), values.end(), dense, [](T x, T y) { return lt::same_bits(x, y); }));
    laid<T> b(ext, *l, "b");
    loom::conv_detail::scatter_nhwc<T>(values.data(), loom::conv_detail::strided_of<T>(b.view));
    const std::string diff = first_difference(b.view, values);
    INFO("scatter: " << diff);
    REQUIRE(diff.empty());
    REQUIRE(b.untouched());
  }
}

/// A convolution's shape: N x H x W x C in, K x K window, stride, padding on every side, groups.
struct conv_case {
  index_t N = 1, H = 1, W = 1, C = 1, CO = 1, K = 1, stride = 1, pad = 0, groups = 1;
  loom::conv_algorithm algorithm = loom::conv_algorithm::automatic;
  index_t OH() const { return (H + 2 * pad - K) / stride + 1; }
  index_t OW() const { return (W + 2 * pad - K) / stride + 1; }
  loom::conv2d_params params() const { return {.stride = {stride, stride}, .padding = pad, .groups = groups, .algorithm = algorithm}; }
  std::string describe() const {
    return lt::str("N = ", N, ", H = ", H, ", W = ", W, ", C = ", C, ", CO = ", CO, ", ", K, " x ", K, ", stride ", stride, ", padding ",
                   pad, ", groups ", groups, algorithm == loom::conv_algorithm::winograd ? ", Winograd" : "");
  }
};

/// Whether conv2d runs the case as a GEMM per image on channel planes (kernels/conv/pointwise.hpp):
/// a 1 x 1 at stride 1, one group, in and out with unit column stride, rows packed in a plane and
/// channels apart.
template <class VI, class VO>
bool on_planes(const conv_case& cs, const VI& in, const VO& out) {
  auto plane = [](const auto& v) { return v.stride(3) != 1 && v.stride(2) == 1 && (v.extent(1) <= 1 || v.stride(1) == v.extent(2)); };
  return cs.K == 1 && cs.stride == 1 && cs.pad == 0 && cs.groups == 1 && plane(in) && plane(out);
}

/// conv2d with `in` and `out` in the given layouts against the same call on NHWC tensors (bit for
/// bit; a 1 x 1 on channel planes, a GEMM, within the reference's tolerance) and against
/// conv2d_reference, on 1 and 2 threads.
void check_conv(lt::rng_t& g, const conv_case& cs, std::initializer_list<std::pair<const layout*, const layout*>> layouts) {
  const idx_t<4> in_ext{cs.N, cs.H, cs.W, cs.C}, out_ext{cs.N, cs.OH(), cs.OW(), cs.CO};
  loom::Tensor<float, 4> in(in_ext, "in"), w("w", cs.K, cs.K, cs.C / cs.groups, cs.CO), want(out_ext, "want"), ref(out_ext, "ref");
  lt::fill_random(in.view(), g);
  lt::fill_random(w.view(), g);
  const loom::conv2d_params p = cs.params();
  // Every call on views of one type each (one instantiation of conv2d).
  const view4<const float> in_v = in.view(), w_v = w.view();
  view4<float> want_v = want.view(), ref_v = ref.view();
  const auto pw = loom::pack_conv2d_weights(w_v, p);
  loom::conv2d(want_v, in_v, pw, p);
  loom::conv2d_reference(ref_v, in_v, w_v, p);
  const std::vector<float> in_values(in.begin(), in.end()), want_values(want.begin(), want.end());
  const lt::result close = lt::compare(want_v, [&](const auto& idx) { return double(lt::at(ref_v, idx)); },
                                       lt::tolerance<float>(cs.K * cs.K * cs.C / cs.groups));
  INFO(cs.describe() << "; NHWC against conv2d_reference: " << close.message);
  REQUIRE(close.ok);
  for (const auto& [li, lo] : layouts) {
    laid<float> a(in_ext, *li, "in"), b(out_ext, *lo, "out");
    set_values(a.view, in_values);
    for (int threads : {1, 2}) {
      const threads_scope ts(threads);
      lt::fill(b.view, std::numeric_limits<float>::quiet_NaN());
      const view4<const float> a_v = a.view;
      loom::conv2d(b.view, a_v, pw, p);
      REQUIRE(b.untouched());
      if (on_planes(cs, a.view, b.view)) {  // a GEMM per image: another order of the sums
        const lt::result r = lt::compare(b.view, [&](const auto& idx) { return double(lt::at(ref_v, idx)); },
                                         lt::tolerance<float>(cs.C));
        INFO(cs.describe() << "; in " << li->name << ", out " << lo->name << "; " << threads
                           << " thread(s); on planes, against conv2d_reference: " << r.message);
        REQUIRE(r.ok);
        continue;
      }
      const std::string diff = first_difference(b.view, want_values);
      INFO(cs.describe() << "; in " << li->name << ", out " << lo->name << "; " << threads
                         << " thread(s); against the NHWC call: " << diff);
      REQUIRE(diff.empty());
    }
  }
}

}  // namespace

TEST_CASE("conv layout: gather to NHWC and scatter back, every layout, every block tail", "[conv][layout]") {
  auto g = lt::make_rng("conv layout relayout");
  // Channels and runs of pixels (a row, or an image's plane) at and around the block edge L.
  const auto sweep = [&]<class T>(T) {
    const index_t L = lt::native_width<T>;
    for (index_t c : {index_t(1), index_t(3), L - 1, L, L + 1, 2 * L + 3})
      for (idx_t<4> e : {idx_t<4>{1, 1, 1, 0}, idx_t<4>{1, 1, 7, 0}, idx_t<4>{1, 3, 5, 0}, idx_t<4>{2, 4, L, 0},
                         idx_t<4>{2, 5, L + 3, 0}}) {
        e[3] = c;
        check_relayout<T>(g, e);
      }
    check_relayout<T>(g, {1, 1, 2 * L + 1, 5});  // one row: a run of every pixel
    check_relayout<T>(g, {2, 2, 64 * L + 5, 3});  // runs longer than a work item (64 L pixels)
  };
  sweep(0.f);
  sweep(0.0);
}

TEST_CASE("conv layout: NCHW in and out, dense, bit for bit the NHWC call", "[conv][layout]") {
  auto g = lt::make_rng("conv layout dense");
  const std::initializer_list<std::pair<const layout*, const layout*>> all = {
      {&nchw, &nchw}, {&nchw, &nhwc}, {&nhwc, &nchw}, {&nchw_padded, &nchw_padded}, {&nchw_plane_padded, &nchw_reversed}, {&cnhw, &hwcn}};
  const std::initializer_list<std::pair<const layout*, const layout*>> some = {{&nchw, &nchw}, {&nchw_padded, &nchw_plane_padded}};
  conv_case cs;
  cs.K = 3, cs.pad = 1;
  // 3 x 3 "same": one pixel, primes, a batch of two; channels 1, 3, 7, 13, 17, 33.
  cs.N = 1, cs.H = 1, cs.W = 1, cs.C = 3, cs.CO = 7;
  check_conv(g, cs, all);
  cs.N = 2, cs.H = 7, cs.W = 5, cs.C = 13, cs.CO = 17;
  check_conv(g, cs, all);
  cs.N = 1, cs.H = 11, cs.W = 13, cs.C = 33, cs.CO = 13;
  check_conv(g, cs, some);
  cs.algorithm = loom::conv_algorithm::winograd;
  check_conv(g, cs, some);
  cs.algorithm = loom::conv_algorithm::automatic;
  cs.N = 2, cs.H = 3, cs.W = 17, cs.C = 1, cs.CO = 33;
  check_conv(g, cs, some);
  cs.N = 1, cs.H = 5, cs.W = 3, cs.C = 7, cs.CO = 1, cs.stride = 2;  // strided
  check_conv(g, cs, some);
  // 1 x 1: every pixel a run of its own image's plane.
  cs = conv_case{};
  cs.N = 2, cs.H = 5, cs.W = 7, cs.C = 17, cs.CO = 33;
  check_conv(g, cs, all);
  cs.N = 1, cs.H = 13, cs.W = 1, cs.C = 3, cs.CO = 7;
  check_conv(g, cs, some);
}

TEST_CASE("conv layout: NCHW in and out, depthwise and grouped, bit for bit the NHWC call", "[conv][layout][depthwise]") {
  auto g = lt::make_rng("conv layout depthwise");
  const std::initializer_list<std::pair<const layout*, const layout*>> layouts = {
      {&nchw, &nchw}, {&nchw_padded, &nhwc}, {&nhwc, &nchw_padded}, {&nchw_reversed, &cnhw}};
  for (index_t C : {1, 7, 17, 33}) {
    conv_case cs;
    cs.N = C == 7 ? 2 : 1, cs.H = 5, cs.W = C == 17 ? 1 : 11, cs.C = cs.CO = cs.groups = C, cs.K = 3, cs.pad = 1;
    check_conv(g, cs, layouts);
  }
  // Rows of at least two vectors take the plane kernel (NCHW in and out, row stride 1): rows of
  // 32 (two vectors of 16 floats), 67 (four vectors and a tail), 40 with a 5 x 5 window or padding
  // 0 and 2; at stride 2 a 3 x 3 takes it where AVX-512 is (rows of 67 -> 34, 65 -> 32 with padding
  // 0, 100 -> 50 with padding 2) and the relayout otherwise (41 -> 21: under two vectors).
  for (const auto& [W, K, pad, stride] : {std::array<index_t, 4>{32, 3, 1, 1}, {67, 3, 1, 1}, {40, 5, 2, 1}, {40, 3, 0, 1}, {40, 3, 2, 1},
                                          {41, 3, 1, 2}, {67, 3, 1, 2}, {65, 3, 0, 2}, {100, 3, 2, 2}}) {
    conv_case cs;
    cs.N = 2, cs.H = 6, cs.W = W, cs.C = cs.CO = cs.groups = 5, cs.K = K, cs.pad = pad, cs.stride = stride;
    check_conv(g, cs, layouts);
  }
  conv_case cs;  // grouped: 2 groups of 3 -> 7 channels, strided
  cs.N = 1, cs.H = 7, cs.W = 7, cs.C = 6, cs.CO = 14, cs.groups = 2, cs.K = 3, cs.pad = 1, cs.stride = 2;
  check_conv(g, cs, layouts);
}

TEST_CASE("conv layout: 1 x 1 over images one row high, their pixels not evenly spaced", "[conv][layout]") {
  // With H = 1 the row stride says nothing: images a width crop apart (sn == sh == W' C > W C) are
  // not W pixels apart, and the GEMM shortcut must not take them (it read and wrote the wrong
  // pixels, outside the output view too). Checked against a plain loop, the storage around the
  // output's view untouched.
  auto g = lt::make_rng("conv layout 1x1 uneven images");
  struct shape {
    index_t N, W, C, CO, in_row, out_row, out_sw;  // in: (N, 1, W, C) inside rows of in_row floats
  };
  for (const shape& sh : {shape{2, 3, 4, 6, 20, 30, 6}, shape{3, 1, 4, 5, 16, 7, 5}, shape{2, 5, 3, 3, 24, 18, 3}}) {
    std::vector<float> in_store(std::size_t(sh.N * sh.in_row)), out_store(std::size_t(sh.N * sh.out_row), -9.f), w_store(std::size_t(sh.C * sh.CO));
    for (auto& v : in_store) v = float(std::uniform_real_distribution<double>(-1, 1)(g));
    for (auto& v : w_store) v = float(std::uniform_real_distribution<double>(-1, 1)(g));
    view4<float> in(in_store.data(), loom::dims<4>(sh.N, 1, sh.W, sh.C), loom::strides_t<4>{sh.in_row, sh.in_row, sh.C, 1}, "in");
    view4<float> out(out_store.data(), loom::dims<4>(sh.N, 1, sh.W, sh.CO), loom::strides_t<4>{sh.out_row, sh.out_row, sh.out_sw, 1}, "out");
    view4<float> w(w_store.data(), loom::dims<4>(1, 1, sh.C, sh.CO), "w");
    loom::conv2d(out, in, w, loom::conv2d_params{});
    INFO("N " << sh.N << " W " << sh.W << " C " << sh.C << " CO " << sh.CO);
    std::vector<bool> inside(out_store.size(), false);
    for (index_t n = 0; n < sh.N; ++n)
      for (index_t x = 0; x < sh.W; ++x)
        for (index_t co = 0; co < sh.CO; ++co) {
          double want = 0;
          for (index_t c = 0; c < sh.C; ++c) want += double(in(n, 0, x, c)) * w(0, 0, c, co);
          CHECK(std::abs(out(n, 0, x, co) - want) <= 1e-5 * (1 + std::abs(want)));
          inside[std::size_t(n * sh.out_row + x * sh.out_sw + co)] = true;
        }
    for (std::size_t q = 0; q < out_store.size(); ++q)
      if (!inside[q]) CHECK(out_store[q] == -9.f);
  }
}

TEST_CASE("conv layout: depthwise with a NaN weight in a padded tap, NCHW as NHWC", "[conv][layout][depthwise]") {
  // The plane kernels multiply padded taps by zero: with a NaN weight they would give NaN where
  // the NHWC kernel and the reference skip the tap. Rows of 40 would take them (at least two
  // vectors, any target).
  const index_t H = 4, W = 40, C = 3;
  std::vector<float> nhwc_in(std::size_t(H * W * C), 1.f), nchw_in(nhwc_in.size(), 1.f), nhwc_out(nhwc_in.size()), nchw_out(nhwc_in.size());
  std::vector<float> w_store(std::size_t(9 * C), 0.5f);
  w_store[0] = std::numeric_limits<float>::quiet_NaN();  // tap (0, 0) of channel 0
  const loom::strides_t<4> planes{C * H * W, W, 1, H * W};
  view4<float> in_a(nhwc_in.data(), loom::dims<4>(1, H, W, C), "in"), out_a(nhwc_out.data(), loom::dims<4>(1, H, W, C), "out");
  view4<float> in_b(nchw_in.data(), loom::dims<4>(1, H, W, C), planes, "in"), out_b(nchw_out.data(), loom::dims<4>(1, H, W, C), planes, "out");
  view4<float> w(w_store.data(), loom::dims<4>(3, 3, 1, C), "w");
  const loom::conv2d_params p{.padding = 1, .groups = C};
  loom::conv2d(out_a, in_a, w, p);
  loom::conv2d(out_b, in_b, w, p);
  CHECK(out_a(0, 0, 0, 0) == 2.f);  // the NaN tap is in the padding: 4 taps of 0.5
  CHECK(std::isnan(out_a(0, 1, 1, 0)));  // here it is not
  for (index_t y = 0; y < H; ++y)
    for (index_t x = 0; x < W; ++x)
      for (index_t c = 0; c < C; ++c) {
        INFO("y " << y << " x " << x << " c " << c);
        const float a = out_a(0, y, x, c), b = out_b(0, y, x, c);
        CHECK((a == b || (std::isnan(a) && std::isnan(b))));
      }
}

TEST_CASE("conv: non-finite weights skip padded taps in every kernel, as the reference does", "[conv][layout]") {
  // The kernels skip a padded tap only for a whole register tile and multiply it by the padding's
  // zero otherwise: a NaN or infinite weight then gave NaN for some pixels of a row and a finite
  // sum for others. Every path (direct, depthwise, Winograd-eligible, grouped; packed and not;
  // NHWC and NCHW) must give the reference's values.
  auto g = lt::make_rng("conv non-finite weights");
  const float specials[] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  struct shape {
    index_t H, W, C, CO, groups;
  };
  for (const shape sh : {shape{3, 12, 1, 1, 1}, shape{5, 19, 16, 16, 1}, shape{4, 6, 8, 8, 8}, shape{6, 23, 4, 6, 2}, shape{3, 40, 3, 3, 3}}) {
    for (int rep = 0; rep < 4; ++rep) {
      const index_t Cg = sh.C / sh.groups;
      std::vector<float> in_store(std::size_t(sh.H * sh.W * sh.C)), w_store(std::size_t(9 * Cg * sh.CO));
      for (auto& v : in_store) v = float(lt::uniform(g, -4, 4)) * 0.25f;
      for (auto& v : w_store) v = float(lt::uniform(g, -4, 4)) * 0.25f;
      w_store[std::size_t(lt::uniform(g, 0, index_t(w_store.size()) - 1))] = specials[rep % 3];
      view4<float> in(in_store.data(), loom::dims<4>(1, sh.H, sh.W, sh.C), "in");
      view4<float> w(w_store.data(), loom::dims<4>(3, 3, Cg, sh.CO), "w");
      std::vector<float> ref_store(std::size_t(sh.H * sh.W * sh.CO)), out_store(ref_store.size()), nchw_store(ref_store.size());
      view4<float> ref(ref_store.data(), loom::dims<4>(1, sh.H, sh.W, sh.CO), "ref"), out(out_store.data(), loom::dims<4>(1, sh.H, sh.W, sh.CO), "out");
      const loom::strides_t<4> planes{sh.CO * sh.H * sh.W, sh.W, 1, sh.H * sh.W};
      view4<float> out_nchw(nchw_store.data(), loom::dims<4>(1, sh.H, sh.W, sh.CO), planes, "out");
      const loom::conv2d_params p{.padding = 1, .groups = sh.groups};
      loom::conv2d_reference(ref, in, w, p);
      auto same = [&](const view4<float>& got, const char* what) {
        index_t bad = 0;
        for (index_t y = 0; y < sh.H; ++y)
          for (index_t x = 0; x < sh.W; ++x)
            for (index_t c = 0; c < sh.CO; ++c) {
              const float a = got(0, y, x, c), b = ref(0, y, x, c);
              bad += !(a == b || (std::isnan(a) && std::isnan(b)));
            }
        INFO(what << ": H " << sh.H << " W " << sh.W << " C " << sh.C << " CO " << sh.CO << " groups " << sh.groups);
        CHECK(bad == 0);
      };
      for (auto algorithm : {loom::conv_algorithm::automatic, loom::conv_algorithm::direct}) {
        loom::conv2d_params q = p;
        q.algorithm = algorithm;
        loom::conv2d(out, in, w, q);
        same(out, "unpacked");
        loom::conv2d(out_nchw, in, w, q);
        same(out_nchw, "unpacked, NCHW output");
        const auto pw = loom::pack_conv2d_weights(w, q);
        loom::conv2d(out, in, pw, q);
        same(out, "packed");
      }
    }
  }
}

TEST_CASE("conv: a moved-from packed weights object is empty, the moved-to one runs", "[conv][layout]") {
  std::vector<float> in_store(std::size_t(5 * 5 * 6), 1.f), w_store(std::size_t(9 * 6 * 10), 1.f), out_store(std::size_t(5 * 5 * 10));
  view4<float> in(in_store.data(), loom::dims<4>(1, 5, 5, 6), "in"), w(w_store.data(), loom::dims<4>(3, 3, 6, 10), "w");
  view4<float> out(out_store.data(), loom::dims<4>(1, 5, 5, 10), "out");
  const loom::conv2d_params p{.padding = 1};
  auto a = loom::pack_conv2d_weights(w, p);
  auto b = std::move(a);
  CHECK(!a.direct());
  CHECK(a.kh() == 0);
  CHECK_THROWS_AS(loom::conv2d(out, in, a, p), loom::shape_error);
  loom::conv2d(out, in, b, p);
  CHECK(out(0, 2, 2, 3) == 54.f);  // 9 taps x 6 channels of 1
  a = std::move(b);  // and back by assignment
  CHECK(!b.direct());
  loom::conv2d(out, in, a, p);
  CHECK(out(0, 0, 0, 0) == 24.f);  // 4 taps inside
}

TEST_CASE("conv and gemm: an empty output whose other dimensions have stride 0 is a no-op", "[conv][layout]") {
  // Strides computed as products of extents are 0 when an extent is 0; the output was refused as
  // naming elements twice.
  float buf[16] = {};
  std::vector<float> in_store(std::size_t(2 * 4 * 2 * 3), 1.f), w_store(std::size_t(9 * 3 * 5), 1.f);
  view4<float> in(in_store.data(), loom::dims<4>(2, 4, 2, 3), "in"), w(w_store.data(), loom::dims<4>(3, 3, 3, 5), "w");
  view4<float> out(buf, loom::dims<4>(2, 2, 0, 5), loom::strides_t<4>{0, 0, 5, 1}, "out");  // OH 2, OW 0
  CHECK_NOTHROW(loom::conv2d(out, in, w));
  loom::Tensor<float, 2> A("A", 2, 3), B("B", 3, 0);
  auto C = loom::view(buf, loom::shape(2, 0), loom::strides(0, 1), "C");
  CHECK_NOTHROW(loom::gemm(C, A, B));
  for (float v : buf) CHECK(v == 0.f);
}

TEST_CASE("conv: NCHW with a batch smaller than the thread team", "[conv][layout][threads]") {
  // The band of images copied at once was std::clamp(v, team, N) with team > N: lo > hi, a
  // precondition failure (an abort under _GLIBCXX_ASSERTIONS).
  loom::set_num_threads(2);
  std::vector<float> in_store(std::size_t(8 * 6 * 6), 1.f), w_store(std::size_t(9 * 8 * 8), 1.f), out_store(std::size_t(6 * 6 * 8));
  view4<float> in(in_store.data(), loom::dims<4>(1, 6, 6, 8), loom::strides_t<4>{8 * 36, 6, 1, 36}, "in");  // NCHW
  view4<float> w(w_store.data(), loom::dims<4>(3, 3, 8, 8), "w"), out(out_store.data(), loom::dims<4>(1, 6, 6, 8), "out");
  loom::conv2d(out, in, w, loom::conv2d_params{.padding = 1});
  loom::set_num_threads(0);
  CHECK(out(0, 2, 2, 0) == 72.f);
  CHECK(out(0, 0, 0, 7) == 32.f);
}
