// SPDX-License-Identifier: MIT
// loom/kernels/permute/run_permutation.hpp — runs a permutation (permutation.hpp) as one call of
// the permutation engine, with the same checks as every loom::run: extents, bounds and aliasing,
// all before anything is written.
//
// The engine moves bits: out(v...) = X(v...) in another order. Where the output's unit-stride
// variable L and the input's M differ, each tile of Tile x Tile elements of the (M, L) plane is
// transposed W x W in registers (simd/transpose.hpp): W rows of X loaded along M, W rows of out
// stored along L, no gathers. Tiles are the work items of loom's team, L's tiles innermost, so a
// thread writes whole lines of out in order, and each tile's lines of X stay in cache while it
// uses them (tile_bytes). Where no transpose is needed
// (views whose strides are run-time values and share their unit-stride variable), rows are
// copied as they are.
#pragma once
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>

#include "../../core/threads.hpp"
#include "../../lower/run.hpp"
#include "../../simd/transpose.hpp"
#include "permutation.hpp"

namespace loom::permute_detail {

/// A permutation as the kernel sees it: per output dimension d, the extent and the strides (in
/// elements) of the variable that indexes it, in the output and in the input.
template <std::size_t R>
struct strides_by_dim {
  std::array<index_t, R> ext{}, out{}, in{};
};

/// The dimension whose variable walks a view at unit stride (extent above 1, the last such); -1
/// where none does.
template <std::size_t R>
int unit_stride_dim(const std::array<index_t, R>& ext, const std::array<index_t, R>& stride) {
  for (int d = int(R) - 1; d >= 0; --d)
    if (stride[std::size_t(d)] == 1 && ext[std::size_t(d)] > 1) return d;
  return -1;
}

/// Offsets of the other dimensions' point `o` (row-major over them), in the output and the input.
template <std::size_t R>
struct outer_offsets {
  std::array<index_t, R> ext{}, out{}, in{};
  std::size_t n = 0;
  index_t count = 1;
  outer_offsets(const strides_by_dim<R>& p, int skip_a, int skip_b) {
    for (std::size_t d = 0; d < R; ++d) {
      if (int(d) == skip_a || int(d) == skip_b) continue;
      ext[n] = p.ext[d], out[n] = p.out[d], in[n] = p.in[d];
      count *= p.ext[d];
      ++n;
    }
  }
  std::pair<index_t, index_t> at(index_t o) const {
    index_t po = 0, pi = 0;
    for (std::size_t k = n; k-- > 0;) {
      const index_t c = o % ext[k];
      o /= ext[k];
      po += c * out[k], pi += c * in[k];
    }
    return {po, pi};
  }
};

/// The edge of a tile of the (M, L) plane, in bytes of a row: 512 (128 floats), a multiple of
/// every target's vector. A tile is then 64 KiB of X and 64 KiB of out (each in L2); tiles of 64
/// floats ran up to 1.5x slower beyond the cache, of 16 and 32 floats up to 2x, their rows' runs
/// too short for the prefetchers; 1 KiB was faster on some shapes and slower on others
/// (docs/tuning.md#transposes).
inline constexpr index_t tile_bytes = 512;

/// The element's bits as the register transposes move them.
template <class T>
using bits_of = std::conditional_t<sizeof(T) == 4, float, double>;

/// out = X permuted. L and M: the dimensions walked at unit stride by the output and by the input
/// (L != M), or -1 (a copy of rows, below).
template <class T, std::size_t R>
void permute(const T* src, T* dst, const strides_by_dim<R>& p, int L, int M) {
  using U = bits_of<T>;  // (only loads, shuffles and stores touch the elements: their bits move as they are)
  using B = simd::batch<U, simd::native_width<U>>;
  constexpr index_t Tile = tile_bytes / index_t(sizeof(U));
  index_t elements = 1;
  for (index_t e : p.ext) elements *= e;
  const bool worth_a_team = elements >= index_t{1} << 16;
  if (L >= 0 && M >= 0 && L != M) {
    const outer_offsets<R> others(p, L, M);
    const index_t nL = p.ext[std::size_t(L)], nM = p.ext[std::size_t(M)];
    const index_t lt = (nL + Tile - 1) / Tile, mt = (nM + Tile - 1) / Tile;
    const index_t in_along_l = p.in[std::size_t(L)], out_along_m = p.out[std::size_t(M)];
    loom::detail::for_items(others.count * mt * lt, [&](index_t t) {
      const index_t l0 = t % lt * Tile, m0 = t / lt % mt * Tile;
      const auto [po, pi] = others.at(t / lt / mt);
      simd::transpose<B>(reinterpret_cast<const U*>(src + pi + l0 * in_along_l + m0), in_along_l,
                         reinterpret_cast<U*>(dst + po + m0 * out_along_m + l0), out_along_m, std::min(Tile, nM - m0),
                         std::min(Tile, nL - l0));
    }, worth_a_team);
    return;
  }
  // No transpose: rows along the output's unit-stride dimension (its last without one), copied
  // whole where the input walks it at unit stride too.
  const int inner = L >= 0 ? L : int(R) - 1;
  const outer_offsets<R> rows(p, inner, -1);
  const index_t n = p.ext[std::size_t(inner)], so = p.out[std::size_t(inner)], si = p.in[std::size_t(inner)];
  loom::detail::for_items(rows.count, [&](index_t t) {
    const auto [po, pi] = rows.at(t);
    if (so == 1 && si == 1) std::memcpy(dst + po, src + pi, std::size_t(n) * sizeof(T));
    else
      for (index_t k = 0; k < n; ++k) dst[po + k * so] = src[pi + k * si];
  }, worth_a_team);
}

template <class Def>
void run_permutation(const Def& def) {
  using P = permutation<Def>;
  using vars = typename Def::pure_vars;
  constexpr std::size_t R = vars::size;
  detail::checked_state<Def> s;
  index_t points = 0;
  if (!detail::check_run(def, s, points)) return;  // extents, an empty output, every access in bounds
  // (An output that overlaps X is written through a temporary, as every definition is.)
  detail::run_bound(def, false, [&](const Def& d) {
    strides_by_dim<R> p;
    meta::for_each_type<vars>([&]<class V>(V*) {
      constexpr std::size_t k = meta::index_of<vars, V>;
      p.ext[k] = s.template extent<V>(), p.out[k] = d.lhs.template stride_of<V>(), p.in[k] = d.rhs.template stride_of<V>();
    });
    int L = unit_stride_dim(p.ext, p.out), M = unit_stride_dim(p.ext, p.in);
    if constexpr (P::always) {  // by type: the output's last variable, and X's last
      L = int(R) - 1;
      M = int(meta::index_of<vars, typename P::in::last>);
    }
    permute<typename Def::value_type, R>(d.rhs.base, d.lhs.base, p, L, M);
  });
}

}  // namespace loom::permute_detail
