// SPDX-License-Identifier: MIT
// loom/expr/reduce.hpp — reductions over one or several reduction variables: sum, product,
// maximum, minimum. A definition's single reduction becomes loops of its nest (schedulable);
// nested or several reductions are evaluated in place by their own loops.
#pragma once
#include <limits>
#include <tuple>
#include <ostream>
#include "../simd/arch.hpp"
#include "../simd/fma.hpp"

#include "node.hpp"
#include "ops.hpp"
#include "var.hpp"

namespace loom {

namespace red {
// Integer sums and products wrap in the value type, as op::add and op::mul do (ops.hpp).
struct sum {
  static constexpr const char* name = "sum";
  template <class T> static constexpr T identity() { return T(0); }
  template <class T> static LOOM_INLINE T combine(const T& a, const T& b) { return op::add::apply(a, b); }
};
struct product {
  static constexpr const char* name = "product";
  template <class T> static constexpr T identity() { return T(1); }
  template <class T> static LOOM_INLINE T combine(const T& a, const T& b) { return op::mul::apply(a, b); }
};
struct maximum {
  static constexpr const char* name = "maximum";
  template <class T> static constexpr T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  template <class T> static LOOM_INLINE T combine(const T& a, const T& b) { return op::max::apply(a, b); }
};
struct minimum {
  static constexpr const char* name = "minimum";
  template <class T> static constexpr T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  template <class T> static LOOM_INLINE T combine(const T& a, const T& b) { return op::min::apply(a, b); }
};

template <class E>
inline constexpr bool is_product = false;
template <class A, class B>
inline constexpr bool is_product<binary<op::mul, A, B>> = true;

/// acc ⊕ body on vectors. A sum of a product accumulates with one fused multiply-add: one rounding,
/// and the hardware's instruction whatever the compiler's contraction settings.
template <class Op, class VM, class Acc, class Body, class C>
LOOM_INLINE Acc accumulate_v(const Acc& acc, const Body& body, const C& c) {
  if constexpr (std::is_same_v<Op, sum> && is_product<Body> && std::is_floating_point_v<typename Acc::value_type>)
    return simd::fma(body.a.template eval_v<VM>(c), body.b.template eval_v<VM>(c), acc);
  else
    return Op::combine(acc, body.template eval_v<VM>(c));
}

/// Combines the lanes of a batch in lane order (deterministic for a given width).
template <class Op, class B>
LOOM_INLINE typename B::value_type horizontal(const B& v) {
  using T = typename B::value_type;
  alignas(64) T buf[B::size];
  v.store_aligned(buf);
  T acc = buf[0];
  for (std::size_t l = 1; l < B::size; ++l) acc = Op::template combine<T>(acc, buf[l]);
  return acc;
}
}  // namespace red

template <class Op, class RVars, Expr E>
struct reduce_node;

template <class Op, class... RV, Expr E>
struct reduce_node<Op, meta::list<RV...>, E> : expr_node {
  static_assert((is_var<RV> && ...), "loom: reduce over variables only (e.g. sum(k, e), sum(ry, rx, e))");
  using value_type = value_t<E>;
  using rvars = meta::list<RV...>;
  using op_type = Op;
  using body_type = E;
  using vars = meta::unique<meta::concat<typename E::vars, rvars>>;
  using reductions = meta::concat<meta::list<reduce_node>, typename E::reductions>;
  using accesses = typename E::accesses;
  E body;

  explicit reduce_node(const E& e) : body(e) {}

  // A context that carries the reduction's value (the epilogue of a scheduled reduction) hands
  // it out; otherwise the reduction runs its own loops here.
  template <class C>
  LOOM_INLINE value_type eval(const C& c) const {
    if constexpr (C::has_reduction_value) return c.reduction_value();
    else {
      value_type acc = Op::template identity<value_type>();
      C cc = c;
      loop<0>(cc, [&](const C& p) { acc = Op::combine(acc, body.eval(p)); });
      return acc;
    }
  }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const {
    if constexpr (C::has_reduction_value) return c.reduction_value();
    else {
      using B = typename VM::template batch<value_type>;
      B acc(Op::template identity<value_type>());
      C cc = c;
      loop<0>(cc, [&](const C& p) { acc = red::accumulate_v<Op, VM>(acc, body, p); });
      return acc;
    }
  }
  template <class F> LOOM_INLINE void for_each_access(F&& f) { body.for_each_access(f); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) const { body.for_each_access(f); }
  void print(std::ostream& os) const {
    os << Op::name << "(";
    ((os << RV::name() << ", "), ...);
    body.print(os);
    os << ")";
  }

 private:
  template <std::size_t K, class C, class F>
  LOOM_INLINE static void loop(C& c, F&& f) {
    if constexpr (K == sizeof...(RV)) {
      f(c);
    } else {
      using V = meta::at<rvars, K>;
      const index_t n = c.template extent<V>();
      for (index_t t = 0; t < n; ++t) {
        c.template set<V>(t);
        loop<K + 1>(c, f);
      }
    }
  }
};

namespace detail {
template <class Op, class... Args>
constexpr auto make_reduce(const Args&... args) {
  constexpr std::size_t N = sizeof...(Args);
  static_assert(N >= 2, "loom: a reduction takes its variables then the expression: sum(k, e), sum(ry, rx, e)");
  auto t = std::tie(args...);
  using E = std::remove_cvref_t<std::tuple_element_t<N - 1, std::tuple<Args...>>>;
  static_assert(Expr<E>, "loom: the last argument of a reduction is the expression to reduce");
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    using RV = meta::list<std::remove_cvref_t<std::tuple_element_t<I, std::tuple<Args...>>>...>;
    return reduce_node<Op, RV, E>(std::get<N - 1>(t));
  }(std::make_index_sequence<N - 1>{});
}
}  // namespace detail

template <class A, class... Rest>
  requires(is_var<A>)
constexpr auto sum(const A& a, const Rest&... rest) { return detail::make_reduce<red::sum>(a, rest...); }
template <class A, class... Rest>
  requires(is_var<A>)
constexpr auto product(const A& a, const Rest&... rest) { return detail::make_reduce<red::product>(a, rest...); }
template <class A, class... Rest>
  requires(is_var<A>)
constexpr auto maximum(const A& a, const Rest&... rest) { return detail::make_reduce<red::maximum>(a, rest...); }
template <class A, class... Rest>
  requires(is_var<A>)
constexpr auto minimum(const A& a, const Rest&... rest) { return detail::make_reduce<red::minimum>(a, rest...); }

template <class T>
inline constexpr bool is_reduce = false;
template <class Op, class RV, class E>
inline constexpr bool is_reduce<reduce_node<Op, RV, E>> = true;

}  // namespace loom
