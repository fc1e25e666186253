// SPDX-License-Identifier: MIT
// loom/expr/boundary.hpp — Halide's boundary conditions as expression nodes: repeat_edge(in),
// constant_exterior(in, v), mirror_image(in) and mirror_interior(in) read any index, inside the
// tensor or not. Meant for a box's thin border; its interior runs on plain accesses (strip_boundaries).
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <ostream>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/error.hpp"
#include "../core/region.hpp"
#include "../core/tensor.hpp"
#include "access.hpp"
#include "transform.hpp"

namespace loom {

namespace boundary {

/// Clamps each index into [0, extent): ... 0 0 | 0 1 2 ... n-1 | n-1 n-1 ...
struct repeat_edge {
  static constexpr const char* name = "repeat_edge";
};
/// Outside the tensor, a constant.
struct constant_exterior {
  static constexpr const char* name = "constant_exterior";
};
/// Reflects, the edge included (period 2n): ... 1 0 | 0 1 2 ... n-1 | n-1 n-2 ...
struct mirror_image {
  static constexpr const char* name = "mirror_image";
};
/// Reflects, the edge excluded (period 2n - 2; extent 1 repeats its element): ... 2 1 | 0 1 ... n-1 | n-2 ...
struct mirror_interior {
  static constexpr const char* name = "mirror_interior";
};

template <class K>
inline constexpr bool is_kind = std::is_same_v<K, repeat_edge> || std::is_same_v<K, constant_exterior> ||
                                std::is_same_v<K, mirror_image> || std::is_same_v<K, mirror_interior>;

/// The index in [0, n) that index i (any value, relative to the first index) reads under Kind,
/// for n >= 1; -1 for an index outside the tensor under constant_exterior.
template <class Kind>
constexpr index_t remap(index_t i, index_t n) {
  if (i >= 0 && i < n) return i;
  if constexpr (std::is_same_v<Kind, repeat_edge>) {
    return i < 0 ? 0 : n - 1;
  } else if constexpr (std::is_same_v<Kind, constant_exterior>) {
    return -1;
  } else {
    // A reflection is periodic: fold i into one period [0, p), then mirror its second half.
    constexpr bool image = std::is_same_v<Kind, mirror_image>;
    const index_t p = image ? 2 * n : 2 * n - 2;
    if (p == 0) return 0;  // mirror_interior of one element
    const index_t m = ((i % p) + p) % p;
    return m < n ? m : p - m - (image ? 1 : 0);
  }
}

}  // namespace boundary

/// An access read through boundary condition Kind: every index is legal. It is the access it
/// derives from (binding, strides, variables, view, indices) with evaluation that remaps each
/// dimension's index into the view, or yields the constant outside it (constant_exterior).
///
/// A node reads coordinates relative to where its run starts its variables (a region's origin),
/// so bind() records those starts: dimension D's true index is Σ coef_V · (start_V + coord_V) +
/// offset_D. Loads are scalar, a vector gathered lane by lane: correctness first, since a run
/// reads plain accesses in the interior of its box and this node only on the border.
template <class Kind, class View, IndexExpr... Idx>
struct boundary_access : access<View, Idx...> {
  static_assert(boundary::is_kind<Kind>, "loom: the kind of a boundary condition is one of loom::boundary's tags");
  using plain_access = access<View, Idx...>;
  using kind = Kind;
  using typename plain_access::value_type;
  using typename plain_access::element_type;
  using typename plain_access::vars;
  using accesses = meta::list<boundary_access>;
  using plain_access::rank;

  /// constant_exterior's value outside the view (unused by the other kinds).
  value_type exterior{};
  /// The first value of each variable in the bound run (bind's starts).
  std::array<index_t, vars::size> var_start{};

  explicit boundary_access(const plain_access& a, value_type outside = value_type{})
      : plain_access(a), exterior(outside) {}
  boundary_access(const boundary_access&) = default;

  // An input only: `pin(y, x) = e` would write through a remapping, which has no meaning. (The
  // return type is deduced, so the assertion is the first error, ahead of a use of the result.)
  template <class Rhs>
  auto operator=(const Rhs&) const {
    static_assert(meta::always_false<Rhs>, "loom: a boundary condition wraps an input; write to the tensor itself");
  }
  auto operator=(const boundary_access&) const {
    static_assert(meta::always_false<Kind>, "loom: a boundary condition wraps an input; write to the tensor itself");
  }
  template <class Rhs>
  auto operator+=(const Rhs&) const {
    static_assert(meta::always_false<Rhs>, "loom: a boundary condition wraps an input; write to the tensor itself");
  }

  /// The access's binding (base pointer, strides), plus the starts the true indices need.
  template <class Starts = zero_starts>
  void bind(const Starts& st = {}) {
    plain_access::bind(st);
    meta::for_each_type<vars>([&]<class V>(V*) { var_start[meta::index_of<vars, V>] = st.template start<V>(); });
    bound_base_ = this->base;
  }

  /// Every index is legal, as long as it is one: indices whose arithmetic overflows 64 bits are
  /// refused. Only a view with no elements has nothing to read (except the constant).
  template <class Ext, class Starts = zero_starts>
  void check_bounds(const Ext& ext, const Starts& st = {}) const {
    if (plain_access::never_evaluated(ext)) return;
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((this->template index_range<D>(ext, st) == plain_access::overflowed_range ? fail_overflow(D) : void()), ...);
    }(std::make_index_sequence<rank>{});
    if constexpr (!std::is_same_v<Kind, boundary::constant_exterior>)
      if (this->view.size() == 0) fail_empty();
  }

  /// The remapping reads true indices from the context, never base: nothing to fold.
  template <class Fixed, class C>
  LOOM_INLINE void rebase(const C&) {}

  template <class F>
  LOOM_INLINE void for_each_access(F&& f) {
    f(*this);
    // A run that moves the base after binding (a chunked reduction's `base += stride · first`)
    // moves the flat address only, not the per-dimension indices this node remaps.
    if (this->base != bound_base_) fail_moved();
  }
  template <class F>
  LOOM_INLINE void for_each_access(F&& f) const {
    f(*this);
  }

  /// The true index of every dimension at a point.
  template <class C>
  LOOM_INLINE std::array<index_t, rank> indices(const C& c) const {
    std::array<index_t, rank> at{};
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((at[D] = index_at<D>(c)), ...);
    }(std::make_index_sequence<rank>{});
    return at;
  }

  /// The element at true indices `at`, each remapped into the view (or the constant).
  LOOM_INLINE value_type read(const std::array<index_t, rank>& at) const {
    index_t off = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      const index_t r = boundary::remap<Kind>(at[d] - origin_of(this->view, d), this->view.extent(d));
      if constexpr (std::is_same_v<Kind, boundary::constant_exterior>) {
        if (r < 0) return exterior;
      }
      off += r * this->view.stride(d);
    }
    return this->view.data()[off];
  }

  template <class C>
  LOOM_INLINE value_type eval(const C& c) const {
    return read(indices(c));
  }

  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const {
    using B = typename VM::template batch<value_type>;
    using L = typename VM::lane;
    if constexpr (!meta::contains<vars, L>) {
      return B(eval(c));  // the lane variable is absent: one value for every lane
    } else {
      // Lane l is the point l steps of L further: each dimension moves by its coefficient of L.
      const std::array<index_t, rank> first = indices(c);
      std::array<index_t, rank> step{};
      [&]<std::size_t... D>(std::index_sequence<D...>) {
        ((step[D] = std::get<D>(this->idx).template coef<L>()), ...);
      }(std::make_index_sequence<rank>{});
      const index_t n = VM::masked ? c.active : index_t(VM::width);
      alignas(64) value_type buf[B::size] = {};  // lanes past a masked tail stay 0
      std::array<index_t, rank> at = first;
      for (index_t l = 0; l < n; ++l) {
        buf[l] = read(at);
        for (std::size_t d = 0; d < rank; ++d) at[d] += step[d];
      }
      return B::load_aligned(buf);
    }
  }

  void print(std::ostream& os) const {
    os << Kind::name << "(" << this->view.name();
    if constexpr (std::is_same_v<Kind, boundary::constant_exterior>) os << ", " << +exterior;
    os << ")(";
    [&]<std::size_t... D>(std::index_sequence<D...>) {
      ((os << (D == 0 ? "" : ", "), std::get<D>(this->idx).print(os)), ...);
    }(std::make_index_sequence<rank>{});
    os << ")";
  }

 private:
  element_type* bound_base_ = nullptr;

  template <std::size_t D, class C>
  LOOM_INLINE index_t index_at(const C& c) const {
    const auto& e = std::get<D>(this->idx);
    index_t i = e.offset();
    meta::for_each_type<typename meta::at<meta::list<Idx...>, D>::vars>([&]<class V>(V*) {
      i += e.template coef<V>() * (var_start[meta::index_of<vars, V>] + c.template coord<V>());
    });
    return i;
  }

  [[noreturn]] LOOM_COLD void fail_empty() const {
    throw bounds_error(detail::cat("loom::bounds_error: ", to_string(*this), ": '", this->view.name(),
                                   "' has no elements, so ", Kind::name, " has none to read"));
  }
  [[noreturn]] LOOM_COLD void fail_overflow(std::size_t d) const {
    throw bounds_error(detail::cat("loom::bounds_error: ", to_string(*this), ": dimension ", d, " of '", this->view.name(),
                                   "': the indices overflow 64 bits"));
  }
  [[noreturn]] LOOM_COLD void fail_moved() const {
    throw error(detail::cat("loom internal error: ", to_string(*this),
                            ": its base pointer moved after bind() (a chunked parallel reduction?); a boundary "
                            "condition needs the run's starts moved instead (bind with them); please report"));
  }
};

namespace detail {
template <class A>
struct is_boundary_access_impl : std::false_type {};
template <class K, class V, class... I>
struct is_boundary_access_impl<boundary_access<K, V, I...>> : std::true_type {};
}  // namespace detail

/// Whether A (cv-ref ignored) is a boundary_access.
template <class A>
inline constexpr bool is_boundary_access = detail::is_boundary_access_impl<std::remove_cvref_t<A>>::value;

/// Whether expression E reads any access through a boundary condition.
template <class E>
inline constexpr bool has_boundary = []<class... A>(meta::list<A...>*) {
  return (is_boundary_access<A> || ...);
}(static_cast<typename std::remove_cvref_t<E>::accesses*>(nullptr));

/// A view seen through boundary condition Kind: `b(indices...)` builds a boundary_access.
template <class Kind, class View>
struct bounded {
  using kind = Kind;
  using view_type = View;
  using value_type = typename View::value_type;
  View view;
  value_type exterior{};  // constant_exterior's value

  /// Index expressions or integers, one per dimension; integers too build a node (a read of a
  /// fixed index, remapped like any other).
  template <class... I>
  auto operator()(const I&... i) const {
    static_assert(((IndexExpr<I> || Integer<I>) && ...),
                  "loom: a boundary condition is indexed with index expressions (x - 1, 2 * y + ry) or integers");
    static_assert(sizeof...(I) == View::rank,
                  "loom: a boundary condition needs one index per tensor dimension: the count differs from the tensor's rank");
    if constexpr (sizeof...(I) == View::rank && ((IndexExpr<I> || Integer<I>) && ...)) {
      using A = access<View, decltype(as_index(i))...>;
      return boundary_access<Kind, View, decltype(as_index(i))...>(A(view, as_index(i)...), exterior);
    }
  }
};

namespace detail {
template <class T>
inline constexpr bool owns_elements = false;
template <class T, std::size_t R, class E>
inline constexpr bool owns_elements<Tensor<T, R, E>> = true;

/// The view type a tensor or view of type T (as forwarded) is bounded through.
template <class T>
using bounded_view_t = std::remove_cvref_t<decltype(std::declval<T&>().as_view())>;

template <class Kind, class T>
auto make_bounded(T&& t, typename bounded_view_t<T>::value_type outside = {}) {
  static_assert(!(owns_elements<std::remove_cvref_t<T>> && std::is_rvalue_reference_v<T&&>),
                "loom: a boundary condition holds a view of its tensor; wrap a tensor that outlives it, not a temporary");
  return bounded<Kind, bounded_view_t<T>>{t.as_view(), outside};
}
}  // namespace detail

/// Every index clamped into the tensor (Halide's repeat_edge). For a Tensor, TensorView of any
/// layout or region_view (whose indices are those of its space).
template <class T>
  requires requires(T& t) { t.as_view(); }
auto repeat_edge(T&& t) {
  return detail::make_bounded<boundary::repeat_edge>(std::forward<T>(t));
}
/// `value` wherever an index is outside the tensor (Halide's constant_exterior).
template <class T, class S>
  requires(requires(T& t) { t.as_view(); } && Scalar<S>)
auto constant_exterior(T&& t, S value) {
  using V = typename detail::bounded_view_t<T>::value_type;
  return detail::make_bounded<boundary::constant_exterior>(std::forward<T>(t), static_cast<V>(value));
}
/// Indices reflected at the edges, the edge element repeated (Halide's mirror_image).
template <class T>
  requires requires(T& t) { t.as_view(); }
auto mirror_image(T&& t) {
  return detail::make_bounded<boundary::mirror_image>(std::forward<T>(t));
}
/// Indices reflected about the edge elements, not repeating them (Halide's mirror_interior).
template <class T>
  requires requires(T& t) { t.as_view(); }
auto mirror_interior(T&& t) {
  return detail::make_bounded<boundary::mirror_interior>(std::forward<T>(t));
}

/// Anything else (a stage, an expression): loom's message rather than a list of overload
/// candidates, first among the errors (the message is a macro: a static_assert takes a literal).
#define LOOM_BOUNDARY_ARGUMENT_MESSAGE                                                                          \
  "loom: a boundary condition wraps a tensor or a view; a stage (loom::Func) has no extents of its own: give " \
  "its input the boundary condition, or compute the stage into a tensor first"
template <class T>
  requires(!requires(T& t) { t.as_view(); })
auto repeat_edge(T&&) {
  static_assert(meta::always_false<T>, LOOM_BOUNDARY_ARGUMENT_MESSAGE);
  return 0;
}
template <class T, class S>
  requires(!requires(T& t) { t.as_view(); })
auto constant_exterior(T&&, S) {
  static_assert(meta::always_false<T>, LOOM_BOUNDARY_ARGUMENT_MESSAGE);
  return 0;
}
template <class T>
  requires(!requires(T& t) { t.as_view(); })
auto mirror_image(T&&) {
  static_assert(meta::always_false<T>, LOOM_BOUNDARY_ARGUMENT_MESSAGE);
  return 0;
}
template <class T>
  requires(!requires(T& t) { t.as_view(); })
auto mirror_interior(T&&) {
  static_assert(meta::always_false<T>, LOOM_BOUNDARY_ARGUMENT_MESSAGE);
  return 0;
}

#undef LOOM_BOUNDARY_ARGUMENT_MESSAGE

// ---- the interior: the plain tree, and where it may run ----

/// The same boundary access with its indices substituted (expr/transform.hpp's substitute finds
/// it by argument-dependent lookup): a substitution keeps the condition.
template <class K, class V, class... I, class Sub>
auto substitute_indices(const boundary_access<K, V, I...>& a, const Sub& s) {
  return std::apply(
      [&](const auto&... idx) {
        using A = access<V, decltype(index_subst::apply(idx, s))...>;
        return boundary_access<K, V, decltype(index_subst::apply(idx, s))...>(A(a.view, index_subst::apply(idx, s)...),
                                                                               a.exterior);
      },
      a.idx);
}

/// The same tree with every boundary_access replaced by the plain access it derives from: what a
/// run evaluates on the interior of its box, where every index is inside the views.
template <Expr E>
auto strip_boundaries(const E& e) {
  return map_accesses(e, [](const auto& a) {
    using A = std::remove_cvref_t<decltype(a)>;
    if constexpr (is_boundary_access<A>) return typename A::plain_access(a);
    else return a;
  });
}

/// A box of variable values: Vars[k] takes the values [lo[k], hi[k]). Values are true ones, a
/// run's starts included (a run over a region starts its variables at the region's origin).
template <class Vars>
struct var_box {
  std::array<index_t, Vars::size> lo{};
  std::array<index_t, Vars::size> hi{};
  bool no_interior = false;  // some index leaves a view whatever the narrowed variables do

  /// The box a run covers: each variable's [start, start + extent).
  template <class Ext, class Starts = zero_starts>
  static var_box of_run(const Ext& ext, const Starts& st = {}) {
    var_box b;
    meta::for_each_type<Vars>([&]<class V>(V*) {
      b.lo[meta::index_of<Vars, V>] = st.template start<V>();
      b.hi[meta::index_of<Vars, V>] = st.template start<V>() + ext.template extent<V>();
    });
    return b;
  }
  template <class V>
  index_t first() const { return lo[meta::index_of<Vars, V>]; }
  template <class V>
  index_t end() const { return hi[meta::index_of<Vars, V>]; }
  bool empty() const {
    bool e = no_interior;
    for (std::size_t k = 0; k < Vars::size; ++k) e = e || lo[k] >= hi[k];
    return e;
  }
};

namespace detail {
/// The range [lo, hi] of Σ coef_V · V over the variables of index e except Skip, each V over its
/// range in `box` (an empty range never reaches here: narrowing stops at the first).
template <class Skip, class Vars, class E>
std::pair<index_t, index_t> span_without(const E& e, const var_box<Vars>& box) {
  index_t lo = e.offset(), hi = e.offset();
  meta::for_each_type<typename E::vars>([&]<class V>(V*) {
    if constexpr (!std::is_same_v<V, Skip>) {
      const index_t k = e.template coef<V>();
      const index_t a = k * box.template first<V>(), b = k * (box.template end<V>() - 1);
      lo += std::min(a, b);
      hi += std::max(a, b);
    }
  });
  return {lo, hi};
}
}  // namespace detail

/// Shrinks `box` so that boundary access `a` reads only inside its view at every point of it: the
/// ranges of the variables of Narrow (a meta::list, each one of Vars) shrink; the others keep
/// theirs. Per dimension, by interval arithmetic: a variable's range is the values for which the
/// index stays inside whatever the dimension's other variables do over their current ranges, so
/// the box is exact for an index of one variable and conservative (never too large) for several.
/// Returns false when no point is interior (then box.empty()).
template <class Narrow, class A, class Vars>
bool narrow_to_interior(const A& a, var_box<Vars>& box) {
  static_assert(is_boundary_access<A>, "loom: narrow_to_interior takes a boundary access");
  constexpr auto all_in_box = []<class... V>(meta::list<V...>*) { return (meta::contains<Vars, V> && ...); };
  static_assert(all_in_box(static_cast<typename A::vars*>(nullptr)),
                "loom: narrow_to_interior: the box must range over every variable of the access");
  static_assert(all_in_box(static_cast<Narrow*>(nullptr)),
                "loom: narrow_to_interior: every variable to narrow must be a variable of the box");
  auto no_interior = [&] {
    box.no_interior = true;
    meta::for_each_type<Narrow>([&]<class V>(V*) {
      box.hi[meta::index_of<Vars, V>] = box.lo[meta::index_of<Vars, V>];
    });
    return false;
  };
  if (box.empty()) return no_interior();
  bool ok = true;
  [&]<std::size_t... D>(std::index_sequence<D...>) {
    ([&] {
      if (!ok) return;
      using I = meta::at<typename A::index_types, D>;
      const auto& e = std::get<D>(a.idx);
      const index_t o = origin_of(a.view, D), n = a.view.extent(D);
      const index_t last = o + n - 1;
      // The whole dimension first: inside already, or the only way in is through Narrow.
      const auto [lo, hi] = detail::span_without<void>(e, box);
      if (lo >= o && hi <= last) return;
      bool narrowed = false;
      meta::for_each_type<typename I::vars>([&]<class V>(V*) {
        if constexpr (meta::contains<Narrow, V>) {
          const index_t k = e.template coef<V>();
          if (!ok || k == 0) return;
          narrowed = true;
          // o <= k·v + others <= last  <=>  k·v in [o - others_lo, last - others_hi]
          const auto [olo, ohi] = detail::span_without<V>(e, box);
          const index_t need_lo = o - olo, need_hi = last - ohi;
          index_t& vlo = box.lo[meta::index_of<Vars, V>];
          index_t& vhi = box.hi[meta::index_of<Vars, V>];
          if (need_lo > need_hi) {
            ok = false;
          } else if (k > 0) {
            vlo = std::max(vlo, detail::ceil_div(need_lo, k));
            vhi = std::min(vhi, detail::floor_div(need_hi, k) + 1);
          } else {
            vlo = std::max(vlo, detail::ceil_div(need_hi, k));
            vhi = std::min(vhi, detail::floor_div(need_lo, k) + 1);
          }
          ok = ok && vlo < vhi;
        }
      });
      if (!narrowed) ok = false;  // out of the view, and no variable of Narrow can bring it in
    }(), ...);
  }(std::make_index_sequence<A::rank>{});
  return ok ? true : no_interior();
}

/// The interior of a run of expression e: the box of the run (each variable of Vars over
/// [start, start + extent), from ext.template extent<V>() and st.template start<V>()) with the
/// variables of Narrow narrowed by every boundary access of e (narrow_to_interior). Plain accesses
/// do not narrow it: the run checks their bounds.
template <class Narrow, class Vars, Expr E, class Ext, class Starts = zero_starts>
var_box<Vars> interior_of(const E& e, const Ext& ext, const Starts& st = {}) {
  auto box = var_box<Vars>::of_run(ext, st);
  e.for_each_access([&](const auto& a) {
    if constexpr (is_boundary_access<decltype(a)>) narrow_to_interior<Narrow>(a, box);
  });
  return box;
}

}  // namespace loom
