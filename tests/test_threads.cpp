// tests/test_threads.cpp — loom inside an app's threads (docs/threads.md): set_num_threads,
// get_num_threads and thread_limit reach every engine (the loop nest's parallel loops, its
// chunked reductions, the GEMM engine); calls from an app's `omp parallel for`, from two
// std::threads and with nested parallelism on give the serial run's bits, finish, and use no more
// threads than allowed; the per-thread scratch buffers are counted and released.
//
// How threads are counted: a GEMM epilogue runs on every thread of the engine's team and records
// the team's size and the threads' ids (exact, any OpenMP runtime). For the loop nest, which runs
// no user code, the threads of the process are counted in /proc/self/task while a fresh
// std::thread makes the calls: libgomp gives each such thread its own pool, so the count rises by
// exactly the team size less one (checked first on a plain `omp parallel`; under another runtime,
// which may reuse threads of a shared pool, only the upper bound is checked).
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#if defined(__linux__)
#include <dirent.h>
#endif

using loom::index_t;
using namespace loom::vars;

#if defined(_OPENMP)

namespace {

// ---------------------------------------------------------------------------------------------
// Settings restored whatever a test does.
// ---------------------------------------------------------------------------------------------
struct num_threads_scope {
  explicit num_threads_scope(int n) {
    loom::set_num_threads(n);
    loom::detail::forget_recent_peak();  // team sizes counted below start from a quiet process
  }
  ~num_threads_scope() { loom::set_num_threads(0); }
  num_threads_scope(const num_threads_scope&) = delete;
  num_threads_scope& operator=(const num_threads_scope&) = delete;
};
struct nesting_scope {
  int saved = omp_get_max_active_levels();
  explicit nesting_scope(int levels) { omp_set_max_active_levels(levels); }
  ~nesting_scope() { omp_set_max_active_levels(saved); }
  nesting_scope(const nesting_scope&) = delete;
  nesting_scope& operator=(const nesting_scope&) = delete;
};

// ---------------------------------------------------------------------------------------------
// The GEMM engine's team, seen from its epilogue.
// ---------------------------------------------------------------------------------------------
struct team_record {
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int> largest_team{0};
  void clear() {
    std::lock_guard<std::mutex> lock(m);
    ids.clear();
    largest_team = 0;
  }
  std::size_t threads() {
    std::lock_guard<std::mutex> lock(m);
    return ids.size();
  }
};

/// Leaves the values as they are; records the size of the team loom opened (1 when it runs at
/// the caller's level: in an app's region, omp_get_num_threads() is the app's team) and the id.
struct observer {
  team_record* rec;
  int caller_level = omp_get_level();
  template <class B>
  B apply(const B& v, index_t, index_t, index_t) const {
    const int team = omp_get_level() > caller_level ? omp_get_num_threads() : 1;
    int seen = rec->largest_team.load();
    while (team > seen && !rec->largest_team.compare_exchange_weak(seen, team)) {
    }
    std::lock_guard<std::mutex> lock(rec->m);
    rec->ids.insert(std::this_thread::get_id());
    return v;
  }
};

// ---------------------------------------------------------------------------------------------
// Problems: a GEMM large enough for the packed engine's threads (2 * 200^3 flops, 105 micro-tiles
// with AVX-512), row sums parallel over rows and as a chunked parallel reduction.
// ---------------------------------------------------------------------------------------------
constexpr index_t gm = 200, gn = 200, gk = 200;
constexpr index_t rows = 97, cols = 1031;

using rows_parallel = loom::schedule<loom::split<j, 64>, loom::vectorize<loom::inner<j>>, loom::parallel<i>>;
using chunked = loom::schedule<loom::split<j, 64>, loom::reorder<loom::outer<j>, i>, loom::parallel<loom::outer<j>>,
                               loom::vectorize<loom::inner<j>>>;

template <class T>
void fill(loom::Tensor<T, 2>& t, const char* key) {
  auto g = lt::make_rng(key);
  std::uniform_real_distribution<double> d(-1, 1);
  for (index_t q = 0; q < t.size(); ++q) t.data()[q] = T(d(g));
}

struct problems {
  loom::Tensor<float, 2> A{gm, gk}, B{gk, gn}, X{rows, cols};
  problems() {
    fill(A, "threads A");
    fill(B, "threads B");
    fill(X, "threads X");
  }
};
const problems& data() {
  static const problems p;
  return p;
}

using gemm_out = std::vector<float>;
struct rowsum_out {
  std::vector<float> by_rows, by_chunks;
  bool operator==(const rowsum_out&) const = default;
};

gemm_out run_gemm(team_record* rec = nullptr) {
  loom::Tensor<float, 2> C(gm, gn);
  if (rec) loom::gemm(C, data().A, data().B, 1.f, 0.f, observer{rec, omp_get_level()});
  else loom::gemm(C, data().A, data().B);
  return gemm_out(C.data(), C.data() + C.size());
}
template <class Schedule>
std::vector<float> run_rowsum() {
  loom::Tensor<float, 1> s(rows);
  loom::run<Schedule>(s(i) = loom::sum(j, data().X(i, j)));
  return std::vector<float>(s.data(), s.data() + rows);
}
rowsum_out run_rowsums() { return {run_rowsum<rows_parallel>(), run_rowsum<chunked>()}; }

/// The serial runs every other result must equal bit for bit.
const gemm_out& serial_gemm() {
  static const gemm_out r = [] {
    loom::thread_limit one(1);
    return run_gemm();
  }();
  return r;
}
const rowsum_out& serial_rowsums() {
  static const rowsum_out r = [] {
    loom::thread_limit one(1);
    return run_rowsums();
  }();
  return r;
}

/// The GEMM against a double reference (so that the serial result is itself checked).
void check_gemm_reference() {
  const auto& d = data();
  const auto& c = serial_gemm();
  for (index_t r = 0; r < gm; ++r)
    for (index_t q = 0; q < gn; ++q) {
      double acc = 0, mag = 0;
      for (index_t p = 0; p < gk; ++p) {
        acc += double(d.A(r, p)) * double(d.B(p, q));
        mag += std::abs(double(d.A(r, p)) * double(d.B(p, q)));
      }
      INFO("C(" << r << ", " << q << ")");
      REQUIRE(std::abs(double(c[std::size_t(r * gn + q)]) - acc) <= 1e-5 * mag + 1e-30);
    }
  const auto& s = serial_rowsums();
  for (index_t r = 0; r < rows; ++r) {
    double acc = 0, mag = 0;
    for (index_t q = 0; q < cols; ++q) {
      acc += double(d.X(r, q));
      mag += std::abs(double(d.X(r, q)));
    }
    INFO("s(" << r << ")");
    REQUIRE(std::abs(double(s.by_rows[std::size_t(r)]) - acc) <= 1e-5 * mag);
    REQUIRE(std::abs(double(s.by_chunks[std::size_t(r)]) - acc) <= 1e-5 * mag);
  }
}

// ---------------------------------------------------------------------------------------------
// Threads of the process (/proc/self/task), counted while a fresh std::thread runs f.
// ---------------------------------------------------------------------------------------------
#if defined(__linux__)
int os_threads() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

/// Until the count has not changed for 20 ms (the pool threads of an earlier fresh thread exit
/// after it is joined).
void wait_for_steady_count() {
  int last = os_threads(), steady = 0;
  for (int t = 0; t < 2000 && steady < 20; ++t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const int now = os_threads();
    steady = now == last ? steady + 1 : 0;
    last = now;
  }
}

/// The most threads that existed at once beyond those before f, while a fresh std::thread ran f
/// (the fresh thread not counted). A watcher polls the count meanwhile, so short-lived nested
/// teams are seen too (when they live long enough to be polled: the count can miss some, never
/// add any).
template <class F>
int extra_threads(F&& f) {
  wait_for_steady_count();
  std::atomic<bool> done{false};
  std::atomic<int> peak{0};
  std::thread watcher([&] {
    while (!done.load()) {
      const int n = os_threads();
      int p = peak.load();
      while (n > p && !peak.compare_exchange_weak(p, n)) {
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
  int before = 0, after = 0;
  std::thread worker([&] {
    before = os_threads();  // this thread and the watcher included
    f();
    after = os_threads();  // the pool threads of this thread's teams are still alive
  });
  worker.join();
  done = true;
  watcher.join();
  return std::max(after, peak.load()) - before;
}

/// Whether a fresh thread's teams show in the count exactly: libgomp gives each thread a pool of
/// its own (LLVM's libomp takes teams from one shared pool, so only upper bounds hold there).
bool counts_teams() {
#if defined(_LIBGOMP_OMP_LOCK_DEFINED)
  static const bool yes = extra_threads([] {
    std::atomic<int> members{0};
#pragma omp parallel num_threads(2)
    members += 1;
    REQUIRE(members == 2);
  }) == 1;
  return yes;
#else
  return false;
#endif
}
#endif

}  // namespace

// =============================================================================================

TEST_CASE("threads: set_num_threads, get_num_threads, thread_limit", "[threads]") {
  const int omp_default = omp_get_max_threads();
  REQUIRE(loom::get_num_threads() == omp_default);
  {
    num_threads_scope three(3);
    CHECK(loom::get_num_threads() == 3);  // above OpenMP's default too: the value is loom's team size
    {
      loom::thread_limit two(2);
      CHECK(loom::get_num_threads() == 2);
      {
        loom::thread_limit five(5);  // a limit only lowers
        CHECK(loom::get_num_threads() == 2);
        loom::thread_limit one(1);
        CHECK(loom::get_num_threads() == 1);
      }
      CHECK(loom::get_num_threads() == 2);
      loom::thread_limit none(0);  // no cap of its own
      CHECK(loom::get_num_threads() == 2);
      // Thread-local: another thread sees the process-wide value only.
      int other = 0;
      std::thread([&] { other = loom::get_num_threads(); }).join();
      CHECK(other == 3);
    }
    CHECK(loom::get_num_threads() == 3);
    // Process-wide: a thread started now sees it, whatever its own OpenMP setting.
    int other = 0;
    std::thread([&] {
      omp_set_num_threads(1);
      other = loom::get_num_threads();
    }).join();
    CHECK(other == 3);
  }
  CHECK(loom::get_num_threads() == omp_default);  // 0 restores OpenMP's default
  {
    lt::thread_scope omp_one(1);  // what OMP_NUM_THREADS=1 sets
    CHECK(loom::get_num_threads() == 1);
    loom::thread_limit two(2);
    CHECK(loom::get_num_threads() == 1);
  }
  // Inside an active parallel region: 1 while nesting is off, the cap when it is on.
  {
    num_threads_scope two(2);
    std::atomic<int> wrong{0}, members{0};
    {
      nesting_scope off(1);  // (a list in OMP_NUM_THREADS turns nesting on)
#pragma omp parallel num_threads(2)
      {
        members += 1;
        if (loom::get_num_threads() != 1) wrong += 1;
      }
    }
    CHECK(members == 2);
    CHECK(wrong == 0);
    nesting_scope nested(2);
    wrong = 0;
#pragma omp parallel num_threads(2)
    {
      if (loom::get_num_threads() != 2) wrong += 1;
      loom::thread_limit one(1);
      if (loom::get_num_threads() != 1) wrong += 1;
    }
    CHECK(wrong == 0);
  }
  // Bad counts: a loom::error naming the function and the value; the settings are unchanged.
  CHECK_THROWS_AS(loom::set_num_threads(-1), loom::error);
  CHECK_THROWS_WITH(loom::set_num_threads(-2), Catch::Contains("loom::set_num_threads") && Catch::Contains("-2"));
  CHECK_THROWS_WITH(loom::thread_limit(-1), Catch::Contains("loom::thread_limit"));
  CHECK(loom::get_num_threads() == omp_default);
}

TEST_CASE("threads: the GEMM engine's team follows the cap", "[threads][gemm]") {
  check_gemm_reference();
  team_record rec;
  for (int cap : {1, 2, 3}) {
    num_threads_scope s(cap);
    rec.clear();
    INFO("set_num_threads(" << cap << ")");
    CHECK(run_gemm(&rec) == serial_gemm());
    CHECK(rec.largest_team == cap);
    CHECK(rec.threads() == std::size_t(cap));
    for (int limit : {1, 2}) {
      loom::thread_limit g(limit);
      rec.clear();
      INFO("thread_limit(" << limit << ")");
      CHECK(run_gemm(&rec) == serial_gemm());
      CHECK(rec.largest_team == std::min(cap, limit));
      CHECK(rec.threads() == std::size_t(std::min(cap, limit)));
    }
  }
  // No setting: OpenMP's value (OMP_NUM_THREADS), read on every call.
  for (int omp : {1, 2}) {
    lt::thread_scope s(omp);
    rec.clear();
    CHECK(run_gemm(&rec) == serial_gemm());
    CHECK(rec.largest_team == omp);
  }
}

TEST_CASE("threads: the loop nest's teams follow the cap", "[threads]") {
  check_gemm_reference();
  for (int cap : {1, 2, 3}) {
    num_threads_scope s(cap);
    INFO("set_num_threads(" << cap << ")");
    CHECK(run_rowsums() == serial_rowsums());
    loom::thread_limit one(1);
    CHECK(run_rowsums() == serial_rowsums());
  }
#if defined(__linux__)
  const bool exact = counts_teams();
  INFO("the runtime's teams show in /proc/self/task: " << exact);
  for (int cap : {1, 2, 3}) {
    INFO("set_num_threads(" << cap << ")");
    num_threads_scope s(cap);
    // A parallel loop over rows, then a chunked reduction, each in a thread of its own.
    std::vector<float> got;
    const int extra = extra_threads([&] { got = run_rowsum<rows_parallel>(); });
    CHECK(got == serial_rowsums().by_rows);
    CHECK(extra <= cap - 1);
    if (exact) CHECK(extra == cap - 1);
    const int chunked_extra = extra_threads([&] { got = run_rowsum<chunked>(); });
    CHECK(got == serial_rowsums().by_chunks);
    CHECK(chunked_extra <= cap - 1);
    if (exact) CHECK(chunked_extra == cap - 1);
    // The same under a thread_limit of the calling thread.
    rowsum_out both;
    const int limited = extra_threads([&] {
      loom::thread_limit one(1);
      both = run_rowsums();
    });
    CHECK(both == serial_rowsums());
    CHECK(limited == 0);
    // And the GEMM engine, counted the same way.
    gemm_out c;
    const int gemm_extra = extra_threads([&] { c = run_gemm(); });
    CHECK(c == serial_gemm());
    CHECK(gemm_extra <= cap - 1);
    if (exact) CHECK(gemm_extra == cap - 1);
  }
#endif
}

TEST_CASE("threads: a batch inside an app's omp parallel for", "[threads][gemm]") {
  check_gemm_reference();
  constexpr int batch = 6;
  for (int nesting : {1, 2}) {
    nesting_scope levels(nesting);
    for (int cap : {0, 1, 2}) {
      INFO("max active levels " << nesting << ", set_num_threads(" << cap << ")");
      num_threads_scope s(cap);
      std::vector<gemm_out> c(batch);
      std::vector<rowsum_out> r(batch);
      team_record rec;
      std::atomic<int> members{0}, level_default{0};
#pragma omp parallel for num_threads(2) schedule(static, 1)
      for (int b = 0; b < batch; ++b) {
        if (b < 2) members += 1;
        if (b == 0) level_default = omp_get_max_threads();  // OpenMP's value for a nested team
        c[std::size_t(b)] = run_gemm(&rec);
        r[std::size_t(b)] = run_rowsums();
      }
      CHECK(members == 2);
      for (int b = 0; b < batch; ++b) {
        CHECK(c[std::size_t(b)] == serial_gemm());
        CHECK(r[std::size_t(b)] == serial_rowsums());
      }
      // Nesting off: each call on its app thread alone. On: a nested team of at most the cap
      // (OpenMP's own value when none is set), shared with the other app thread's calls.
      const int allowed = nesting == 1 ? 1 : (cap > 0 ? cap : level_default.load());
      CHECK(rec.largest_team >= 1);
      CHECK(rec.largest_team <= allowed);
      // One app thread calling while the other waits: the whole nested team.
      loom::detail::forget_recent_peak();
      team_record alone;
      gemm_out c1;
#pragma omp parallel num_threads(2)
      {
        if (omp_get_thread_num() == 0) c1 = run_gemm(&alone);
      }
      CHECK(c1 == serial_gemm());
      CHECK(alone.largest_team == allowed);
    }
  }
#if defined(__linux__)
  // Counted from outside: the app's team of 2 is the only one, nested or not, under a cap of 1.
  for (int nesting : {1, 2}) {
    INFO("max active levels " << nesting);
    nesting_scope levels(nesting);
    bool same = true;
    const int extra = extra_threads([&] {
      omp_set_max_active_levels(nesting);  // (a per-thread setting in some runtimes)
      loom::set_num_threads(nesting == 1 ? 0 : 1);
#pragma omp parallel for num_threads(2) schedule(static, 1)
      for (int b = 0; b < batch; ++b) {
        const bool ok = run_gemm() == serial_gemm() && run_rowsums() == serial_rowsums();
        if (!ok) {
#pragma omp atomic write
          same = false;
        }
      }
      loom::set_num_threads(0);
    });
    CHECK(same);
    CHECK(extra <= 1);
    if (counts_teams()) CHECK(extra == 1);
  }
#endif
}

TEST_CASE("threads: two std::threads call loom at once", "[threads][gemm]") {
  check_gemm_reference();
  // Each thread has its own limit; neither waits for the other (no deadlock), both get the bits.
  for (int global : {0, 1, 2, 3}) {
    INFO("set_num_threads(" << global << ")");
    num_threads_scope s(global);
    team_record rec[2];
    bool same[2] = {true, true};
    auto work = [&](int t) {
      loom::thread_limit lim(t + 1);  // 1 and 2
      for (int rep = 0; rep < 3; ++rep) {
        same[t] = same[t] && run_gemm(&rec[t]) == serial_gemm();
        same[t] = same[t] && run_rowsums() == serial_rowsums();
      }
    };
    std::thread a(work, 0), b(work, 1);
    a.join();
    b.join();
    CHECK(same[0]);
    CHECK(same[1]);
    const int base = global > 0 ? global : omp_get_max_threads();
    CHECK(rec[0].largest_team == 1);
    CHECK(rec[1].largest_team == std::min(base, 2));
    CHECK(rec[0].threads() == 1);
  }
}

TEST_CASE("threads: scratch buffers are per thread, counted and released", "[threads][gemm]") {
  using P = loom::default_gemm_policy<float>;
  auto bytes = [](index_t elements) { return std::size_t(elements) * sizeof(float); };
  num_threads_scope one(1);
  loom::release_scratch();
  CHECK(loom::scratch_bytes() == 0);
  // M > min(12 MR, MC): the A block and the whole B panel (docs/threads.md's formula).
  const index_t M = std::min(12 * P::MR, P::MC) + 1, N = 2 * P::NR + 3, K = P::KC + 5;
  loom::Tensor<float, 2> A(M, K), B(K, N), C(M, N), C2(M, N);
  fill(A, "scratch A");
  fill(B, "scratch B");
  loom::gemm(C, A, B);
  const std::size_t panel = bytes(P::KC * ((N + P::NR - 1) / P::NR) * P::NR);
  CHECK(loom::scratch_bytes() == bytes(P::MC * P::KC) + panel);
  // Another thread's buffers are its own: releasing there frees nothing here.
  std::size_t there = 1;
  std::thread([&] {
    there = loom::scratch_bytes();
    loom::release_scratch();
  }).join();
  CHECK(there == 0);
  CHECK(loom::scratch_bytes() == bytes(P::MC * P::KC) + panel);
  loom::release_scratch();
  CHECK(loom::scratch_bytes() == 0);
  loom::gemm(C2, A, B);  // allocated again, same bits
  CHECK(std::equal(C.data(), C.data() + C.size(), C2.data()));
  // Few rows: two B slivers per thread (the one in use, the next) instead of the panel.
  loom::release_scratch();
  loom::Tensor<float, 2> A1(P::MR + 1, K), C1(P::MR + 1, N);
  fill(A1, "scratch A1");
  loom::gemm<P>(C1, A1, B);
  CHECK(loom::scratch_bytes() == bytes(P::MC * P::KC) + bytes(2 * P::KC * P::NR));
  loom::release_scratch();
  // A chunked reduction's partials: chunks x outputs.
  loom::Tensor<float, 1> s(rows);
  loom::run<chunked>(s(i) = loom::sum(j, data().X(i, j)));
  CHECK(loom::scratch_bytes() == bytes(((cols + 63) / 64) * rows));
  loom::release_scratch();
  CHECK(loom::scratch_bytes() == 0);
  loom::Tensor<float, 1> s2(rows);
  loom::run<chunked>(s2(i) = loom::sum(j, data().X(i, j)));
  CHECK(std::equal(s.data(), s.data() + rows, s2.data()));
}

#else  // no OpenMP: loom is serial, and says so

TEST_CASE("threads: without OpenMP, one thread", "[threads]") {
  loom::set_num_threads(4);
  CHECK(loom::get_num_threads() == 1);
  loom::set_num_threads(0);
  loom::release_scratch();
  CHECK(loom::scratch_bytes() == 0);
}

#endif
