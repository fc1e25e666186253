// SPDX-License-Identifier: MIT
// loom/expr/access.hpp — a tensor read or written at affine indices: `A(i, k)`, `in(x + 1)`.
// At run time an access is bound once: its base pointer and one stride per variable, so the
// address at a point is base + Σ stride_v · v whatever the layout (row/column-major, views).
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/error.hpp"
#include "../core/layout.hpp"
#include "../core/region.hpp"
#include "../simd/memory.hpp"
#include "../simd/prefetch.hpp"
#include "index.hpp"
#include "node.hpp"

namespace loom {

struct assign_set;
struct assign_add;
template <class Lhs, class Rhs, class Mode>
struct definition;

/// An evaluation context that is row C::row of a block unrolled along the variable C::var, seen
/// from the block's first row, c.first (lower/state.hpp's block_row).
template <class C>
concept BlockRow = requires(const C& c) {
  typename C::var;
  C::row;
  c.first;
};

namespace detail {
template <class C>
struct rebased_vars_of {
  using type = meta::list<>;
};
template <class C>
  requires requires { typename C::rebased_vars; }
struct rebased_vars_of<C> {
  using type = typename C::rebased_vars;
};
}  // namespace detail
/// The variables a context has folded into the accesses' base pointers (a strip's row, see
/// lower/emit.hpp's strip and access::rebase): an access adds only its other variables' terms.
template <class C>
using rebased_vars = typename detail::rebased_vars_of<C>::type;

/// The first value of every variable of a run that starts at 0 (any run whose output is not a
/// region of a larger index space).
struct zero_starts {
  template <class V>
  static constexpr index_t start() { return 0; }
};

/// The first value of each of Vars (a run computing a region: its output's origin).
template <class Vars>
struct var_starts {
  std::array<index_t, Vars::size == 0 ? 1 : Vars::size> first{};
  template <class V>
  index_t start() const {
    if constexpr (meta::contains<Vars, V>) return first[meta::index_of<Vars, V>];
    else return 0;
  }
};

template <class View, IndexExpr... Idx>
struct access : expr_node {
  using view_type = View;
  using element_type = typename View::element_type;
  using value_type = typename View::value_type;
  using vars = meta::unique<meta::concat<typename Idx::vars...>>;
  using reductions = meta::list<>;
  using accesses = meta::list<access>;
  using index_types = meta::list<Idx...>;
  static constexpr std::size_t rank = sizeof...(Idx);
  static_assert(rank == View::rank, "loom: an access needs one index per tensor dimension");

  View view;
  std::tuple<Idx...> idx;
  // Bound state (set by bind() once per run).
  element_type* base = nullptr;
  std::array<index_t, vars::size> var_stride{};

  access(const View& v, const Idx&... i) : view(v), idx(i...) {}
  access(const access&) = default;

  /// `out(i, j) = e` builds a definition; nothing runs until loom::run.
  template <class Rhs>
    requires(Expr<Rhs> || Scalar<Rhs>)
  auto operator=(const Rhs& rhs) const {
    return definition<access, detail::lifted_t<value_type, Rhs>, assign_set>(*this, detail::lift<value_type>(rhs));
  }
  auto operator=(const access& rhs) const { return definition<access, access, assign_set>(*this, rhs); }
  /// `out(i, j) += e` accumulates into the output.
  template <class Rhs>
    requires(Expr<Rhs> || Scalar<Rhs>)
  auto operator+=(const Rhs& rhs) const {
    return definition<access, detail::lifted_t<value_type, Rhs>, assign_add>(*this, detail::lift<value_type>(rhs));
  }

  // ---- binding ----
  /// Binds the access for a run whose variables start at `st` (zero_starts, or the first index
  /// of a region the run computes): base is the address at the nest's first point, minus the
  /// view's own origin when it holds a box of a larger index space (core/region.hpp).
  ///
  /// The offset is summed modulo 2^64: its terms may be huge where the sum is not (a region far
  /// from 0: offset - origin and start * stride cancel), and a checked access's sum is a real
  /// element offset, which the wrapped sum then equals. An unchecked access's base may lie
  /// anywhere: a boundary condition's (whose reads remap the indices and never go through base)
  /// or one never evaluated (never_evaluated); one that would wrap the address space is reached
  /// by integer arithmetic, since such pointer arithmetic is undefined.
  template <class Starts = zero_starts>
  void bind(const Starts& st = {}) {
    using u64 = std::uint64_t;
    u64 off = 0;
    var_stride.fill(0);
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((off += (u64(std::get<D>(idx).offset()) - u64(origin_of(view, D))) * u64(view.stride(D)),
        add_strides(std::get<D>(idx), view.stride(D))), ...);
    }(std::make_index_sequence<rank>{});
    if constexpr (!std::is_same_v<Starts, zero_starts>)
      meta::for_each_type<vars>([&]<class V>(V*) { off += u64(st.template start<V>()) * u64(var_stride[meta::index_of<vars, V>]); });
    const std::uintptr_t data = reinterpret_cast<std::uintptr_t>(view.data());
    index_t bytes = 0;
    const bool scaled = !__builtin_mul_overflow(index_t(off), index_t(sizeof(element_type)), &bytes);
    const std::uintptr_t size = bytes >= 0 ? std::uintptr_t(bytes) : std::uintptr_t(0) - std::uintptr_t(bytes);
    if (scaled && (bytes >= 0 ? data + size >= data : data >= size)) base = view.data() + index_t(off);
    else base = reinterpret_cast<element_type*>(data + off * sizeof(element_type));
  }
  template <class V>
  index_t stride_of() const {
    if constexpr (meta::contains<vars, V>) return var_stride[meta::index_of<vars, V>];
    else return 0;
  }

  /// Whether a run with extents `ext` never evaluates the access: one of its variables ranges
  /// over nothing (a reduction over an empty range). Such an access is neither checked nor read.
  template <class Ext>
  static bool never_evaluated(const Ext& ext) {
    bool empty = false;
    meta::for_each_type<vars>([&]<class V>(V*) { empty = empty || ext.template extent<V>() == 0; });
    return empty;
  }

  /// Checks every dimension's index range against the view's; `ext` gives each variable's
  /// extent and `st` its first value.
  template <class Ext, class Starts = zero_starts>
  void check_bounds(const Ext& ext, const Starts& st = {}) const {
    if (never_evaluated(ext)) return;
    [&]<std::size_t... D>(std::index_sequence<D...>) { (check_dim<D>(ext, st), ...); }(std::make_index_sequence<rank>{});
  }

  /// index_range where its arithmetic overflows (a coefficient or offset near 2^63): every
  /// index_t, which fails any check, rather than a wrapped range that might pass one.
  static constexpr std::pair<index_t, index_t> overflowed_range{std::numeric_limits<index_t>::min(),
                                                                std::numeric_limits<index_t>::max()};

  /// The indices [lo, hi] dimension D takes when each variable V ranges over
  /// [st.start<V>(), st.start<V>() + ext.extent<V>()): bounds checks and a pipeline's regions.
  template <std::size_t D, class Ext, class Starts = zero_starts>
  std::pair<index_t, index_t> index_range(const Ext& ext, const Starts& st = {}) const {
    const auto& e = std::get<D>(idx);
    index_t lo = e.offset(), hi = e.offset();
    bool over = false;
    meta::for_each_type<typename std::tuple_element_t<D, std::tuple<Idx...>>::vars>([&]<class V>(V*) {
      index_t first = 0, k = 0;
      over |= __builtin_mul_overflow(e.template coef<V>(), st.template start<V>(), &first);
      over |= __builtin_add_overflow(lo, first, &lo);
      over |= __builtin_add_overflow(hi, first, &hi);
      over |= __builtin_mul_overflow(e.template coef<V>(), ext.template extent<V>() - 1, &k);
      over |= k < 0 ? __builtin_add_overflow(lo, k, &lo) : __builtin_add_overflow(hi, k, &hi);
    });
    return over ? overflowed_range : std::pair{lo, hi};
  }

  // ---- evaluation ----
  /// The stride of variable V when the type fixes it (a layout_right view indexed by V only in
  /// its last dimension, with a coefficient known by type), else unknown_coef.
  template <class V>
  static constexpr index_t static_stride_of = [] {
    using idx = meta::list<Idx...>;
    if constexpr (rank == 0 || !std::is_same_v<typename View::layout_type, layout_right>) {
      return unknown_coef;
    } else {
      const bool only_last = []<std::size_t... D>(std::index_sequence<D...>) {
        return (!meta::contains<typename meta::at<idx, D>::vars, V> && ...);
      }(std::make_index_sequence<rank - 1>{});
      return only_last ? static_coef<meta::at<idx, rank - 1>, V> : unknown_coef;
    }
  }();

  /// Unit-stride along the lane variable L whatever the run-time strides: a layout_right view
  /// whose last index has coefficient 1 for L by type (`i`, `i + 1`, `i - r`) and whose other
  /// indices do not involve L.
  template <class L>
  static constexpr bool unit_stride_along = static_stride_of<L> == 1;

  /// The stride of variable V in elements: a constant where the type fixes it (a walk along a
  /// row then needs no multiply), 0 for a variable this access does not use.
  template <class V>
  LOOM_INLINE index_t stride_along() const {
    if constexpr (!meta::contains<vars, V>) return 0;
    else if constexpr (static_stride_of<V> != unknown_coef) return static_stride_of<V>;
    else return var_stride[meta::index_of<vars, V>];
  }
  /// The offset from base at a point: Σ stride_V · V over the variables not already in base.
  template <class C>
  LOOM_INLINE index_t offset(const C& c) const {
    using folded = rebased_vars<C>;
    return [&]<class... V>(meta::list<V...>*) {
      return index_t{((meta::contains<folded, V> ? index_t{0} : stride_along<V>() * c.template coord<V>()) + ... + 0)};
    }(static_cast<vars*>(nullptr));
  }
  /// Folds the terms of variables Fixed at c's values into base: a loop over the other variables
  /// then addresses base + their terms only, one pointer per access rather than a pointer, a
  /// stride and a multiply per fixed variable, reloaded at every vector once the registers run
  /// out (a stencil reads dozens of rows). Contexts that carry rebased_vars = Fixed read it back.
  template <class Fixed, class C>
  LOOM_INLINE void rebase(const C& c) {
    meta::for_each_type<vars>([&]<class V>(V*) {
      if constexpr (meta::contains<Fixed, V>) base += stride_along<V>() * c.template coord<V>();
    });
  }

  /// Whether a point is a row of a block (BlockRow) that this access moves along.
  template <class C>
  static constexpr bool moves_by_row = [] {
    if constexpr (BlockRow<C>) return meta::contains<vars, typename C::var>;
    else return false;
  }();

  /// The integer address of the element `ahead` elements past the one at a point (a prefetch's
  /// may lie outside the tensor). In a block of rows this access moves along, it is the address at
  /// the block's first row, hidden from the optimizer, plus `row` strides: left visible, GCC 12
  /// keeps a base register per row (and per row read ahead), runs out of registers and reloads
  /// them in the innermost loop. This way each step has one pointer and the rows are reached by
  /// multiples of the stride that stay in registers (the default column sum's 8-row step, g++ 12,
  /// AVX2: 50 instructions with 8 reloads from the stack -> 28, none).
  template <class C>
  LOOM_INLINE std::uintptr_t address_ahead(const C& c, index_t ahead) const {
    if constexpr (moves_by_row<C>) {
      const std::uintptr_t row_bytes = static_cast<std::uintptr_t>(C::row * stride_along<typename C::var>()) * sizeof(element_type);
      return detail::opaque(simd::address_ahead(base + offset(c.first), ahead)) + row_bytes;
    } else {
      return simd::address_ahead(base + offset(c), ahead);
    }
  }
  /// The element's address at a point.
  template <class C>
  LOOM_INLINE element_type* address(const C& c) const {
    if constexpr (moves_by_row<C>) return reinterpret_cast<element_type*>(address_ahead(c, 0));
    else return base + offset(c);
  }

  template <class C>
  LOOM_INLINE value_type eval(const C& c) const { return *address(c); }

  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const {
    using B = typename VM::template batch<value_type>;
    using L = typename VM::lane;
    if constexpr (!meta::contains<vars, L>) {
      return B(eval(c));  // the lane variable is absent: one value for every lane
    } else {
      const element_type* p = address(c);
      const index_t s = var_stride[meta::index_of<vars, L>];
      const index_t n = VM::masked ? c.active : index_t(VM::width);
      if constexpr (VM::contiguous || unit_stride_along<L>) {
        if constexpr (VM::masked) return simd::load_first<B>(p, n);
        else return B::load_unaligned(p);
      } else {
        if (s == 1) return VM::masked ? simd::load_first<B>(p, n) : B::load_unaligned(p);
        return simd::load_strided<B>(p, s, n);
      }
    }
  }

  template <class C>
  LOOM_INLINE void store(const C& c, value_type v) const { *address(c) = v; }

  template <class VM, class C, class B>
  LOOM_INLINE void store_v(const C& c, const B& v) const {
    using L = typename VM::lane;
    static_assert(meta::contains<vars, L>, "loom internal: the output is always indexed by the lane variable");
    element_type* p = address(c);
    const index_t s = var_stride[meta::index_of<vars, L>];
    const index_t n = VM::masked ? c.active : index_t(VM::width);
    if constexpr (VM::contiguous || unit_stride_along<L>) {
      if constexpr (VM::masked) simd::store_first(p, v, n);
      else v.store_unaligned(p);
    } else {
      if (s == 1) {
        if (VM::masked) simd::store_first(p, v, n);
        else v.store_unaligned(p);
      } else {
        simd::store_strided(p, s, v, n);
      }
    }
  }

  template <class F>
  LOOM_INLINE void for_each_access(F&& f) { f(*this); }
  template <class F>
  LOOM_INLINE void for_each_access(F&& f) const { f(*this); }

  void print(std::ostream& os) const {
    os << view.name() << "(";
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((os << (D == 0 ? "" : ", "), std::get<D>(idx).print(os)), ...);
    }(std::make_index_sequence<rank>{});
    os << ")";
  }

 private:
  template <class E>
  void add_strides(const E& e, index_t dim_stride) {
    meta::for_each_type<typename E::vars>([&]<class V>(V*) {
      var_stride[meta::index_of<vars, V>] += e.template coef<V>() * dim_stride;
    });
  }

  template <std::size_t D, class Ext, class Starts>
  void check_dim(const Ext& ext, const Starts& st) const {
    const auto [lo, hi] = index_range<D>(ext, st);
    const index_t o = origin_of(view, D), n = view.extent(D);
    if (lo < o || hi >= o + n) fail_dim<D>(lo, hi, n);
  }
  /// The error check_dim throws, out of line and cold: only a failing run calls it.
  template <std::size_t D>
  [[noreturn]] LOOM_COLD void fail_dim(index_t lo, index_t hi, index_t n) const {
    const std::string what = to_string(*this);
    using I = std::tuple_element_t<D, std::tuple<Idx...>>;
    if constexpr (is_var<I>) {
      // A lone variable ranging past the tensor is a shape mismatch, not an offset error.
      throw shape_error(detail::cat("loom::shape_error: ", what, ": dimension ", D, " of '", view.name(), "' has extent ", n, " but ", I::name(), " ranges over ", hi + 1));
    } else if (std::pair{lo, hi} == overflowed_range) {
      throw bounds_error(detail::cat("loom::bounds_error: ", what, ": dimension ", D, " of '", view.name(),
                                     "': the indices overflow 64 bits (its extent is ", n, ")"));
    } else {
      throw bounds_error(detail::cat("loom::bounds_error: ", what, ": dimension ", D, " of '", view.name(), "' needs indices [", lo, ", ", hi, "] but its extent is ", n));
    }
  }
};

template <class T>
inline constexpr bool is_access = false;
template <class V, class... I>
inline constexpr bool is_access<access<V, I...>> = true;

/// The access a tensor's or view's `operator()` builds from indices that are not all integers
/// (core/tensor.hpp's indexable finds this by argument-dependent lookup). The indices' kinds and
/// count are checked here, not in a constraint, so a wrong one is one loom message rather than a
/// list of overload candidates.
template <class View, class... I>
auto make_access(const View& v, const I&... i) {
  static_assert(((IndexExpr<I> || Integer<I>) && ...),
                "loom: a tensor is indexed with index expressions (i, x + 1, 2 * y - 1) or integers");
  static_assert(sizeof...(I) == View::rank, "loom: an access needs one index per tensor dimension: the count differs from the tensor's rank");
  if constexpr (sizeof...(I) == View::rank && ((IndexExpr<I> || Integer<I>) && ...))
    return access<View, decltype(as_index(i))...>(v, as_index(i)...);
}

namespace detail {
/// An access whose indices are plain variables only (`X(i, k)`, not `X(i, k + 1)`); its index
/// types. The engines recognise their operands by it.
template <class A>
struct plain_access_of : std::false_type {};
template <class V, class... I>
  requires(is_var<I> && ...)
struct plain_access_of<access<V, I...>> : std::true_type {
  using indices = meta::list<I...>;
};
}  // namespace detail

}  // namespace loom
