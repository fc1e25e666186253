// SPDX-License-Identifier: MIT
// loom/kernels/gemm/driver.hpp — the five loops around the micro-kernel, packing, and threads.
//
// Threads (one OpenMP team, nothing else): the team splits the C matrix into a grid of tm x tn
// rectangles of whole micro-tiles, one per thread (tm x tn = team size, chosen so the rectangles
// are as even as possible, rows first). For each KC x NC block of B the team packs the panel
// together into one shared buffer, waits, and then every thread packs the A rows of its rectangle
// into its own buffer and runs its micro-tiles. Each element of C is computed by one thread in a
// fixed k order, so the result does not depend on the thread count. Two barriers per B panel and
// none per A block: a thread that shares its rows with others (tn > 1) packs them again itself
// rather than waiting for them (packing A is 1/NC of the work). Where each thread is alone on its
// columns (tm = 1, a single thread included) there are no barriers: each packs its own slivers of
// the panel, and the micro-kernels of its first block of rows do it while their FMAs run.
#pragma once
#include <algorithm>
#include <cstddef>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../../core/config.hpp"
#include "../../core/scratch.hpp"
#include "../../core/threads.hpp"
#include "epilogue.hpp"
#include "microkernel.hpp"
#include "pack.hpp"
#include "policy.hpp"
#include "small_dynamic.hpp"

namespace loom::gemm_detail {

/// C(M x N) = epilogue(alpha * A(M x K) B(K x N) + beta * C), any strides.
template <class T>
struct problem {
  index_t M, N, K;
  matrix_ref<T> a, b;
  tile_ref<T> c;
  T alpha, beta;
};


/// The engine's scratch buffers (core/scratch.hpp), one tag each: every thread's packed A block
/// (MC x KC) and B sliver (KC x NR), the calling thread's packed B panel (KC x NC, its team's).
struct packed_a_block {};
struct packed_b_sliver {};
struct packed_b_panel {};

/// The tm x tn thread grid for mp x np micro-tiles: the least work for the busiest thread, counted
/// as its micro-tiles plus a quarter tile for each sliver of A and of B it reads (packing or first
/// reading MR x kc elements costs about a quarter of a tile's MR x NR x kc FMAs). Without that
/// term, 3136 x 64 x 576 on 2 threads split its 4 columns of tiles (523 x 2 tiles each, against
/// 262 x 4) and each thread read all of A for half the uses (docs/tuning.md#gemm-blocking).
struct thread_grid {
  index_t tm, tn;
};
inline thread_grid choose_grid(index_t threads, index_t mp, index_t np) {
  thread_grid best{threads, 1};
  index_t best_load = -1;
  for (index_t tm = threads; tm >= 1; --tm) {
    if (threads % tm) continue;
    const index_t tn = threads / tm;
    const index_t rows = (mp + tm - 1) / tm, cols = (np + tn - 1) / tn;
    const index_t load = 4 * rows * cols + rows + cols;
    if (best_load < 0 || load < best_load) {
      best = {tm, tn};
      best_load = load;
    }
  }
  return best;
}

/// Which kernel the loops call: the register-blocked one, or the plain reference (tests).
struct fast_kernel {};
struct plain_kernel {};

template <class P, class Kernel, class ASliver, class Epi>
LOOM_INLINE void call_kernel(index_t kc, const ASliver& a, const typename P::value_type* bp,
                             const next_sliver<typename P::value_type>& next,
                             const tile_ref<typename P::value_type>& c, index_t m, index_t n,
                             typename P::value_type alpha, typename P::value_type beta, const Epi& epi, bool last,
                             index_t i0, index_t j0) {
  if constexpr (std::is_same_v<Kernel, plain_kernel>)
    reference_kernel<P>(kc, a, bp, next, c, m, n, alpha, beta, epi, last, i0, j0);
  else if (!is_packed_a<ASliver> || m > P::edge_rows)
    micro_kernel<P, P::MR>(kc, a, bp, next, c, m, n, alpha, beta, epi, last, i0, j0);
  else  // a last sliver of few rows: no FMAs on more than MR - edge_rows rows of padding
    micro_kernel<P, P::edge_rows>(kc, a, bp, next, c, m, n, alpha, beta, epi, last, i0, j0);
}

/// The row slivers of an mc-row block of A: MR rows each, except that a short last sliver whose
/// rows fit two edge kernels together with the full sliver before it (rest + MR <= 2 edge_rows)
/// is merged with that one and the two are split evenly. M = 16 with MR = 14: 8 + 8 rows, 2 x 16
/// FMAs per k step, instead of 14 + 2 rows at 28 + 16 (the 2 rows run the 8-row edge kernel).
template <class P>
struct row_slivers {
  index_t mc, count, regular, first_half;  // slivers [0, regular) start at s * MR
  explicit row_slivers(index_t rows) : mc(rows) {
    constexpr index_t MR = P::MR, E = P::edge_rows;
    count = (mc + MR - 1) / MR;
    const index_t rest = mc - (count - 1) * MR;
    const bool halves = E < MR && count >= 2 && rest + MR <= 2 * E;
    regular = halves ? count - 2 : count;
    first_half = halves ? (MR + rest + 1) / 2 : 0;
  }
  index_t lo(index_t s) const { return s <= regular ? s * P::MR : regular * P::MR + first_half; }
  index_t rows(index_t s) const { return (s + 1 < count ? lo(s + 1) : mc) - lo(s); }
};

/// Whether a thread reads the slivers of A in place (row-major A) instead of packing them, given
/// how many slivers of B each meets. Packing reads and writes each element once (about a cycle
/// each), a visible share of a product with few slivers of B. A sliver read in place is MR row
/// streams, which the hardware prefetchers follow, at the price of more cache lines live at once:
/// up to four uses it still wins, unless the rows are a multiple of 4 KiB apart. Then all MR of
/// them fall in one L1 set (8 ways) and evict each other, which only two uses repay
/// (docs/tuning.md#gemm-blocking).
template <class T>
bool a_in_place(const matrix_ref<T>& a, index_t uses) {
  if (a.cs != 1) return false;
  const bool same_l1_set = (a.rs * index_t(sizeof(T))) % 4096 == 0;
  return uses <= (same_l1_set ? 2 : 4);
}

/// Whether each thread packs the B slivers it uses one at a time, just before their micro-tiles,
/// instead of the team packing the whole KC x NC panel first. With few rows of A (M <= 12 MR, and
/// within one MC block, so that no sliver is packed twice) each sliver feeds only a few
/// micro-kernel calls: a shared panel (9 MiB at KC x NC) would be written out to L3 and read back
/// once or twice, while a sliver packed on the spot (KC x NR, 64 KiB) is still in L1/L2 when the
/// kernel reads it. The micro-kernels of one sliver pack the next (next_sliver), so reading B
/// overlaps with the FMAs. (Reading a row-major B in place instead avoids even that copy, but a
/// row stride of a large power of two maps all KC rows of a sliver to a few cache sets: at
/// N = 4096 every k step missed L2.)
template <class P>
bool b_per_sliver(const problem<typename P::value_type>& pb) {
  return pb.M <= std::min(12 * P::MR, P::MC);
}

/// The loops of one thread over its rectangle of C.
/// team > 1: a member of an OpenMP team of `team` threads made for this call (it synchronizes at
/// barriers); team == 1: the only thread, which must not touch a barrier: it may be one of an
/// app's own team calling GEMM on its own. (A run-time test, not a template parameter: one
/// instantiation of the loops serves both.)
template <class P, class Kernel, class Epi>
void gemm_thread(const problem<typename P::value_type>& pb, const Epi& epi, typename P::value_type* bp, index_t tid,
                 index_t team) {
  using T = typename P::value_type;
  constexpr index_t MR = P::MR, NR = P::NR, KC = P::KC, MC = P::MC, NC = P::NC;
  const index_t mp = (pb.M + MR - 1) / MR;
  const index_t np_all = (std::min(NC, pb.N) + NR - 1) / NR;
  const thread_grid g = choose_grid(team, mp, np_all);
  const detail::range rows = detail::split_range(mp, g.tm, tid / g.tn);
  const index_t m_lo = rows.lo * MR, m_hi = std::min(pb.M, rows.hi * MR);
  T* ap = detail::scratch<T, packed_a_block>(std::size_t(MC * KC));
  const bool per_sliver = b_per_sliver<P>(pb);
  // Two slivers: the one the kernels read, the next one they pack.
  T* bs = per_sliver ? detail::scratch<T, packed_b_sliver>(std::size_t(2 * KC * NR)) : nullptr;
  // K in equal blocks of at most KC: 1200 = 600 + 600, not 1152 + 48 (a short last block pays a
  // whole pass over C and a repack of A for a few FMAs per element).
  const index_t k_blocks = std::max<index_t>(1, (pb.K + KC - 1) / KC);
  const index_t kstep = std::max<index_t>(1, (pb.K + k_blocks - 1) / k_blocks);
  // The thread's rows in equal blocks of whole slivers, at most MC each, for the same reason:
  // with MC = 252, 1024 rows would run 4 x 252 + 16, and the last block stream the whole B panel
  // from L3 for one row of micro-tiles.
  const index_t my_slivers = rows.hi - rows.lo;
  const index_t m_blocks = std::max<index_t>(1, (my_slivers + MC / MR - 1) / (MC / MR));
  const index_t mstep = std::max<index_t>(1, (my_slivers + m_blocks - 1) / m_blocks) * MR;

  for (index_t jc = 0; jc < pb.N; jc += NC) {
    const index_t nc = std::min(NC, pb.N - jc);
    const index_t np = (nc + NR - 1) / NR;
    const detail::range cols = detail::split_range(np, g.tn, tid % g.tn);
    const bool a_direct = a_in_place(pb.a, cols.hi - cols.lo);
    const matrix_ref<T> b = pb.b.at(0, jc);
    // K = 0 still runs one pass (kc = 0): C = epilogue(beta * C).
    // Who packs B. Per sliver: each thread into two sliver buffers. A thread that is alone on its
    // columns (one row part, tm = 1) with a row-major B: its own slivers of the panel, packed by
    // the micro-kernels of its first block of rows (no barriers). Otherwise the team packs the
    // panel together before any micro-tile, between two barriers.
    const bool own_panel = !per_sliver && g.tm == 1 && b.cs == 1;
    for (index_t pc = 0; pc < std::max<index_t>(pb.K, 1); pc += kstep) {
      const index_t kc = std::min(KC, std::min(kstep, pb.K - pc));  // (KC first: the compiler keeps the bound)
      if (!per_sliver && !own_panel) {
        const detail::range mine = detail::split_range(np, team, tid);
        for (index_t q = mine.lo; q < mine.hi; ++q) pack_b_sliver<NR>(bp + q * NR * kstep, b.at(pc, 0), kc, nc, q);
        if (team > 1) {
#pragma omp barrier
        }
      }
      const T beta = pc == 0 ? pb.beta : T(1);
      const bool last = pc + kstep >= pb.K;
      for (index_t ic = m_lo; ic < m_hi; ic += mstep) {
        const index_t mc = std::min(mstep, m_hi - ic);
        const row_slivers<P> sl(mc);
        // In place: only the slivers shorter than MR are packed (zero-padded), at ap. Packed
        // sliver s sits at ap + (s - full) * MR * kc.
        const index_t full = a_direct ? std::min(mc / MR, sl.regular) : 0;
        const index_t regular_end = sl.regular < sl.count ? sl.lo(sl.regular) : mc;
        if (full * MR < regular_end) pack_a<MR>(ap, pb.a.at(ic + full * MR, pc), regular_end - full * MR, kc);
        for (index_t s = sl.regular; s < sl.count; ++s)
          pack_a<MR>(ap + (s - full) * MR * kc, pb.a.at(ic + sl.lo(s), pc), sl.rows(s), kc);
        // Per sliver or in a thread's own panel (row-major B): the kernels of sliver q copy
        // sliver q + 1 to where it goes, each call an equal share of its rows, so B is read at the
        // FMAs' pace.
        // Panel slivers sit kstep x NR apart, for every block of K: without barriers (own_panel)
        // threads may be in blocks of different lengths at once (the last one may be shorter).
        const bool streaming = per_sliver || (own_panel && ic == m_lo);
        auto slot = [&](index_t q) { return per_sliver ? bs + ((q - cols.lo) & 1) * KC * NR : bp + q * NR * kstep; };
        auto streamed = [&](index_t q) { return b.cs == 1 && q < cols.hi && (q + 1) * NR <= nc; };
        auto ask_first_rows = [&](index_t q) {  // the rows a copy starts on, before it asks ahead
          if (!streamed(q)) return;
          for (index_t k = 0; k < std::min(kc, next_sliver<T>::ahead); ++k) prefetch_row_to_l2<NR>(b.at(pc + k, q * NR).p);
        };
        bool packed = false;  // whether sliver q is already in its buffer
        if (streaming) ask_first_rows(cols.lo + 1);
        for (index_t q = cols.lo; q < cols.hi; ++q) {
          const index_t j0 = jc + q * NR, n = std::min(NR, pb.N - j0);
          if (streaming && !packed) pack_b_sliver<NR>(slot(q), b.at(pc, 0), kc, nc, q);
          const T* bq = slot(q);
          const bool copy_next = streaming && streamed(q + 1);
          packed = copy_next;
          for (index_t s = 0; s < sl.count; ++s) {
            const index_t i0 = ic + sl.lo(s), m = sl.rows(s);
            const tile_ref<T> c{pb.c.p + i0 * pb.c.rs + j0 * pb.c.cs, pb.c.rs, pb.c.cs};
            next_sliver<T> next{};
            if (copy_next) next = {b.at(pc, (q + 1) * NR).p, b.rs, slot(q + 1), s * kc / sl.count, (s + 1) * kc / sl.count};
            if (s + 1 == sl.count && streaming) ask_first_rows(q + 2);
            if (s < full)
              call_kernel<P, Kernel>(kc, rows_of_a<T>{pb.a.at(i0, pc).p, pb.a.rs}, bq, next, c, m, n, pb.alpha, beta,
                                     epi, last, i0, j0);
            else
              call_kernel<P, Kernel>(kc, packed_a<T, MR>{ap + (s - full) * MR * kc}, bq, next, c, m, n, pb.alpha,
                                     beta, epi, last, i0, j0);
          }
        }
      }
      if (team > 1 && !per_sliver && !own_panel) {
#pragma omp barrier
      }
    }
  }
}

/// Runs a problem on an OpenMP team of detail::team_claim threads (loom::get_num_threads(): 1
/// inside an app's active parallel region unless nesting is on), or on the calling thread when
/// it is too small to share.
template <class P, class Kernel = fast_kernel, class Epi = identity_epilogue>
void run_packed(const problem<typename P::value_type>& pb, const Epi& epi = {}) {
  using T = typename P::value_type;
  if (pb.M == 0 || pb.N == 0) return;
  const index_t nb = std::min(P::NC, pb.N);
  T* bp = b_per_sliver<P>(pb) ? nullptr : detail::scratch<T, packed_b_panel>(std::size_t(P::KC * ((nb + P::NR - 1) / P::NR) * P::NR));
  // Below ~2 MFLOP a fork/join costs more than it saves.
  const double flops = 2.0 * double(pb.M) * double(pb.N) * double(std::max<index_t>(pb.K, 1));
  const detail::team_claim claim(flops >= 2e6 ? ((pb.M + P::MR - 1) / P::MR) * ((nb + P::NR - 1) / P::NR) : 1);
  const int threads = claim.size();
  if (threads == 1) {
    gemm_thread<P, Kernel>(pb, epi, bp, 0, 1);
    return;
  }
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
  gemm_thread<P, Kernel>(pb, epi, bp, omp_get_thread_num(), omp_get_num_threads());
#endif
}

/// The engine as loom::gemm and loom::run call it. No policy given (void): small products take the
/// unpacked path of small_dynamic.hpp and the rest the default policy; a policy given is always
/// run on the packed engine, as asked.
template <class Policy, class T, class Epi = identity_epilogue>
void run_engine(const problem<T>& pb, const Epi& epi = {}) {
  if constexpr (std::is_void_v<Policy>) {
    if (pb.b.cs == 1 && pb.c.cs == 1 && small_dynamic_shape<T>::fits(pb.M, pb.N, pb.K)) {
      small_dynamic_gemm(pb.M, pb.N, pb.K, pb.a, pb.b, pb.c, pb.alpha, pb.beta, epi);
      return;
    }
    run_packed<default_gemm_policy<T>>(pb, epi);
  } else {
    run_packed<Policy>(pb, epi);
  }
}

}  // namespace loom::gemm_detail
