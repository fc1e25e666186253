// SPDX-License-Identifier: MIT
// loom/lower/store_hint.hpp — prefetch_stores<C>: where a stage's consumer stores each point, as
// the stage's leaf sees it. The pipeline driver knows the consumer's output; the leaf that
// computes the stage does not, and is compiled once for every consumer view type. So the driver
// sets the running thread's hint for the stage around the stage's run, and each leaf it builds
// reads it once (lower/leaves.hpp's ahead_t): an access of the stage's own index variables into
// the consumer's memory, seen as bytes, bound and rebased like the leaf's other accesses.
#pragma once
#include <cstddef>

#include <memory>

#include "../core/region.hpp"
#include "../expr/access.hpp"

namespace loom::lower {

/// An access held as a value: access's operator= builds a definition (out(i, j) = e), so a
/// member that must be copied by assignment holds it here.
template <class A>
struct held_access {
  A a;
  explicit held_access(const A& x) : a(x) {}
  held_access(const held_access&) = default;
  held_access& operator=(const held_access& o) {
    std::destroy_at(&a);
    std::construct_at(&a, o.a);
    return *this;
  }
  ~held_access() = default;
};

template <class Lhs>
struct store_hint_of;
template <class View, class... I>
struct store_hint_of<access<View, I...>> {
  using view = region_view<unsigned char, sizeof...(I), layout_stride>;
  using type = access<view, I...>;
  /// The stage's own index variables (a left side's: plain variables) into view v.
  static type over(const view& v) { return type(v, I{}...); }
  /// Until a run binds one: no memory.
  static held_access<type> unbound() { return held_access<type>(over(view{})); }
};
/// The consumer's memory at the points of a stage whose left side is Lhs.
template <class Lhs>
using store_hint_t = typename store_hint_of<Lhs>::type;

/// The running thread's hint for the stage whose left side is Lhs (null: none; the leaf then
/// asks for its own lines, which its stores would fetch anyway).
template <class Lhs>
inline thread_local const store_hint_t<Lhs>* current_store_hint = nullptr;

/// The hint for a stage with left side Lhs whose points consumer output `out` stores at the same
/// indices: out's elements as bytes, with out's origin.
template <class Lhs, class Out>
store_hint_t<Lhs> make_store_hint(const Lhs&, const Out& out) {
  using V = typename store_hint_of<Lhs>::view;
  constexpr std::size_t R = V::rank;
  constexpr index_t size = index_t(sizeof(typename Out::element_type));
  shape_t<R> e{}, o{};
  strides_t<R> s{};
  for (std::size_t d = 0; d < R; ++d) {
    e[d] = out.extent(d);
    // Opaque: clang 14 at -O2 crashes in instruction selection on the view's overflow checks of
    // these products (an overflow-checked multiply by a shifted value).
    s[d] = detail::opaque(out.stride(d) * size);
    o[d] = origin_of(out, d);
  }
  // The bytes of out: a const output is never one (definitions write their left side).
  auto* bytes = reinterpret_cast<unsigned char*>(const_cast<std::remove_const_t<typename Out::element_type>*>(out.data()));
  const V v(typename V::base_view(bytes, dims<R>(e), s, out.name()), o);
  return store_hint_of<Lhs>::over(v);
}

/// Points the running thread's hint for stages with left side Lhs at h while it lives (h outlives it).
template <class Lhs>
class scoped_store_hint {
 public:
  explicit scoped_store_hint(const store_hint_t<Lhs>* h) : previous_(current_store_hint<Lhs>) { current_store_hint<Lhs> = h; }
  ~scoped_store_hint() { current_store_hint<Lhs> = previous_; }
  scoped_store_hint(const scoped_store_hint&) = delete;
  scoped_store_hint& operator=(const scoped_store_hint&) = delete;

 private:
  const store_hint_t<Lhs>* previous_;
};

/// The hint a leaf of a stage with left side lhs (bound, at the run's starts) uses: the thread's,
/// bound at the same starts, or else lhs's own memory.
template <class Lhs, class Starts>
held_access<store_hint_t<Lhs>> bound_store_hint(const Lhs& lhs, const Starts& starts) {
  const store_hint_t<Lhs>* h = current_store_hint<Lhs>;
  held_access<store_hint_t<Lhs>> hint(h ? *h : make_store_hint(lhs, lhs.view));
  hint.a.bind(starts);
  return hint;
}

}  // namespace loom::lower
