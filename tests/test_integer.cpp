// tests/test_integer.cpp — integer image pipelines: uint8 ... int64 elements with loom's wrap-around
// arithmetic; cast and saturating_cast between every pair of element types (and float, double)
// with values at and beyond every type's limits; integer division by constants, by run-time
// values (every uint8/int8/uint16/int16 input) and by expressions; min/max, comparisons and
// select across element sizes; a 3x3 uint16 box blur in one definition; integer reductions. Each
// runs through a scalar schedule, vectorize<x> and the default schedule, on extents of 1, primes
// and one either side of every vector width, against plain loops written here. A vectorized
// loop's lane count comes from the output type, so most of these trees hold lanes of other sizes
// (simd::lanes: several registers, or part of one).
#include "support.hpp"

using loom::index_t;
using namespace loom::vars;

namespace {

template <class T>
constexpr const char* tname() {
  if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, std::int8_t>) return "int8";
  else if constexpr (std::is_same_v<T, std::uint16_t>) return "uint16";
  else if constexpr (std::is_same_v<T, std::int16_t>) return "int16";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else return "?";
}

template <class... T>
struct types {};
using int_types = types<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t, std::int32_t, std::int64_t>;
using all_types =
    types<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t, std::int32_t, std::int64_t, float, double>;

template <class... T, class F>
void for_each_type(types<T...>, F&& f) {
  (f.template operator()<T>(), ...);
}

/// 1, primes, and one either side of every lane count (2 ... 64).
const std::vector<index_t>& extents() {
  static const std::vector<index_t> v = {1, 2, 3, 5, 7, 9, 13, 15, 17, 31, 33, 47, 63, 65, 97, 127, 129, 131};
  return v;
}

enum class sched { scalar, vectorized, automatic };
const char* sched_name(sched s) {
  switch (s) {
    case sched::scalar: return "schedule<>";
    case sched::vectorized: return "schedule<vectorize<x>>";
    case sched::automatic: return "the default schedule";
  }
  return "?";
}

template <sched S, class D>
void run_as(const D& def) {
  if constexpr (S == sched::scalar) loom::run<loom::schedule<>>(def);
  else if constexpr (S == sched::vectorized) loom::run<loom::schedule<loom::vectorize<x>>>(def);
  else loom::run(def);
}

/// f.operator()<S>() for each of the three schedules.
template <class F>
void for_each_schedule(F&& f) {
  f.template operator()<sched::scalar>();
  f.template operator()<sched::vectorized>();
  f.template operator()<sched::automatic>();
}

/// The conversions of image pipelines: 8- and 16-bit unsigned to and from each other, 32-bit
/// unsigned and float.
template <class From, class To>
inline constexpr bool image_conversion = [] {
  auto pixel = [](auto t) { using U = decltype(t); return std::is_same_v<U, std::uint8_t> || std::is_same_v<U, std::uint16_t>; };
  auto wide = [](auto t) { using U = decltype(t); return std::is_same_v<U, std::uint32_t> || std::is_same_v<U, float>; };
  return (pixel(From{}) && (pixel(To{}) || wide(To{}))) || (pixel(To{}) && wide(From{}));
}();

template <class T>
T sentinel() {
  return lt::sentinel<T>();
}

template <class T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  }
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
std::string show(T v) {
  std::ostringstream os;
  os.precision(17);
  os << +v;
  return os.str();
}

/// Mismatches of one run: the first is described (only the first: a broken kernel makes millions),
/// the rest counted.
struct mismatches {
  index_t count = 0;
  std::string first;
  template <class F>
  void add(F&& describe) {
    if (count++ == 0) first = describe();
  }
  std::string message() const { return count == 0 ? "" : lt::str(count, " mismatches; first: ", first); }
};

/// Values at and beyond every type's limits, as they land in T (an integer T keeps them modulo
/// 2^bits, as storing them would), then random ones over T's whole range.
template <class T>
std::vector<T> edge_values(lt::rng_t& g, int randoms = 64) {
  using L = std::numeric_limits<T>;
  std::vector<T> v;
  const long double two63 = 9223372036854775808.0L;
  // clang-format off
  const long double common[] = {0,      1,      -1,     2,       -2,      7,       100,      127,     128,      -127,
                                -128,   -129,   200,    255,     256,     257,     -255,     -256,    1000,     32767,
                                32768,  -32767, -32768, -32769,  65535,   65536,   65537,    -65535,  -65536,   1e6,
                                2147483647.0L, 2147483648.0L, -2147483647.0L, -2147483648.0L, -2147483649.0L,
                                4294967295.0L, 4294967296.0L, two63 - 1024, -two63};
  // clang-format on
  for (long double c : common) {
    if constexpr (std::is_integral_v<T>) v.push_back(static_cast<T>(static_cast<std::int64_t>(c)));
    else v.push_back(static_cast<T>(c));
  }
  if constexpr (std::is_integral_v<T>) {
    for (T e : {L::min(), L::max(), T(L::min() + 1), T(L::max() - 1)}) v.push_back(e);
    for (int k = 0; k < randoms; ++k) v.push_back(static_cast<T>(g()));
  } else {
    // clang-format off
    const long double more[] = {0.5,   -0.5,  0.99,  -0.99, 1.5,   -1.5,  127.5,   255.5,          -128.5, 65535.5,
                                -0.0,  1e10,  -1e10, 1e20,  -1e20, 3e38,  -3e38,   2147483520.0L,  2147483647.5L,
                                4294967295.5L, 4294967040.0L, -2147483648.5L, 9223372036854774784.0L};
    // clang-format on
    for (long double c : more) v.push_back(static_cast<T>(c));
    for (T e : {L::infinity(), -L::infinity(), L::quiet_NaN(), L::max(), L::lowest(), L::denorm_min(), L::min()}) v.push_back(e);
    if constexpr (std::is_same_v<T, double>) {
      v.push_back(1e300);
      v.push_back(-1e300);
    }
    for (int k = 0; k < randoms; ++k) {
      const double u = std::uniform_real_distribution<double>(-1, 1)(g);
      v.push_back(static_cast<T>(std::ldexp(u, int(lt::uniform(g, 0, 70)))));
    }
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// References, written out here (not loom's scalar forms).
// ---------------------------------------------------------------------------------------------

/// Whether static_cast<To>(x) is defined in C++ (a floating-point value whose truncation does not
/// fit an integer To, or a finite double beyond float's range, is undefined behaviour).
template <class To, class From>
bool cast_defined(From x) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(x)) return false;
    const long double t = std::trunc(static_cast<long double>(x));
    return t >= static_cast<long double>(std::numeric_limits<To>::lowest()) &&
           t <= static_cast<long double>(std::numeric_limits<To>::max());
  } else if constexpr (std::is_floating_point_v<From> && sizeof(To) < sizeof(From)) {
    return !std::isfinite(x) || std::abs(x) <= static_cast<From>(std::numeric_limits<To>::max());
  } else {
    return true;
  }
}

/// Halide's saturating_cast: clamped to To's range. To an integer, NaN gives 0; to a floating
/// point type, NaN and ±inf stay, finite values clamp to its finite range.
template <class To, class From>
To ref_saturate(From x) {
  using L = std::numeric_limits<To>;
  if constexpr (std::is_floating_point_v<To>) {
    if constexpr (std::is_floating_point_v<From>) {
      if (std::isnan(x)) return L::quiet_NaN();
      if (std::isinf(x)) return x > 0 ? L::infinity() : -L::infinity();
      if (static_cast<long double>(x) > static_cast<long double>(L::max())) return L::max();
      if (static_cast<long double>(x) < static_cast<long double>(L::lowest())) return L::lowest();
    }
    return static_cast<To>(x);
  } else {
    long double v = static_cast<long double>(x);  // exact for every integer up to 64 bits
    if constexpr (std::is_floating_point_v<From>) {
      if (std::isnan(x)) return To(0);
      v = std::trunc(v);
    }
    if (v <= static_cast<long double>(L::lowest())) return L::lowest();
    if (v >= static_cast<long double>(L::max())) return L::max();
    return static_cast<To>(static_cast<std::int64_t>(v));
  }
}

/// a op b modulo 2^bits of T (loom's integer arithmetic), through uint64.
template <class T>
T wrap(std::uint64_t v) {
  return static_cast<T>(v);
}
template <class T>
std::uint64_t u64(T v) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
}
template <class T>
std::uint64_t u64u(T v) {  // unsigned T: zero-extended
  if constexpr (std::is_signed_v<T>) return u64(v);
  else return static_cast<std::uint64_t>(v);
}

/// loom's integer division: toward zero, n / 0 = 0, lowest / -1 wraps to lowest.
template <class T>
T ref_divide(T n, T d) {
  if (d == 0) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (d == T(-1)) return wrap<T>(std::uint64_t(0) - u64(n));
  }
  return static_cast<T>(static_cast<std::int64_t>(n) / static_cast<std::int64_t>(d));
}

// ---------------------------------------------------------------------------------------------
// cast and saturating_cast, every pair of types. The default schedule takes the lanes (and the
// conversions) of vectorize<x>, so there only saturating_cast runs: a default nest costs twice
// the compile time of the other two, and casts meet it in the tests further down.
// ---------------------------------------------------------------------------------------------
template <class From, class To>
void check_casts(lt::rng_t& g) {
  const std::vector<From> vals = edge_values<From>(g);
  std::vector<index_t> ns = extents();
  ns.push_back(index_t(vals.size()));  // every value at least once
  for (index_t n : ns) {
    // cast<To> reads only values whose conversion is defined (the others are undefined behaviour in
    // scalar code, as in C++: clang's UBSan stops on them), saturating_cast<To> every value.
    loom::Tensor<From, 1> a(n), d(n);
    loom::Tensor<To, 1> c(n), s(n);
    for (index_t i = 0; i < n; ++i) {
      a(i) = vals[std::size_t((i + n) % index_t(vals.size()))];
      d(i) = cast_defined<To>(a(i)) ? a(i) : From(0);
    }
    for_each_schedule([&]<sched S>() {
      // The default schedule vectorizes these one-dimensional loops as vectorize<x> does; it is
      // checked on the image conversions only (each instantiation costs compile time in CI).
      constexpr bool automatic = S == sched::automatic;
      if constexpr (automatic && !image_conversion<From, To>) return;
      for (index_t i = 0; i < n; ++i) c(i) = s(i) = sentinel<To>();
      constexpr bool casts = !automatic;
      if constexpr (casts) run_as<S>(c(x) = loom::cast<To>(d(x)));
      if constexpr (!automatic || image_conversion<From, To>) run_as<S>(s(x) = loom::saturating_cast<To>(a(x)));
      mismatches bad;
      for (index_t i = 0; i < n; ++i) {
        if (casts && !same(c(i), static_cast<To>(d(i))))
          bad.add([&] {
            return lt::str("cast<", tname<To>(), ">(", tname<From>(), " ", show(d(i)), ") at ", i, " gave ", show(c(i)),
                           ", C++ gives ", show(static_cast<To>(d(i))));
          });
        if (!same(s(i), ref_saturate<To>(a(i))))
          bad.add([&] {
            return lt::str("saturating_cast<", tname<To>(), ">(", tname<From>(), " ", show(a(i)), ") at ", i, " gave ",
                           show(s(i)), ", expected ", show(ref_saturate<To>(a(i))));
          });
      }
      INFO(tname<From>() << " -> " << tname<To>() << ", n = " << n << ", " << sched_name(S) << ": " << bad.message());
      CHECK(bad.count == 0);
    });
  }
}

template <class From>
void check_casts_from() {
  auto g = lt::make_rng(lt::str("casts from ", tname<From>()));
  for_each_type(all_types{}, [&]<class To>() { check_casts<From, To>(g); });
}

// ---------------------------------------------------------------------------------------------
// Arithmetic, comparisons and select in one type.
// ---------------------------------------------------------------------------------------------
template <class T>
void check_arithmetic() {
  auto g = lt::make_rng(lt::str("arithmetic ", tname<T>()));
  std::vector<T> vals = edge_values<T>(g, 200);
  const auto at = [&](index_t i) { return vals[std::size_t(i % index_t(vals.size()))]; };
  auto sub = [](T p, T q) { return wrap<T>(u64u(p) - u64u(q)); };
  for (index_t n : extents()) {
    loom::Tensor<T, 1> a(n), b(n), o1(n), o2(n), o3(n);
    for (index_t i = 0; i < n; ++i) {
      a(i) = at(i * 7 + n);
      b(i) = at(i * 13 + 3 * n + 1);
      if (i % 5 == 0) b(i) = a(i);  // equal operands for the comparisons
    }
    for_each_schedule([&]<sched S>() {
      for (index_t i = 0; i < n; ++i) o1(i) = o2(i) = o3(i) = sentinel<T>();
      run_as<S>(o1(x) = a(x) * b(x) - a(x) * T(3) + (-b(x)) + T(7));
      run_as<S>(o2(x) = loom::max(a(x), b(x)) - loom::min(a(x), b(x)) + loom::abs(a(x)));
      run_as<S>(o3(x) = loom::select(a(x) < b(x), a(x), b(x)) + loom::select(a(x) >= b(x), T(1), b(x)) +
                        loom::select(a(x) != b(x), a(x), T(2)) + loom::select(a(x) <= b(x), T(4), a(x)) +
                        loom::select(a(x) > b(x), b(x), T(8)) + loom::select(a(x) == b(x), T(16), a(x)));
      mismatches bad;
      for (index_t i = 0; i < n; ++i) {
        const T p = a(i), q = b(i);
        const T e1 = wrap<T>(u64u(p) * u64u(q) - u64u(p) * 3 - u64u(q) + 7);
        const T mx = p < q ? q : p, mn = q < p ? q : p;
        const T ab = p < T(0) ? wrap<T>(std::uint64_t(0) - u64u(p)) : p;
        const T e2 = wrap<T>(u64u(sub(mx, mn)) + u64u(ab));
        const T e3 = wrap<T>(u64u(p < q ? p : q) + u64u(p >= q ? T(1) : q) + u64u(p != q ? p : T(2)) + u64u(p <= q ? T(4) : p) +
                             u64u(p > q ? q : T(8)) + u64u(p == q ? T(16) : p));
        if (o1(i) != e1)
          bad.add([&] {
            return lt::str("a * b - a * 3 + -b + 7 at ", i, " (a = ", show(p), ", b = ", show(q), "): ", show(o1(i)),
                           ", expected ", show(e1));
          });
        if (o2(i) != e2)
          bad.add([&] {
            return lt::str("max - min + abs at ", i, " (a = ", show(p), ", b = ", show(q), "): ", show(o2(i)), ", expected ",
                           show(e2));
          });
        if (o3(i) != e3)
          bad.add([&] {
            return lt::str("selects at ", i, " (a = ", show(p), ", b = ", show(q), "): ", show(o3(i)), ", expected ", show(e3));
          });
      }
      INFO(tname<T>() << ", n = " << n << ", " << sched_name(S) << ": " << bad.message());
      CHECK(bad.count == 0);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Division.
// ---------------------------------------------------------------------------------------------

/// out = a / d for every d in ds (a value captured when the definition is written), under each
/// schedule; a holds `inputs`.
template <class T>
void check_divide_by(const std::vector<T>& inputs, const std::vector<T>& ds, const char* what) {
  const auto n = index_t(inputs.size());
  loom::Tensor<T, 1> a(n), o(n);
  for (index_t i = 0; i < n; ++i) a(i) = inputs[std::size_t(i)];
  for_each_schedule([&]<sched S>() {
    mismatches bad;
    for (T d : ds) {
      for (index_t i = 0; i < n; ++i) o(i) = sentinel<T>();
      run_as<S>(o(x) = a(x) / d);
      for (index_t i = 0; i < n; ++i)
        if (o(i) != ref_divide(a(i), d))
          bad.add([&] {
            return lt::str(show(a(i)), " / ", show(d), " gave ", show(o(i)), ", expected ", show(ref_divide(a(i), d)));
          });
    }
    INFO(tname<T>() << " " << what << ", " << ds.size() << " divisors, " << n << " inputs, " << sched_name(S) << ": "
                    << bad.message());
    CHECK(bad.count == 0);
  });
}

template <class T>
std::vector<T> all_values() {
  std::vector<T> v;
  for (std::int64_t k = std::numeric_limits<T>::lowest(); k <= std::numeric_limits<T>::max(); ++k) v.push_back(static_cast<T>(k));
  return v;
}

/// The brief's constants, as T holds them (65535 is 255 as uint8, -1 as int8 and int16).
template <class T>
std::vector<T> constant_divisors() {
  std::vector<T> ds;
  for (std::int64_t d : {1, 2, 3, 7, 10, 255, 65535}) ds.push_back(static_cast<T>(d));
  return ds;
}

/// a / b lane by lane; b includes 0 and -1.
template <class T>
void check_divide_expr(const std::vector<T>& as, const std::vector<T>& bs) {
  const auto n = index_t(as.size());
  loom::Tensor<T, 1> a(n), b(n), o(n);
  for (index_t i = 0; i < n; ++i) {
    a(i) = as[std::size_t(i)];
    b(i) = bs[std::size_t(i)];
  }
  for_each_schedule([&]<sched S>() {
    for (index_t i = 0; i < n; ++i) o(i) = sentinel<T>();
    run_as<S>(o(x) = a(x) / b(x));
    mismatches bad;
    for (index_t i = 0; i < n; ++i)
      if (o(i) != ref_divide(a(i), b(i)))
        bad.add([&] {
          return lt::str(show(a(i)), " / ", show(b(i)), " gave ", show(o(i)), ", expected ", show(ref_divide(a(i), b(i))));
        });
    INFO(tname<T>() << " a / b, n = " << n << ", " << sched_name(S) << ": " << bad.message());
    CHECK(bad.count == 0);
  });
}

// ---------------------------------------------------------------------------------------------
// Reductions.
// ---------------------------------------------------------------------------------------------
template <class T>
void check_extrema(lt::rng_t& g) {
  const std::vector<T> vals = edge_values<T>(g, 200);
  for (index_t n : extents()) {
    loom::Tensor<T, 1> a(n);
    loom::Tensor<T, 0> mx, mn;
    for (index_t i = 0; i < n; ++i) a(i) = vals[std::size_t(lt::uniform(g, 0, index_t(vals.size()) - 1))];
    T emx = a(0), emn = a(0);
    for (index_t i = 1; i < n; ++i) {
      emx = a(i) > emx ? a(i) : emx;
      emn = a(i) < emn ? a(i) : emn;
    }
    for_each_schedule([&]<sched S>() {
      run_as<S>(mx() = loom::maximum(x, a(x)));
      run_as<S>(mn() = loom::minimum(x, a(x)));
      INFO(tname<T>() << " maximum/minimum, n = " << n << ", " << sched_name(S) << ": got " << show(*mx.data()) << " / "
                      << show(*mn.data()) << ", expected " << show(emx) << " / " << show(emn));
      CHECK(*mx.data() == emx);
      CHECK(*mn.data() == emn);
    });
  }
}

}  // namespace

TEST_CASE("integer: cast and saturating_cast from uint8 and int8 to every type", "[integer][cast]") {
  check_casts_from<std::uint8_t>();
  check_casts_from<std::int8_t>();
}
TEST_CASE("integer: cast and saturating_cast from uint16 and int16 to every type", "[integer][cast]") {
  check_casts_from<std::uint16_t>();
  check_casts_from<std::int16_t>();
}
TEST_CASE("integer: cast and saturating_cast from uint32 and int32 to every type", "[integer][cast]") {
  check_casts_from<std::uint32_t>();
  check_casts_from<std::int32_t>();
}
TEST_CASE("integer: cast and saturating_cast from int64, float and double to every type", "[integer][cast]") {
  check_casts_from<std::int64_t>();
  check_casts_from<float>();
  check_casts_from<double>();
}

TEST_CASE("integer: the documented results at the limits", "[integer][cast]") {
  // Spot values of loom's rules, as a reader would check them by hand.
  loom::Tensor<std::uint8_t, 1> a(3), o8(3);
  loom::Tensor<std::int8_t, 1> i8(3), oi8(3);
  loom::Tensor<std::uint16_t, 1> u16(3), o16(3);
  loom::Tensor<float, 1> f(3);
  a(0) = 250;
  a(1) = 255;
  a(2) = 0;
  i8(0) = 127;
  i8(1) = -128;
  i8(2) = -1;
  u16(0) = 65535;
  u16(1) = 256;
  u16(2) = 300;
  f(0) = 255.9f;
  f(1) = -3.5f;
  f(2) = std::numeric_limits<float>::quiet_NaN();
  for_each_schedule([&]<sched S>() {
    INFO(sched_name(S));
    run_as<S>(o8(x) = a(x) + std::uint8_t(10));  // uint8 arithmetic wraps: 260 -> 4
    CHECK((o8(0) == 4 && o8(1) == 9 && o8(2) == 10));
    run_as<S>(oi8(x) = i8(x) + std::int8_t(1));  // 127 + 1 -> -128 (C++ would compute 128 in int)
    CHECK((oi8(0) == -128 && oi8(1) == -127 && oi8(2) == 0));
    run_as<S>(oi8(x) = i8(x) / std::int8_t(-1));  // -128 / -1 wraps to -128
    CHECK((oi8(0) == -127 && oi8(1) == -128 && oi8(2) == 1));
    run_as<S>(o16(x) = u16(x) * u16(x));  // 65535^2 mod 2^16 = 1 (in C++, int overflow)
    CHECK((o16(0) == 1 && o16(1) == 0 && o16(2) == 24464));
    run_as<S>(o16(x) = u16(x) / std::uint16_t(0));  // n / 0 = 0
    CHECK((o16(0) == 0 && o16(1) == 0 && o16(2) == 0));
    run_as<S>(o8(x) = loom::cast<std::uint8_t>(u16(x)));  // truncation: low 8 bits
    CHECK((o8(0) == 255 && o8(1) == 0 && o8(2) == 44));
    run_as<S>(o8(x) = loom::saturating_cast<std::uint8_t>(u16(x)));
    CHECK((o8(0) == 255 && o8(1) == 255 && o8(2) == 255));
    run_as<S>(o8(x) = loom::saturating_cast<std::uint8_t>(i8(x)));  // negative -> 0
    CHECK((o8(0) == 127 && o8(1) == 0 && o8(2) == 0));
    run_as<S>(o8(x) = loom::saturating_cast<std::uint8_t>(f(x)));  // truncates; NaN -> 0
    CHECK((o8(0) == 255 && o8(1) == 0 && o8(2) == 0));
  });
  const std::string printed =
      loom::to_string(loom::saturating_cast<std::uint8_t>(loom::cast<std::int32_t>(a(x)) * 2) / std::uint8_t(3));
  INFO(printed);
  CHECK(printed.find("(saturating_cast<uint8>((cast<int32>(") == 0);
  CHECK(printed.find(") * 2)) / 3)") != std::string::npos);
}

TEST_CASE("integer: + - * min max abs, comparisons and select wrap in the value type", "[integer][ops]") {
  for_each_type(int_types{}, [&]<class T>() { check_arithmetic<T>(); });
}

TEST_CASE("integer: division by the constants 1 2 3 7 10 255 65535, every 8- and 16-bit input", "[integer][division]") {
  check_divide_by<std::uint8_t>(all_values<std::uint8_t>(), constant_divisors<std::uint8_t>(), "by constants");
  check_divide_by<std::int8_t>(all_values<std::int8_t>(), constant_divisors<std::int8_t>(), "by constants");
  check_divide_by<std::uint16_t>(all_values<std::uint16_t>(), constant_divisors<std::uint16_t>(), "by constants");
  check_divide_by<std::int16_t>(all_values<std::int16_t>(), constant_divisors<std::int16_t>(), "by constants");
  // Literals written into the definition, as in an image pipeline.
  loom::Tensor<std::uint16_t, 1> a(65536), o(65536);
  for (index_t i = 0; i < 65536; ++i) a(i) = static_cast<std::uint16_t>(i);
  for_each_schedule([&]<sched S>() {
    run_as<S>(o(x) = a(x) / 3u + a(x) / 7u);
    mismatches bad;
    for (index_t i = 0; i < 65536; ++i)
      if (o(i) != static_cast<std::uint16_t>(i / 3 + i / 7))
        bad.add([&] { return lt::str("a / 3u + a / 7u at ", i, ": ", o(i)); });
    INFO(sched_name(S) << ": " << bad.message());
    CHECK(bad.count == 0);
  });
}

TEST_CASE("integer: division by run-time values, every 8- and 16-bit input", "[integer][division]") {
  auto g = lt::make_rng("division by run-time values");
  check_divide_by<std::uint8_t>(all_values<std::uint8_t>(), all_values<std::uint8_t>(), "by every divisor");
  check_divide_by<std::int8_t>(all_values<std::int8_t>(), all_values<std::int8_t>(), "by every divisor");
  std::vector<std::uint16_t> du;
  std::vector<std::int16_t> ds;
  // Every divisor up to 300 (LOOM_TEST_SCALE shortens the run: the sanitizer stage's 0.3 runs
  // them up to 90, with the special values below, at -O0 its 16-bit sweeps took a minute).
  const int small_divisors = lt::cases_per_schedule(300);
  for (int d = 0; d <= small_divisors; ++d) {
    du.push_back(static_cast<std::uint16_t>(d));
    ds.push_back(static_cast<std::int16_t>(d));
    ds.push_back(static_cast<std::int16_t>(-d));
  }
  for (int d : {1000, 4095, 4096, 4097, 32767, 32768, 32769, 65533, 65534, 65535}) {
    du.push_back(static_cast<std::uint16_t>(d));
    ds.push_back(static_cast<std::int16_t>(d));
  }
  for (int k = 0; k < 40; ++k) {
    du.push_back(static_cast<std::uint16_t>(g()));
    ds.push_back(static_cast<std::int16_t>(g()));
  }
  check_divide_by<std::uint16_t>(all_values<std::uint16_t>(), du, "by run-time divisors");
  check_divide_by<std::int16_t>(all_values<std::int16_t>(), ds, "by run-time divisors");
}

TEST_CASE("integer: division of 32- and 64-bit values by run-time values", "[integer][division]") {
  auto g = lt::make_rng("division 32/64");
  auto run = [&]<class T>() {
    std::vector<T> in = edge_values<T>(g, 4000);
    std::vector<T> ds = edge_values<T>(g, 150);
    for (std::int64_t d : {1, 2, 3, 7, 10, 255, 65535, 65536, 641, 6700417, -1, -2, -3, -7, 0}) ds.push_back(static_cast<T>(d));
    check_divide_by<T>(in, ds, "by run-time divisors");
  };
  run.template operator()<std::uint32_t>();
  run.template operator()<std::int32_t>();
  run.template operator()<std::int64_t>();
}

TEST_CASE("integer: division by an expression, lane by lane, including 0 and -1", "[integer][division]") {
  auto g = lt::make_rng("division by expressions");
  {  // every pair of uint8 and of int8 values
    std::vector<std::uint8_t> a, b;
    std::vector<std::int8_t> c, d;
    for (int p = 0; p < 256; ++p)
      for (int q = 0; q < 256; ++q) {
        a.push_back(static_cast<std::uint8_t>(p));
        b.push_back(static_cast<std::uint8_t>(q));
        c.push_back(static_cast<std::int8_t>(p));
        d.push_back(static_cast<std::int8_t>(q));
      }
    check_divide_expr(a, b);
    check_divide_expr(c, d);
  }
  auto run = [&]<class T>() {
    std::vector<T> as = edge_values<T>(g, 3000), bs;
    for (std::size_t i = 0; i < as.size(); ++i) {
      const auto k = lt::uniform(g, 0, 9);
      bs.push_back(k == 0                          ? T(0)
                   : k == 1 && std::is_signed_v<T> ? T(-1)
                   : k < 5                         ? static_cast<T>(lt::uniform(g, -300, 300))
                                                   : static_cast<T>(g()));
    }
    check_divide_expr(as, bs);
  };
  run.template operator()<std::uint16_t>();
  run.template operator()<std::int16_t>();
  run.template operator()<std::uint32_t>();
  run.template operator()<std::int32_t>();
  run.template operator()<std::int64_t>();
}

TEST_CASE("integer: trees of mixed element sizes: select across sizes, float math on uint8", "[integer][mixed]") {
  auto g = lt::make_rng("mixed sizes");
  for (index_t n : extents()) {
    loom::Tensor<std::uint8_t, 1> a(n), b(n), o8(n), t8(n);
    loom::Tensor<std::uint32_t, 1> o32(n);
    loom::Tensor<std::int16_t, 1> c(n), o16(n);
    loom::Tensor<double, 1> od(n);
    for (index_t i = 0; i < n; ++i) {
      a(i) = static_cast<std::uint8_t>(g());
      b(i) = static_cast<std::uint8_t>(i % 3 == 0 ? a(i) : static_cast<std::uint8_t>(g()));
      c(i) = static_cast<std::int16_t>(g());
    }
    for_each_schedule([&]<sched S>() {
      mismatches bad;
      // A uint8 mask choosing uint32 lanes; an int32 mask choosing uint8 lanes; a float mask
      // choosing int16 lanes.
      run_as<S>(o32(x) = loom::select(a(x) > b(x), loom::cast<std::uint32_t>(a(x)) * 1000u, loom::cast<std::uint32_t>(b(x))));
      run_as<S>(o8(x) = loom::select(loom::cast<std::int32_t>(a(x)) * 3 > loom::cast<std::int32_t>(b(x)) + 200, a(x), b(x)));
      run_as<S>(o16(x) = loom::select(loom::cast<float>(c(x)) * 0.5f > 1000.f, c(x), loom::cast<std::int16_t>(a(x))));
      // uint8 through float math and back (lanes of float in four times the registers of uint8).
      run_as<S>(t8(x) =
                    loom::saturating_cast<std::uint8_t>(loom::cast<float>(a(x)) * 1.5f - loom::cast<float>(b(x)) * 0.25f + 0.5f));
      // Every size at once, into double.
      run_as<S>(od(x) = loom::cast<double>(loom::cast<std::int64_t>(a(x)) * 65536 + loom::cast<std::int64_t>(c(x))) +
                        loom::cast<double>(loom::cast<float>(b(x))));
      for (index_t i = 0; i < n; ++i) {
        const std::uint32_t e32 = a(i) > b(i) ? std::uint32_t(a(i)) * 1000u : b(i);
        const std::uint8_t e8 = int(a(i)) * 3 > int(b(i)) + 200 ? a(i) : b(i);
        const std::int16_t e16 = float(c(i)) * 0.5f > 1000.f ? c(i) : static_cast<std::int16_t>(a(i));
        const float f = float(a(i)) * 1.5f - float(b(i)) * 0.25f + 0.5f;
        const std::uint8_t et = f <= 0 ? 0 : f >= 255 ? 255 : static_cast<std::uint8_t>(f);
        const double ed = double(std::int64_t(a(i)) * 65536 + c(i)) + double(b(i));
        if (o32(i) != e32)
          bad.add([&] { return lt::str("select(uint8 mask, uint32) at ", i, ": ", o32(i), ", expected ", e32); });
        if (o8(i) != e8) bad.add([&] { return lt::str("select(int32 mask, uint8) at ", i, ": ", +o8(i), ", expected ", +e8); });
        if (o16(i) != e16) bad.add([&] { return lt::str("select(float mask, int16) at ", i, ": ", o16(i), ", expected ", e16); });
        if (t8(i) != et) bad.add([&] { return lt::str("uint8 through float at ", i, ": ", +t8(i), ", expected ", +et); });
        if (od(i) != ed) bad.add([&] { return lt::str("every size into double at ", i, ": ", od(i), ", expected ", ed); });
      }
      INFO("n = " << n << ", " << sched_name(S) << ": " << bad.message());
      CHECK(bad.count == 0);
    });
  }
}

TEST_CASE("integer: functions on lanes of several registers match the scalar schedule", "[integer][mixed]") {
  // exp, log, tanh, sigmoid and sqrt go register by register on lanes wider than one register;
  // the scalar schedule evaluates the same vector functions on one lane, so results are equal.
  auto g = lt::make_rng("functions on lanes");
  for (index_t n : {index_t(1), index_t(17), index_t(65), index_t(131)}) {
    loom::Tensor<std::uint8_t, 1> a(n), ref(n), o(n);
    for (index_t i = 0; i < n; ++i) a(i) = static_cast<std::uint8_t>(g());
    auto def = [&](auto& out) {
      const auto f = loom::cast<float>(a(x)) * (1.f / 64.f);
      return out(x) = loom::saturating_cast<std::uint8_t>(loom::exp(f) * 8.f + loom::log(f + 1.f) * 20.f + loom::tanh(f) * 30.f +
                                                          loom::sigmoid(f) * 40.f + loom::sqrt(f) * 10.f);
    };
    run_as<sched::scalar>(def(ref));
    bool plausible = true;
    for (index_t i = 0; i < n; ++i) {
      const double f = a(i) / 64.0;
      const double e = std::exp(f) * 8 + std::log(f + 1) * 20 + std::tanh(f) * 30 + 40 / (1 + std::exp(-f)) + std::sqrt(f) * 10;
      plausible = plausible && std::abs(ref(i) - std::min(255.0, std::trunc(e))) <= 1;
    }
    CHECK(plausible);
    auto equal = [&] {
      for (index_t i = 0; i < n; ++i)
        if (o(i) != ref(i)) return false;
      return true;
    };
    run_as<sched::vectorized>(def(o));
    CHECK(equal());
    run_as<sched::automatic>(def(o));
    CHECK(equal());
  }
}

TEST_CASE("integer: strided inputs, masked tails and reversed outputs with lanes of other sizes", "[integer][mixed]") {
  auto g = lt::make_rng("layouts");
  for (index_t n : extents()) {
    for (lt::layout la : {lt::layout::strided, lt::layout::reversed, lt::layout::offset}) {
      auto a = lt::make_buffer<std::uint8_t, 1>({n}, la, "a");
      auto b = lt::make_buffer<std::int32_t, 1>({n}, lt::layout::strided, "b");
      auto o = lt::make_buffer<std::uint16_t, 1>({n}, la, "o");
      for (index_t i = 0; i < n; ++i) {
        a.view(i) = static_cast<std::uint8_t>(g());
        b.view(i) = static_cast<std::int32_t>(g());
      }
      std::vector<double> ref(static_cast<std::size_t>(n));
      for (index_t i = 0; i < n; ++i) {
        const std::int64_t v = std::int64_t(a.view(i)) * 300 + b.view(i) % 1000;
        ref[std::size_t(i)] = double(v < 0 ? 0 : v > 65535 ? 65535 : v);
      }
      auto def = [&] {
        return o.view(x) = loom::saturating_cast<std::uint16_t>(loom::cast<std::int32_t>(a.view(x)) * 300 + b.view(x) -
                                                                b.view(x) / 1000 * 1000);
      };
      auto check = [&](const char* s) {
        INFO(s << ", n = " << n << "; " << a.describe() << "; " << o.describe());
        const auto r = lt::compare(o.view, ref, 0.0);
        INFO(r.message);
        CHECK(r.ok);
        CHECK(o.untouched().ok);
        lt::fill(o.view, sentinel<std::uint16_t>());
      };
      loom::run<loom::schedule<>>(def());
      check("schedule<>");
      loom::run<loom::schedule<loom::vectorize<x, loom::native, loom::tail::masked>>>(def());
      check("vectorize<x, native, masked>");
      loom::run(def());
      check("default");
    }
  }
}

TEST_CASE("integer: a 3x3 uint16 box blur in one definition", "[integer][stencil]") {
  auto g = lt::make_rng("box blur");
  for (index_t h : {index_t(1), index_t(2), index_t(7), index_t(33)}) {
    for (index_t w : extents()) {
      loom::Tensor<std::uint16_t, 2> in(h + 2, w + 2), out(h, w);
      for (index_t i = 0; i < h + 2; ++i)
        for (index_t j = 0; j < w + 2; ++j) in(i, j) = lt::coin(g, 0.3) ? 65535 : static_cast<std::uint16_t>(g());
      auto c = [&](auto yy, auto xx) { return loom::cast<std::uint32_t>(in(yy, xx)); };
      for_each_schedule([&]<sched S>() {
        for (index_t i = 0; i < h; ++i)
          for (index_t j = 0; j < w; ++j) out(i, j) = 0x5A5A;
        run_as<S>(out(y, x) = loom::cast<std::uint16_t>((c(y, x) + c(y, x + 1) + c(y, x + 2) + c(y + 1, x) + c(y + 1, x + 1) +
                                                         c(y + 1, x + 2) + c(y + 2, x) + c(y + 2, x + 1) + c(y + 2, x + 2)) /
                                                        9u));
        mismatches bad;
        for (index_t i = 0; i < h; ++i)
          for (index_t j = 0; j < w; ++j) {
            std::uint32_t s = 0;
            for (index_t di = 0; di < 3; ++di)
              for (index_t dj = 0; dj < 3; ++dj) s += in(i + di, j + dj);
            if (out(i, j) != s / 9) bad.add([&] { return lt::str("(", i, ", ", j, "): ", out(i, j), ", expected ", s / 9); });
          }
        INFO(h << " x " << w << ", " << sched_name(S) << ": " << bad.message());
        CHECK(bad.count == 0);
      });
    }
  }
}

TEST_CASE("integer: the saturating uint8 pipeline of the brief, 2-D", "[integer][stencil]") {
  auto g = lt::make_rng("saturating uint8");
  for (index_t w : extents()) {
    loom::Tensor<std::uint8_t, 2> a8(3, w), o8(3, w);
    for (index_t i = 0; i < 3; ++i)
      for (index_t j = 0; j < w; ++j) a8(i, j) = static_cast<std::uint8_t>(g());
    for_each_schedule([&]<sched S>() {
      run_as<S>(o8(y, x) = loom::saturating_cast<std::uint8_t>(loom::cast<std::int32_t>(a8(y, x)) * 2 - 10));
      mismatches bad;
      for (index_t i = 0; i < 3; ++i)
        for (index_t j = 0; j < w; ++j) {
          const int v = std::clamp(int(a8(i, j)) * 2 - 10, 0, 255);
          if (o8(i, j) != v) bad.add([&] { return lt::str("(", i, ", ", j, "): ", +o8(i, j), ", expected ", v); });
        }
      INFO("w = " << w << ", " << sched_name(S) << ": " << bad.message());
      CHECK(bad.count == 0);
    });
  }
}

TEST_CASE("integer: sums of uint8 widened to uint32, rows and whole tensors", "[integer][reduction]") {
  auto g = lt::make_rng("uint8 sums");
  std::vector<index_t> ns = extents();
  ns.push_back(100003);
  for (index_t n : ns) {
    loom::Tensor<std::uint8_t, 1> a(n);
    loom::Tensor<std::uint32_t, 0> s;
    loom::Tensor<std::uint8_t, 0> s8;
    std::uint32_t e = 0;
    for (index_t i = 0; i < n; ++i) {
      a(i) = lt::coin(g, 0.2) ? 255 : static_cast<std::uint8_t>(g());
      e += a(i);
    }
    for_each_schedule([&]<sched S>() {
      run_as<S>(s() = loom::sum(x, loom::cast<std::uint32_t>(a(x))));
      INFO("sum of " << n << " uint8, " << sched_name(S) << ": " << *s.data() << ", expected " << e);
      CHECK(*s.data() == e);
      run_as<S>(s8() = loom::sum(x, a(x)));  // without widening: uint8 arithmetic wraps
      CHECK(*s8.data() == static_cast<std::uint8_t>(e));
    });
  }
  for (index_t w : extents()) {
    const index_t h = 5;
    loom::Tensor<std::uint8_t, 2> a(h, w);
    loom::Tensor<std::uint32_t, 1> r(h);
    for (index_t i = 0; i < h; ++i)
      for (index_t j = 0; j < w; ++j) a(i, j) = static_cast<std::uint8_t>(g());
    for_each_schedule([&]<sched S>() {
      run_as<S>(r(y) = loom::sum(x, loom::cast<std::uint32_t>(a(y, x)) * 2u + 1u));
      mismatches bad;
      for (index_t i = 0; i < h; ++i) {
        std::uint32_t e = 0;
        for (index_t j = 0; j < w; ++j) e += std::uint32_t(a(i, j)) * 2 + 1;
        if (r(i) != e) bad.add([&] { return lt::str("row ", i, ": ", r(i), ", expected ", e); });
      }
      INFO("rows of " << w << " uint8, " << sched_name(S) << ": " << bad.message());
      CHECK(bad.count == 0);
    });
  }
}

TEST_CASE("integer: maximum and minimum over every integer type", "[integer][reduction]") {
  auto g = lt::make_rng("integer extrema");
  for_each_type(int_types{}, [&]<class T>() { check_extrema<T>(g); });
}
