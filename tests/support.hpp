// tests/support.hpp — shared helpers of loom's unit tests: the run's seed, seeded random
// numbers, random shapes, buffers in every memory layout, plain-loop iteration, tolerances and
// comparisons that name the first mismatching element.
#pragma once
#include "catch.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <loom/loom.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

#if defined(__unix__) || defined(__APPLE__)
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#define LOOM_TESTS_HAVE_FORK 1
#endif

/// The seed of this run (env LOOM_TEST_SEED, else time-based); set and printed by test_main.cpp.
std::uint64_t loom_test_seed();

namespace lt {

using loom::index_t;

/// Concatenates anything streamable (g++ 12 reports a false -Wrestrict in `"literal" + string`
/// chains at -O3; a stream sidesteps it).
template <class... A>
std::string str(const A&... a) {
  std::ostringstream os;
  (os << ... << a);
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Random numbers: every test draws from its own generator, seeded by the run's seed and a key,
// so a failure reproduces with LOOM_TEST_SEED=<seed> whatever subset of tests runs.
// ---------------------------------------------------------------------------------------------
inline std::uint64_t hash(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

using rng_t = std::mt19937_64;

inline rng_t make_rng(std::string_view key) {
  std::seed_seq seq{static_cast<std::uint32_t>(loom_test_seed()), static_cast<std::uint32_t>(loom_test_seed() >> 32),
                    static_cast<std::uint32_t>(hash(key)), static_cast<std::uint32_t>(hash(key) >> 32)};
  return rng_t(seq);
}

inline index_t uniform(rng_t& g, index_t lo, index_t hi) {  // [lo, hi]
  return std::uniform_int_distribution<index_t>(lo, hi)(g);
}
inline bool coin(rng_t& g, double p = 0.5) { return std::bernoulli_distribution(p)(g); }

// ---------------------------------------------------------------------------------------------
// Shapes: 1, primes, and every tile / vector width (4, 8, 16, 32, 64) and its neighbours.
// ---------------------------------------------------------------------------------------------
inline const std::vector<index_t>& interesting_sizes() {
  static const std::vector<index_t> v = {1,  2,  3,  4,  5,  7,  8,  9,  11, 13,  15,  16,  17,  19,  23,  31,  32,
                                         33, 37, 47, 48, 63, 64, 65, 79, 96, 97, 127, 128, 129, 191, 192, 193};
  return v;
}

/// A size in [lo, hi]: mostly from interesting_sizes(), sometimes uniform.
inline index_t pick_size(rng_t& g, index_t hi, index_t lo = 1) {
  std::vector<index_t> c;
  for (index_t s : interesting_sizes())
    if (s >= lo && s <= hi) c.push_back(s);
  if (c.empty() || coin(g, 0.25)) return uniform(g, lo, hi);
  return c[static_cast<std::size_t>(uniform(g, 0, index_t(c.size()) - 1))];
}

/// Sizes that are 1, primes and multiples ±1 of every width, all <= hi (deterministic).
inline std::vector<index_t> sizes_up_to(index_t hi) {
  std::vector<index_t> c;
  for (index_t s : interesting_sizes())
    if (s <= hi) c.push_back(s);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Element types: names, random values, tolerances.
// ---------------------------------------------------------------------------------------------
template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, int>) return "int32";
  else return "?";
}

template <class T>
T random_value(rng_t& g, double lo = -1.0, double hi = 1.0) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(std::uniform_int_distribution<long long>(static_cast<long long>(lo), static_cast<long long>(hi))(g));
  else
    return static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(g));
}

/// Relative tolerance of a result that sums `reduction_length` rounded terms, compared with a
/// reference accumulated in double: float 1e-5 and double 1e-12, scaled by sqrt(length);
/// integers are exact.
template <class T>
double tolerance(index_t reduction_length = 1) {
  const double scale = std::max(1.0, std::sqrt(static_cast<double>(reduction_length)));
  if constexpr (std::is_integral_v<T>) return 0.0;
  else if constexpr (std::is_same_v<T, float>) return 1e-5 * scale;
  else return 1e-12 * scale;
}

// ---------------------------------------------------------------------------------------------
// N-d iteration and element access by index arrays.
// ---------------------------------------------------------------------------------------------
template <std::size_t R>
using idx_t = std::array<index_t, R>;

template <std::size_t R>
index_t count(const idx_t<R>& ext) {
  index_t n = 1;
  for (index_t e : ext) n *= e;
  return n;
}

/// Calls f(idx) for every index of `ext` in row-major order (once for rank 0).
template <std::size_t R, class F>
void for_each_index(const idx_t<R>& ext, F&& f) {
  const index_t n = count(ext);
  idx_t<R> idx{};
  for (index_t q = 0; q < n; ++q) {
    f(static_cast<const idx_t<R>&>(idx));
    for (std::size_t d = R; d-- > 0;) {
      if (++idx[d] < ext[d]) break;
      idx[d] = 0;
    }
  }
}

template <class V>
auto extents_of(const V& v) {
  idx_t<V::rank> e{};
  for (std::size_t d = 0; d < V::rank; ++d) e[d] = v.extent(d);
  return e;
}

/// The element of a view (any strides, any rank including 0) at an index array.
template <class V>
auto& at(const V& v, const idx_t<V::rank>& idx) {
  return v.data()[v.offset(idx)];
}

template <std::size_t R>
index_t row_major_index(const idx_t<R>& ext, const idx_t<R>& idx) {
  index_t o = 0;
  for (std::size_t d = 0; d < R; ++d) o = o * ext[d] + idx[d];
  return o;
}

template <std::size_t R>
std::string to_string(const idx_t<R>& idx) {
  std::ostringstream os;
  os << "(";
  for (std::size_t d = 0; d < R; ++d) os << (d ? ", " : "") << idx[d];
  os << ")";
  return os.str();
}

template <class V>
void fill_random(const V& v, rng_t& g, double lo = -1.0, double hi = 1.0) {
  using T = typename V::value_type;
  for_each_index(extents_of(v), [&](const auto& idx) { at(v, idx) = random_value<T>(g, lo, hi); });
}
template <class V, class T>
void fill(const V& v, T value) {
  for_each_index(extents_of(v), [&](const auto& idx) { at(v, idx) = static_cast<typename V::value_type>(value); });
}

/// A distinctive value for memory that must not be read or written.
template <class T>
T sentinel() {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(0x5A5A5A5A);
  else return std::numeric_limits<T>::quiet_NaN();
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ---------------------------------------------------------------------------------------------
// Comparisons. Each returns ok + a message naming the first mismatch and the number of them.
// ---------------------------------------------------------------------------------------------
struct result {
  bool ok = true;
  index_t mismatches = 0;
  std::string message;
};

inline std::ostream& operator<<(std::ostream& os, const result& r) { return os << r.message; }

template <class T>
bool close(T got, double ref, double tol, double floor) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<double>(got) == ref;
  } else {
    if (std::isnan(ref)) return std::isnan(got);
    if (std::isinf(ref)) return static_cast<double>(got) == ref;
    if (!std::isfinite(got)) return false;
    return std::abs(static_cast<double>(got) - ref) <= tol * std::max(floor, std::abs(ref));
  }
}

/// got (a view) against ref(idx) -> double: |got - ref| <= tol * max(floor, |ref|) (exact for
/// integers; NaN matches NaN, infinities must match).
template <class V, class Ref>
  requires std::invocable<Ref&, const idx_t<V::rank>&>
result compare(const V& got, Ref&& ref, double tol, double floor = 1.0) {
  using T = typename V::value_type;
  result r;
  for_each_index(extents_of(got), [&](const auto& idx) {
    const T g = at(got, idx);
    const double e = static_cast<double>(ref(idx));
    if (!close<T>(g, e, tol, floor)) {
      if (r.mismatches++ == 0) {
        std::ostringstream os;
        os.precision(std::is_same_v<T, float> ? 9 : 17);
        os << "first mismatch of '" << got.name() << "' at " << to_string(idx) << ": got " << +g << ", expected " << e
           << " (|diff| = " << std::abs(static_cast<double>(g) - e) << ", tolerance " << tol << " x max(" << floor
           << ", |expected|))";
        r.message = os.str();
      }
    }
  });
  if (r.mismatches) {
    r.ok = false;
    r.message += str("; ", r.mismatches, " of ", got.size(), " elements differ");
  }
  return r;
}

/// got (a view) against a row-major vector of reference values.
template <class V>
result compare(const V& got, const std::vector<double>& ref, double tol, double floor = 1.0) {
  const auto ext = extents_of(got);
  if (static_cast<index_t>(ref.size()) != count(ext)) return {false, 1, "reference has the wrong size"};
  return compare(got, [&](const auto& idx) { return ref[static_cast<std::size_t>(row_major_index(ext, idx))]; }, tol, floor);
}

/// Bit-for-bit equality of two views of the same extents.
template <class V1, class V2>
result compare_bits(const V1& a, const V2& b) {
  result r;
  for_each_index(extents_of(a), [&](const auto& idx) {
    if (!same_bits(at(a, idx), at(b, idx))) {
      if (r.mismatches++ == 0) {
        std::ostringstream os;
        os.precision(17);
        os << "first bitwise difference at " << to_string(idx) << ": " << +at(a, idx) << " vs " << +at(b, idx);
        r.message = os.str();
      }
    }
  });
  if (r.mismatches) r.ok = false;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Buffers: a view in a chosen memory layout over its own storage. The storage outside the view
// holds a sentinel, so reads of it poison results and writes to it are detected (untouched()).
// ---------------------------------------------------------------------------------------------
enum class layout { row_major, col_major, transposed, strided, block, reversed, offset };

inline const char* layout_name(layout l) {
  switch (l) {
    case layout::row_major: return "row-major";
    case layout::col_major: return "column-major (loom::view with strides)";
    case layout::transposed: return "transposed()";
    case layout::strided: return "strided()";
    case layout::block: return "block()";
    case layout::reversed: return "reversed (negative stride)";
    case layout::offset: return "row-major at an odd offset";
  }
  return "?";
}

inline const std::vector<layout>& all_layouts() {
  static const std::vector<layout> v = {layout::row_major, layout::col_major, layout::transposed, layout::strided,
                                        layout::block,     layout::reversed,  layout::offset};
  return v;
}

/// A random layout: row-major half of the time (the common case), else any.
inline layout pick_layout(rng_t& g) {
  if (coin(g, 0.5)) return layout::row_major;
  return all_layouts()[static_cast<std::size_t>(uniform(g, 0, index_t(all_layouts().size()) - 1))];
}

/// A random layout whose last dimension is unit-stride (row-major, a block of one, or at an odd
/// offset): the buffers whose rows() views are layout_right.
inline layout pick_row_layout(rng_t& g) {
  static const layout rows[] = {layout::row_major, layout::block, layout::offset};
  return rows[static_cast<std::size_t>(uniform(g, 0, 2))];
}

template <class T, std::size_t R>
struct buffer {
  std::vector<T> store;
  loom::TensorView<T, R> view;
  layout kind = layout::row_major;
  std::vector<char> inside;  // store positions the view covers

  buffer() = default;
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  buffer(buffer&&) = default;
  buffer& operator=(buffer&&) = default;

  /// Every storage element outside the view still holds the sentinel.
  result untouched() const {
    result r;
    for (std::size_t q = 0; q < store.size(); ++q) {
      if (!inside[q] && !same_bits(store[q], sentinel<T>())) {
        if (r.mismatches++ == 0) r.message = str("'", view.name(), "' (", layout_name(kind), "): storage element ", q,
                                                 " outside the view was written");
      }
    }
    r.ok = r.mismatches == 0;
    return r;
  }
  /// The same elements as a layout_right view (unit-stride rows by type, so loom compiles its
  /// nest without a gather version); throws for buffers whose last stride is not 1.
  loom::TensorView<T, R, loom::dims<R>, loom::layout_right> rows() const {
    return {view.data(), loom::dims<R>(view.extents().values()), view.strides(), view.name_tag()};
  }
  std::string describe() const {
    std::ostringstream os;
    os << view.name() << to_string(extents_of(view)) << " " << layout_name(kind) << " strides "
       << to_string(view.strides());
    return os.str();
  }
};

/// A buffer of extents `ext` in layout `l`, named `name`; view elements are zero, the rest of the
/// storage is the sentinel.
template <class T, std::size_t R>
buffer<T, R> make_buffer(const idx_t<R>& ext, layout l, std::string_view name) {
  buffer<T, R> b;
  if constexpr (R < 2) {
    if (l == layout::col_major || l == layout::transposed) l = layout::row_major;
    if constexpr (R == 0) l = layout::row_major;
  } else if constexpr (R > 2) {
    if (l == layout::transposed) l = layout::col_major;
  }
  b.kind = l;
  const index_t n = count(ext);
  auto alloc = [&](index_t size) {
    b.store.assign(static_cast<std::size_t>(std::max<index_t>(size, 1)), sentinel<T>());
    return b.store.data();
  };
  switch (l) {
    case layout::row_major:
      b.view = loom::view(alloc(n), ext, name);
      break;
    case layout::offset: {
      T* p = alloc(n + 3);
      b.view = loom::view(p + 1 + (n % 2), ext, name);
      break;
    }
    case layout::col_major: {
      idx_t<R> s{};
      index_t acc = 1;
      for (std::size_t d = 0; d < R; ++d) {
        s[d] = acc;
        acc *= std::max<index_t>(ext[d], 1);
      }
      b.view = loom::view(alloc(n), ext, s, name);
      break;
    }
    case layout::transposed: {
      if constexpr (R == 2) {
        b.view = loom::view(alloc(n), loom::shape(ext[1], ext[0]), name).transposed();
      }
      break;
    }
    case layout::strided: {
      idx_t<R> big{}, step{};
      for (std::size_t d = 0; d < R; ++d) {
        step[d] = d + 1 == R ? 2 : 3;  // innermost dimension every 2nd element, others every 3rd
        big[d] = ext[d] * step[d] - (ext[d] > 0 ? step[d] - 1 : 0);
      }
      b.view = loom::view(alloc(count(big)), big, name).strided(step);
      break;
    }
    case layout::block: {
      idx_t<R> big{}, first{};
      for (std::size_t d = 0; d < R; ++d) {
        first[d] = index_t(d) + 1;
        big[d] = ext[d] + 2 * first[d] + 1;
      }
      b.view = loom::view(alloc(count(big)), big, name).block(first, ext);
      break;
    }
    case layout::reversed: {
      // Row-major with the last dimension running backwards.
      auto s = loom::row_major_strides<R>(ext);
      T* p = alloc(n);
      if constexpr (R > 0) {
        if (n > 0) {
          p += ext[R - 1] - 1;
          s[R - 1] = -1;
        }
      }
      b.view = loom::view(p, ext, s, name);
      break;
    }
  }
  b.inside.assign(b.store.size(), 0);
  const T* base = b.store.data();
  for_each_index(ext, [&](const auto& idx) {
    T* p = &at(b.view, idx);
    b.inside[static_cast<std::size_t>(p - base)] = 1;
    *p = T(0);
  });
  return b;
}

template <class T, std::size_t R>
buffer<T, R> random_buffer(const idx_t<R>& ext, layout l, std::string_view name, rng_t& g, double lo = -1.0,
                           double hi = 1.0) {
  auto b = make_buffer<T, R>(ext, l, name);
  fill_random(b.view, g, lo, hi);
  return b;
}

// ---------------------------------------------------------------------------------------------
// Threads.
// ---------------------------------------------------------------------------------------------
inline int max_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}
inline void set_threads(int n) {
#if defined(_OPENMP)
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}
/// Sets the OpenMP thread count for a scope.
struct thread_scope {
  int saved;
  explicit thread_scope(int n) : saved(max_threads()) { set_threads(n); }
  ~thread_scope() { set_threads(saved); }
  thread_scope(const thread_scope&) = delete;
  thread_scope& operator=(const thread_scope&) = delete;
};

// ---------------------------------------------------------------------------------------------
// Vector widths this build has (schedules name them explicitly).
// ---------------------------------------------------------------------------------------------
template <class T>
inline constexpr index_t native_width = index_t(loom::simd::native_width<T>);
/// A width of 16 bytes (every x86-64 target), and the widest other one up to 32 bytes.
template <class T>
inline constexpr index_t w16b = index_t(16 / sizeof(T));
template <class T>
inline constexpr index_t w32b = loom::simd::width_available<T, 32 / sizeof(T)> ? index_t(32 / sizeof(T)) : w16b<T>;

// ---------------------------------------------------------------------------------------------
// Running code that may crash the process (a trap in a library bug must fail one test, not end
// the whole run): f() runs in a forked child and returns its exit code.
// ---------------------------------------------------------------------------------------------
struct child_result {
  bool exited = false;  // normal exit (code valid)
  int code = -1;
  int signal = 0;       // the signal that killed it, if any
  bool ok() const { return exited && code == 0; }
  std::string describe() const {
    if (exited) return str("child exited with code ", code);
    return str("child was killed by signal ", signal,
               signal == SIGFPE ? " (SIGFPE)" : signal == SIGSEGV ? " (SIGSEGV)" : "");
  }
};

template <class F>
child_result run_in_child(F&& f) {
  child_result r;
#if defined(LOOM_TESTS_HAVE_FORK)
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    // The test framework's handlers must not report a crash of the child as its own.
    for (int sig : {SIGFPE, SIGSEGV, SIGILL, SIGBUS, SIGABRT}) std::signal(sig, SIG_DFL);
    int code = 3;
    try {
      code = f();
    } catch (...) {
      code = 4;
    }
    std::fflush(nullptr);
    _exit(code);
  }
  if (pid < 0) return r;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return r;
  if (WIFEXITED(status)) {
    r.exited = true;
    r.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
#else
  r.exited = true;
  r.code = f();
#endif
  return r;
}

/// The demangled name of a type (for messages).
std::string demangle(const char* mangled);
template <class T>
std::string type_string() {
  return demangle(typeid(T).name());
}

// ---------------------------------------------------------------------------------------------
// The schedule matrix: one harness per definition, a list of schedules, many random cases each.
//
// A harness H provides
//   static constexpr const char* name;
//   struct data { ...; buffer out; std::vector<double> ref; double tol; std::string describe() const; };
//   static data make(rng_t&);        random shapes and layouts, inputs, the reference result
//   static auto def(data&);          the definition (a fresh one on the data's views)
// data derives from case_base, whose reset() sets the output's state before a run: a sentinel,
// or for a `+=` definition the initial values recorded by keep_initial().
// ---------------------------------------------------------------------------------------------
template <class T, std::size_t R>
struct case_base {
  buffer<T, R> out;
  std::vector<double> ref;
  double tol = 0;
  std::vector<T> init;
  std::string info;
  std::string describe() const { return str(info, "; ", out.describe()); }
  void keep_initial() {
    init.clear();
    for_each_index(extents_of(out.view), [&](const auto& idx) { init.push_back(at(out.view, idx)); });
  }
  /// The reference starts from the output's values (for `+=`).
  void ref_from_output() {
    ref.clear();
    for_each_index(extents_of(out.view), [&](const auto& idx) { ref.push_back(static_cast<double>(at(out.view, idx))); });
  }
  void reset() {
    if (init.empty()) {
      fill(out.view, sentinel<T>());
    } else {
      std::size_t q = 0;
      for_each_index(extents_of(out.view), [&](const auto& idx) { at(out.view, idx) = init[q++]; });
    }
  }
};
template <class... S>
struct schedule_list {
  static constexpr std::size_t size = sizeof...(S);
};

/// The words print_loop_nest must show for each directive: the loop names it creates or names,
/// and the kind of loop it makes.
template <class D>
struct directive_tokens {
  static void add(std::vector<std::string>&) {}
};
template <auto V, index_t F, class Tail>
struct directive_tokens<loom::split<V, F, Tail>> {
  static void add(std::vector<std::string>& v) {
    v.push_back(loom::loop_t<V>::name() + ".o");
    v.push_back(loom::loop_t<V>::name() + ".i");
  }
};
template <auto V1, auto V2, index_t F1, index_t F2, class Tail>
struct directive_tokens<loom::tile<V1, V2, F1, F2, Tail>> {
  static void add(std::vector<std::string>& v) {
    for (const std::string& n : {loom::loop_t<V1>::name(), loom::loop_t<V2>::name()}) {
      v.push_back(n + ".o");
      v.push_back(n + ".i");
    }
  }
};
template <auto... Vs>
struct directive_tokens<loom::reorder<Vs...>> {
  static void add(std::vector<std::string>& v) { (v.push_back(loom::loop_t<Vs>::name()), ...); }
};
template <auto V1, auto V2>
struct directive_tokens<loom::fuse<V1, V2>> {
  static void add(std::vector<std::string>& v) { v.push_back(str(loom::loop_t<V1>::name(), "*", loom::loop_t<V2>::name())); }
};
template <auto V, index_t F, class Tail>
struct directive_tokens<loom::unroll<V, F, Tail>> {
  static void add(std::vector<std::string>& v) {
    v.push_back("unrolled for");
    v.push_back(loom::loop_t<V>::name() + (F == 0 ? "" : ".i"));
  }
};
template <auto V, index_t W, class Tail>
struct directive_tokens<loom::vectorize<V, W, Tail>> {
  static void add(std::vector<std::string>& v) {
    v.push_back("vectorized for");
    v.push_back(loom::loop_t<V>::name());
    v.push_back(" lanes");
  }
};
template <auto V, index_t G>
struct directive_tokens<loom::parallel<V, G>> {
  static void add(std::vector<std::string>& v) {
    v.push_back("parallel for");
    v.push_back(loom::loop_t<V>::name());
  }
};

template <auto V, index_t D, index_t B>
struct directive_tokens<loom::prefetch<V, D, B>> {
  static void add(std::vector<std::string>& v) { v.push_back(str("prefetch: every input read along ", loom::loop_t<V>::name(), " ")); }
};

template <class X>
inline constexpr bool is_parallel_directive = false;
template <auto V, index_t G>
inline constexpr bool is_parallel_directive<loom::parallel<V, G>> = true;

template <class S>
struct schedule_traits {  // loom::auto_schedule: the default schedule may run in parallel
  static constexpr bool has_parallel = true;
  static std::vector<std::string> tokens() { return {}; }
};
template <class... D>
struct schedule_traits<loom::schedule<D...>> {
  static constexpr bool has_parallel = (is_parallel_directive<D> || ...);
  static std::vector<std::string> tokens() {
    std::vector<std::string> v;
    (directive_tokens<D>::add(v), ...);
    return v;
  }
};

template <class C>
struct condition_token {  // touches_at_least<Bytes>
  static std::string text() { return "if the run "; }
};
template <auto V, index_t N>
struct condition_token<loom::extent_at_least<V, N>> {
  static std::string text() { return str("if ", loom::loop_t<V>::name(), ".extent >= ", N, ":\n"); }
};

template <class C, class T, class E>
struct schedule_traits<loom::specialize<C, T, E>> {  // both nests are printed, under if / else
  static constexpr bool has_parallel = schedule_traits<T>::has_parallel || schedule_traits<E>::has_parallel;
  static std::vector<std::string> tokens() {
    std::vector<std::string> v{condition_token<C>::text(), "else:"};
    for (auto& t : schedule_traits<T>::tokens()) v.push_back(t);
    for (auto& t : schedule_traits<E>::tokens()) v.push_back(t);
    return v;
  }
};

/// A size for a case: usually small (mostly from interesting_sizes(), up to `hi`), and one time in
/// `one_in` large, in [big_lo, big_hi], so that default schedules reach their parallel threshold.
inline index_t case_size(rng_t& g, index_t hi, index_t big_lo, index_t big_hi, int one_in = 10) {
  if (uniform(g, 1, one_in) == 1) return uniform(g, big_lo, big_hi);
  return pick_size(g, hi);
}

/// Number of random cases per schedule (LOOM_TEST_SCALE multiplies it).
inline int cases_per_schedule(int base) {
  static const double scale = [] {
    const char* e = std::getenv("LOOM_TEST_SCALE");
    const double v = e ? std::atof(e) : 1.0;
    return v > 0 ? v : 1.0;
  }();
  return std::max(1, static_cast<int>(base * scale + 0.5));
}

/// Runs definition H under schedule S on `cases` random cases against H's reference. Parallel
/// schedules are also run with 1, 2 and 3 threads, which must give the same bits.
template <class H, class S>
void check_schedule(rng_t& g, int cases) {
  const std::string sname = std::is_same_v<S, loom::auto_schedule> ? std::string("default schedule") : type_string<S>();
  INFO(H::name << "\nunder " << sname);
  {
    auto d = H::make(g);
    const std::string nest = loom::print_loop_nest<S>(H::def(d));
    INFO("print_loop_nest:\n" << nest);
    CHECK(!nest.empty());
    for (const std::string& tok : schedule_traits<S>::tokens()) {
      INFO("expected in the printed nest: '" << tok << "'");
      CHECK(nest.find(tok) != std::string::npos);
    }
  }
  for (int c = 0; c < cases; ++c) {
    auto d = H::make(g);
    INFO("case " << c << ": " << d.describe());
    d.reset();
    loom::run<S>(H::def(d));
    const result r = compare(d.out.view, d.ref, d.tol);
    INFO(r.message);
    CHECK(r.ok);
    const result u = d.out.untouched();
    INFO(u.message);
    CHECK(u.ok);
    if constexpr (schedule_traits<S>::has_parallel) {
      if (c % 2 == 0 && r.ok) {
        std::vector<typename decltype(d.out.store)::value_type> first;
        for (int threads : {1, 2, 3}) {
          thread_scope ts(threads);
          d.reset();
          loom::run<S>(H::def(d));
          if (threads == 1) {
            first = d.out.store;
          } else {
            bool same = first.size() == d.out.store.size();
            for (std::size_t q = 0; same && q < first.size(); ++q) same = same_bits(first[q], d.out.store[q]);
            INFO("result with " << threads << " threads differs from the result with 1 thread");
            CHECK(same);
          }
        }
      }
    }
  }
}

template <class H, class... S>
void check_schedules(schedule_list<S...>, int cases) {
  auto g = make_rng(H::name);
  (check_schedule<H, S>(g, cases), ...);
}

}  // namespace lt
