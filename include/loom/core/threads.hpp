// SPDX-License-Identifier: MIT
// loom/core/threads.hpp — how many threads loom's parallel regions may use (docs/threads.md).
//
//   loom::set_num_threads(n);       // every thread of the process: at most n (0: OpenMP's default)
//   loom::get_num_threads();        // what a call made here, now, may use
//   { loom::thread_limit g(n); ... } // this thread, this scope: at most n (nests, restores)
//
// Every engine (the loop nest's parallel loops, its chunked reductions, the GEMM engine) opens
// its OpenMP team with num_threads(detail::team_claim(parts).size()), and none when that is 1.
#pragma once
#include <algorithm>
#include <atomic>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "config.hpp"
#include "error.hpp"

namespace loom {

namespace detail {
/// set_num_threads's value, one for the whole process (0: none set).
inline std::atomic<int> num_threads_setting{0};
/// The innermost thread_limit of this thread (0: none).
inline thread_local int thread_cap = 0;

LOOM_COLD inline void throw_bad_thread_count(const char* who, int n) {
  throw error(cat(who, ": n = ", n, "; give n >= 1 threads, or 0 for no limit of its own"));
}

/// [lo, hi) of n items for part q of p (the first n % p parts get one more): OpenMP's
/// schedule(static) split.
struct range {
  index_t lo, hi;
};
inline range split_range(index_t n, index_t p, index_t q) noexcept {
  const index_t base = n / p, extra = n % p;
  const index_t lo = q * base + std::min(q, extra);
  return {lo, lo + base + (q < extra ? 1 : 0)};
}

/// The calling thread's part of n items in its OpenMP team (all of them outside one).
inline range thread_share(index_t n) noexcept {
#if defined(_OPENMP)
  return split_range(n, omp_get_num_threads(), omp_get_thread_num());
#else
  return {0, n};
#endif
}
}  // namespace detail

/// Caps the threads of every loom call from any thread of the process at n >= 1 (a team of
/// exactly n where the work is large enough, even above OpenMP's default); n = 0 restores the
/// default, omp_get_max_threads() of the calling thread (so OMP_NUM_THREADS is respected).
/// Process-wide, unlike omp_set_num_threads, which sets only the calling thread's value.
inline void set_num_threads(int n) {
  if (n < 0) detail::throw_bad_thread_count("loom::set_num_threads", n);
  detail::num_threads_setting.store(n, std::memory_order_relaxed);
}

/// The most threads a loom call made by this thread, now, would use: set_num_threads's value
/// (else omp_get_max_threads()), lowered by this thread's thread_limit and OMP_THREAD_LIMIT; 1
/// where a team opened here could not be active (inside an active parallel region while nested
/// parallelism is off, OpenMP's default), and 1 without OpenMP.
inline int get_num_threads() noexcept {
#if defined(_OPENMP)
  if (omp_get_active_level() >= omp_get_max_active_levels()) return 1;
  const int set = detail::num_threads_setting.load(std::memory_order_relaxed);
  int n = std::min(set > 0 ? set : omp_get_max_threads(), omp_get_thread_limit());
  if (detail::thread_cap > 0) n = std::min(n, detail::thread_cap);
  return std::max(n, 1);
#else
  return 1;
#endif
}

/// For its lifetime, caps the loom calls this thread makes at n threads (n = 0: no cap of its
/// own). A limit only lowers: inside another thread_limit or under set_num_threads the smaller
/// value holds. Thread-local: it does not reach calls made by other threads, including those of
/// a parallel region this thread opens.
class thread_limit {
 public:
  explicit thread_limit(int n) : saved_(detail::thread_cap) {
    if (n < 0) detail::throw_bad_thread_count("loom::thread_limit", n);
    if (n > 0) detail::thread_cap = saved_ > 0 ? std::min(saved_, n) : n;
  }
  ~thread_limit() { detail::thread_cap = saved_; }
  thread_limit(const thread_limit&) = delete;
  thread_limit& operator=(const thread_limit&) = delete;

 private:
  int saved_;
};

namespace detail {
/// Threads for a parallel region of `parts` independent pieces of work: get_num_threads(), no
/// more than there are pieces.
inline int team_size(index_t parts) noexcept {
  return int(std::max<index_t>(1, std::min<index_t>(get_num_threads(), parts)));
}

/// How many loom parallel regions of the process are open now (those holding a team_claim).
inline std::atomic<int> teams_open{0};

/// The most loom regions open at once lately, and when that was last reached.
inline std::atomic<int> peak_open{0};
inline std::atomic<double> peak_open_seconds{0.0};
/// How long a peak counts: app threads calling loom in turn, each call tens of microseconds, are
/// apart for less than this between calls.
inline constexpr double peak_memory_seconds = 1e-3;

/// The peak of open regions within the last peak_memory_seconds, `open` now included: a call
/// made while another app thread is between two of its calls shares the team with that thread
/// too, instead of taking the whole team for itself and running two teams at once as soon as
/// the other thread calls again (docs/threads.md#measured).
inline int recent_peak(int open) noexcept {
#if defined(_OPENMP)
  const double now = omp_get_wtime();
  const int peak = peak_open.load(std::memory_order_relaxed);
  if (open >= peak || now - peak_open_seconds.load(std::memory_order_relaxed) > peak_memory_seconds) {
    peak_open.store(open, std::memory_order_relaxed);
    peak_open_seconds.store(now, std::memory_order_relaxed);
    return open;
  }
  return peak;
#else
  return open;
#endif
}

/// Forgets the recent peak (tests that count team sizes start from a quiet process).
inline void forget_recent_peak() noexcept { peak_open.store(0, std::memory_order_relaxed); }

/// A parallel region's team, held for the region's lifetime: team_size(parts) shared with the
/// regions other app threads have open at the same moment or had within the last millisecond
/// (recent_peak; each gets its share, at least 1), so two app threads calling loom at once on 2
/// cores run 2 threads, not two teams of 2. A region that opens alone, with no other open lately,
/// gets the whole team_size. Results never depend on the team's size.
class team_claim {
 public:
  explicit team_claim(index_t parts) noexcept {
    const int want = team_size(parts);
    if (want <= 1) return;
    claimed_ = true;
    const int open = teams_open.fetch_add(1, std::memory_order_relaxed) + 1;
    size_ = std::max(1, want / recent_peak(open));
  }
  ~team_claim() {
    if (claimed_) teams_open.fetch_sub(1, std::memory_order_relaxed);
  }
  team_claim(const team_claim&) = delete;
  team_claim& operator=(const team_claim&) = delete;
  int size() const noexcept { return size_; }

 private:
  int size_ = 1;
  bool claimed_ = false;
};

/// Runs `items` independent work items body(t) on loom's team (one thread: no parallel region);
/// on this thread alone where the whole is too little work to wake a team for. The kernels'
/// one way to go parallel over a list of items (convolutions, their packing, permutations).
template <class F>
void for_items(index_t items, const F& body, bool worth_a_team = true) {
  const team_claim claim(worth_a_team ? items : 1);
  const int team = claim.size();
  if (team > 1) {
    LOOM_PRAGMA(omp parallel for num_threads(team) schedule(static))
    for (index_t t = 0; t < items; ++t) body(t);
  } else {
    for (index_t t = 0; t < items; ++t) body(t);
  }
}
}  // namespace detail

}  // namespace loom
