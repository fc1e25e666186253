// SPDX-License-Identifier: MIT
// loom/expr/ops.hpp — elementwise nodes: unary and binary operators, comparisons, select, fma
// and casts. Each operation is a tag with a scalar and a vector form; the node types are shared.
//
// Integer arithmetic (uint8 ... int64): + - * and unary - wrap around modulo 2^bits of the
// expression's value type, signed types included, in scalar and vector code alike. (C++ would
// promote uint8/int8/uint16/int16 operands to int and make signed overflow undefined; a uint8
// expression is uint8 arithmetic, as in Halide: widen first, with cast<uint16_t>, to keep
// carries.) Integer division: simd/divide.hpp (rounds toward zero; x / 0 = 0; lowest / -1 wraps).
#pragma once
#include <cmath>
#include <algorithm>
#include <type_traits>
#include "../simd/arch.hpp"

#include "../simd/convert.hpp"
#include "../simd/divide.hpp"
#include "../simd/lanes.hpp"
#include "../simd/math.hpp"
#include "node.hpp"

namespace loom {

namespace detail {
/// The unsigned type integer arithmetic on T wraps in: at least unsigned int, so that uint16
/// operands do not promote to int (whose product can overflow).
template <class T>
using wrap_t = std::make_unsigned_t<std::common_type_t<T, unsigned>>;
}  // namespace detail

namespace op {
// Binary arithmetic. Vectors wrap by themselves; scalar integers go through unsigned arithmetic.
struct add { static constexpr const char* sym = "+";
  template <class T> static LOOM_INLINE T apply(const T& a, const T& b) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(detail::wrap_t<T>(a) + detail::wrap_t<T>(b));
    else return a + b; } };
struct sub { static constexpr const char* sym = "-";
  template <class T> static LOOM_INLINE T apply(const T& a, const T& b) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(detail::wrap_t<T>(a) - detail::wrap_t<T>(b));
    else return a - b; } };
struct mul { static constexpr const char* sym = "*";
  template <class T> static LOOM_INLINE T apply(const T& a, const T& b) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(detail::wrap_t<T>(a) * detail::wrap_t<T>(b));
    else if constexpr (std::is_arithmetic_v<T> || simd::is_lanes<T>) return a * b;
    else return simd::multiply_part(a, b); } };
// Integer division by an expression: simd::divide (in float or double lanes, exact; a zero
// divisor gives 0, so the zero lanes of a masked tail cannot trap). By a scalar: binary below.
struct div { static constexpr const char* sym = "/";
  template <class T> static LOOM_INLINE T apply(const T& a, const T& b) {
    if constexpr (std::is_integral_v<T>) return simd::divide_scalar(a, b);
    else if constexpr (std::is_arithmetic_v<T>) return a / b;
    else if constexpr (std::is_floating_point_v<typename T::value_type>) return a / b;
    else return simd::divide(a, b);
  } };
// Binary functions (printed as calls). min/max return a unless b is strictly smaller/larger, so a
// NaN b is skipped and a NaN a kept, in scalar and vector code alike: x86's minps/maxps return
// their second operand unless the first wins, hence (b, a). maximum/minimum reductions fold from
// the identity with them, so they skip NaN elements whatever the schedule.
// Integer lanes of every width use the target's min/max instructions (pminub ... vpmaxsq).
struct min { static constexpr const char* fn = "min";
  template <class T> static LOOM_INLINE T apply(const T& a, const T& b) {
    if constexpr (std::is_arithmetic_v<T>) return b < a ? b : a; else return simd::min(b, a); } };
struct max { static constexpr const char* fn = "max";
  template <class T> static LOOM_INLINE T apply(const T& a, const T& b) {
    if constexpr (std::is_arithmetic_v<T>) return a < b ? b : a; else return simd::max(b, a); } };

// Comparisons.
struct lt { static constexpr const char* sym = "<";  template <class T> static LOOM_INLINE auto apply(const T& a, const T& b) { return a < b; } };
struct le { static constexpr const char* sym = "<="; template <class T> static LOOM_INLINE auto apply(const T& a, const T& b) { return a <= b; } };
struct gt { static constexpr const char* sym = ">";  template <class T> static LOOM_INLINE auto apply(const T& a, const T& b) { return a > b; } };
struct ge { static constexpr const char* sym = ">="; template <class T> static LOOM_INLINE auto apply(const T& a, const T& b) { return a >= b; } };
struct eq { static constexpr const char* sym = "=="; template <class T> static LOOM_INLINE auto apply(const T& a, const T& b) { return a == b; } };
// xsimd 8.1's AVX-512 `!=` on floats is the ordered compare (false when either side is NaN); IEEE
// says NaN != anything is true, as in scalar code, so vectors use "not equal" spelled ~(a == b).
struct ne { static constexpr const char* sym = "!="; template <class T> static LOOM_INLINE auto apply(const T& a, const T& b) {
    if constexpr (std::is_arithmetic_v<T>) return a != b; else return ~(a == b); } };

// Transcendental functions are evaluated on a vector even in scalar code (one broadcast lane), so
// every schedule — vectorized, tail, scalar — computes the same function.
template <class T, class F>
LOOM_INLINE T via_vector(T x, F f) {
  return f(xsimd::batch<T, simd::native_arch>(x)).get(0);
}

struct neg { static constexpr const char* fn = "-";
  template <class T> static LOOM_INLINE T apply(const T& a) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(detail::wrap_t<T>(0) - detail::wrap_t<T>(a));
    else return -a; } };
struct abs { static constexpr const char* fn = "abs";
  template <class T> static LOOM_INLINE T apply(const T& a) {
    if constexpr (std::is_unsigned_v<T>) return a;
    else if constexpr (std::is_arithmetic_v<T>) return a < T(0) ? neg::apply(a) : a;  // abs(lowest) wraps to lowest
    else if constexpr (std::is_unsigned_v<typename T::value_type>) return a;
    else return simd::abs(a); } };
// On simd::lanes (several registers), the functions below go register by register (per_part).
struct sqrt { static constexpr const char* fn = "sqrt";
  template <class T> static LOOM_INLINE T apply(const T& a) {
    if constexpr (std::is_arithmetic_v<T>) return std::sqrt(a); else return simd::sqrt(a); } };
struct exp { static constexpr const char* fn = "exp";
  template <class B> static LOOM_INLINE B vec(const B& a) {
    if constexpr (std::is_same_v<typename B::value_type, float>) return simd::fast_exp(a); else return xsimd::exp(a); }
  template <class T> static LOOM_INLINE T apply(const T& a) {
    if constexpr (std::is_arithmetic_v<T>) return via_vector(a, [](auto b) { return vec(b); });
    else if constexpr (simd::is_lanes<T>) return simd::per_part([](const auto& p) { return vec(p); }, a);
    else return vec(a); } };
struct log { static constexpr const char* fn = "log";
  template <class T> static LOOM_INLINE T apply(const T& a) {
    if constexpr (std::is_arithmetic_v<T>) return via_vector(a, [](auto b) { return xsimd::log(b); });
    else if constexpr (simd::is_lanes<T>) return simd::per_part([](const auto& p) { return xsimd::log(p); }, a);
    else return xsimd::log(a); } };
struct tanh { static constexpr const char* fn = "tanh";
  template <class T> static LOOM_INLINE T apply(const T& a) {
    if constexpr (std::is_arithmetic_v<T>) return via_vector(a, [](auto b) { return xsimd::tanh(b); });
    else if constexpr (simd::is_lanes<T>) return simd::per_part([](const auto& p) { return xsimd::tanh(p); }, a);
    else return xsimd::tanh(a); } };
struct sigmoid { static constexpr const char* fn = "sigmoid";
  template <class B> static LOOM_INLINE B vec(const B& a) {
    if constexpr (std::is_same_v<typename B::value_type, float>) return simd::fast_sigmoid(a);
    else return B(1) / (B(1) + xsimd::exp(-a)); }
  template <class T> static LOOM_INLINE T apply(const T& a) {
    if constexpr (std::is_arithmetic_v<T>) return via_vector(a, [](auto b) { return vec(b); });
    else if constexpr (simd::is_lanes<T>) return simd::per_part([](const auto& p) { return vec(p); }, a);
    else return vec(a); } };
// a · sigmoid(x) evaluated as a / (1 + e^-x): what `a * sigmoid(x)` computes (see binary below).
struct times_sigmoid {
  template <class B> static LOOM_INLINE B vec(const B& a, const B& x) {
    if constexpr (std::is_same_v<typename B::value_type, float>) return simd::times_sigmoid(a, x);
    else return a / (B(1) + xsimd::exp(-x)); }
  template <class T> static LOOM_INLINE T apply(const T& a, const T& x) {
    if constexpr (std::is_arithmetic_v<T>) return via_vector(a, [x](auto b) { return vec(b, decltype(b)(x)); });
    else if constexpr (simd::is_lanes<T>) return simd::per_part([](const auto& p, const auto& q) { return vec(p, q); }, a, x);
    else return vec(a, x); } };
}  // namespace op

template <class Op, Expr A>
struct unary : expr_node {
  using value_type = value_t<A>;
  using vars = typename A::vars;
  using reductions = typename A::reductions;
  using accesses = typename A::accesses;
  A a;
  explicit unary(const A& a_) : a(a_) {}
  template <class C>
  LOOM_INLINE value_type eval(const C& c) const { return Op::apply(a.eval(c)); }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const { return Op::apply(a.template eval_v<VM>(c)); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) { a.for_each_access(f); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) const { a.for_each_access(f); }
  void print(std::ostream& os) const {
    os << Op::fn << (std::is_same_v<Op, op::neg> ? "" : "(");
    a.print(os);
    if (!std::is_same_v<Op, op::neg>) os << ")";
  }
};

template <class E>
inline constexpr bool is_sigmoid_node = false;
template <class X>
inline constexpr bool is_sigmoid_node<unary<op::sigmoid, X>> = true;

namespace detail {
/// What a binary node keeps besides its operands: for an integer division by a scalar (`e / 3u`,
/// `e / d`), the divisor's magic number, computed once when the node is built (or rebuilt), so
/// that vectors divide by a multiplication (simd/divide.hpp); nothing otherwise.
template <class Op, class T, class B>
struct binary_extra {
  constexpr explicit binary_extra(const B&) {}
};
template <class T>
  requires std::is_integral_v<T>
struct binary_extra<op::div, T, constant<T>> {
  simd::divisor<T> divisor;
  constexpr explicit binary_extra(const constant<T>& d) : divisor(d.value) {}
};
}  // namespace detail

template <class Op, Expr A, Expr B>
struct binary : expr_node {
  static_assert(std::is_same_v<value_t<A>, value_t<B>>,
                "loom: the two operands have different element types; convert one with loom::cast<T>(e)");
  using value_type = value_t<A>;
  using vars = meta::unique<meta::concat<typename A::vars, typename B::vars>>;
  using reductions = meta::concat<typename A::reductions, typename B::reductions>;
  using accesses = meta::concat<typename A::accesses, typename B::accesses>;
  A a;
  B b;
  [[no_unique_address]] detail::binary_extra<Op, value_type, B> extra;
  binary(const A& a_, const B& b_) : a(a_), b(b_), extra(b_) {}
  static constexpr bool by_divisor = std::is_same_v<Op, op::div> && std::is_integral_v<value_type> &&
                                     std::is_same_v<B, constant<value_type>>;
  // A product with a sigmoid is one division, a / (1 + e^-x), instead of a reciprocal and a
  // multiply: one rounding fewer, and on AVX2 the division the sigmoid needs anyway.
  static constexpr bool float_product = std::is_same_v<Op, op::mul> && std::is_floating_point_v<value_type>;
  static constexpr bool sigmoid_right = float_product && is_sigmoid_node<B>;
  static constexpr bool sigmoid_left = float_product && !sigmoid_right && is_sigmoid_node<A>;
  // Spelled out for eval and eval_v, not one helper taking a generic lambda: the lambda's
  // instantiations (per node, per evaluation mode, per operand) cost compile time
  // (docs/tuning.md#compile-time).
  template <class C>
  LOOM_INLINE value_type eval(const C& c) const {
    if constexpr (sigmoid_right) return op::times_sigmoid::apply(a.eval(c), b.a.eval(c));
    else if constexpr (sigmoid_left) return op::times_sigmoid::apply(b.eval(c), a.a.eval(c));
    else if constexpr (by_divisor) return extra.divisor.divide(a.eval(c));
    else return Op::apply(a.eval(c), b.eval(c));
  }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const {
    if constexpr (by_divisor) return simd::divide(a.template eval_v<VM>(c), extra.divisor);
    else if constexpr (sigmoid_right) return op::times_sigmoid::apply(a.template eval_v<VM>(c), b.a.template eval_v<VM>(c));
    else if constexpr (sigmoid_left) return op::times_sigmoid::apply(b.template eval_v<VM>(c), a.a.template eval_v<VM>(c));
    else return Op::apply(a.template eval_v<VM>(c), b.template eval_v<VM>(c));
  }
  template <class F> LOOM_INLINE void for_each_access(F&& f) { a.for_each_access(f); b.for_each_access(f); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) const { a.for_each_access(f); b.for_each_access(f); }
  void print(std::ostream& os) const {
    if constexpr (requires { Op::sym; }) {
      os << "(";
      a.print(os);
      os << " " << Op::sym << " ";
      b.print(os);
      os << ")";
    } else {
      os << Op::fn << "(";
      a.print(os);
      os << ", ";
      b.print(os);
      os << ")";
    }
  }
};

/// A comparison: bool as a scalar, a lane mask as a vector.
template <class Op, Expr A, Expr B>
struct compare : expr_node {
  static_assert(std::is_same_v<value_t<A>, value_t<B>>,
                "loom: compared operands have different element types; convert one with loom::cast<T>(e)");
  using value_type = bool;
  using operand_type = value_t<A>;
  using vars = meta::unique<meta::concat<typename A::vars, typename B::vars>>;
  using reductions = meta::concat<typename A::reductions, typename B::reductions>;
  using accesses = meta::concat<typename A::accesses, typename B::accesses>;
  A a;
  B b;
  compare(const A& a_, const B& b_) : a(a_), b(b_) {}
  template <class C>
  LOOM_INLINE bool eval(const C& c) const { return Op::apply(a.eval(c), b.eval(c)); }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const { return Op::apply(a.template eval_v<VM>(c), b.template eval_v<VM>(c)); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) { a.for_each_access(f); b.for_each_access(f); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) const { a.for_each_access(f); b.for_each_access(f); }
  void print(std::ostream& os) const {
    os << "(";
    a.print(os);
    os << " " << Op::sym << " ";
    b.print(os);
    os << ")";
  }
};

template <Expr Cond, Expr A, Expr B>
struct select_node : expr_node {
  static_assert(std::is_same_v<value_t<Cond>, bool>, "loom::select(cond, a, b): cond must be a comparison");
  static_assert(std::is_same_v<value_t<A>, value_t<B>>,
                "loom::select(cond, a, b): a and b have different element types; convert one with loom::cast<T>(e)");
  using value_type = value_t<A>;
  using vars = meta::unique<meta::concat<typename Cond::vars, typename A::vars, typename B::vars>>;
  using reductions = meta::concat<typename Cond::reductions, typename A::reductions, typename B::reductions>;
  using accesses = meta::concat<typename Cond::accesses, typename A::accesses, typename B::accesses>;
  Cond cond;
  A a;
  B b;
  select_node(const Cond& c_, const A& a_, const B& b_) : cond(c_), a(a_), b(b_) {}
  template <class C>
  LOOM_INLINE value_type eval(const C& c) const { return cond.eval(c) ? a.eval(c) : b.eval(c); }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const {
    // A comparison of another element type (of any size) gives its lanes' mask: converted.
    return simd::select(simd::mask_cast<value_type>(cond.template eval_v<VM>(c)), a.template eval_v<VM>(c),
                        b.template eval_v<VM>(c));
  }
  template <class F> LOOM_INLINE void for_each_access(F&& f) { cond.for_each_access(f); a.for_each_access(f); b.for_each_access(f); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) const { cond.for_each_access(f); a.for_each_access(f); b.for_each_access(f); }
  void print(std::ostream& os) const {
    os << "select(";
    cond.print(os);
    os << ", ";
    a.print(os);
    os << ", ";
    b.print(os);
    os << ")";
  }
};

template <Expr A, Expr B, Expr Cc>
struct fma_node : expr_node {
  static_assert(std::is_same_v<value_t<A>, value_t<B>> && std::is_same_v<value_t<A>, value_t<Cc>>,
                "loom::fma(a, b, c): operands have different element types; convert with loom::cast<T>(e)");
  using value_type = value_t<A>;
  using vars = meta::unique<meta::concat<typename A::vars, typename B::vars, typename Cc::vars>>;
  using reductions = meta::concat<typename A::reductions, typename B::reductions, typename Cc::reductions>;
  using accesses = meta::concat<typename A::accesses, typename B::accesses, typename Cc::accesses>;
  A a;
  B b;
  Cc c3;
  fma_node(const A& a_, const B& b_, const Cc& c_) : a(a_), b(b_), c3(c_) {}
  template <class C>
  LOOM_INLINE value_type eval(const C& c) const {
    if constexpr (std::is_floating_point_v<value_type>) return std::fma(a.eval(c), b.eval(c), c3.eval(c));
    else return op::add::apply(op::mul::apply(a.eval(c), b.eval(c)), c3.eval(c));
  }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const {
    return simd::fma(a.template eval_v<VM>(c), b.template eval_v<VM>(c), c3.template eval_v<VM>(c));
  }
  template <class F> LOOM_INLINE void for_each_access(F&& f) { a.for_each_access(f); b.for_each_access(f); c3.for_each_access(f); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) const { a.for_each_access(f); b.for_each_access(f); c3.for_each_access(f); }
  void print(std::ostream& os) const {
    os << "fma(";
    a.print(os);
    os << ", ";
    b.print(os);
    os << ", ";
    c3.print(os);
    os << ")";
  }
};

/// The target of saturating_cast<T>: cast_node<saturating<T>, A> clamps, cast_node<T, A> does not
/// (one node type, so every tree walker that rebuilds a cast keeps the difference).
template <class T>
struct saturating {
  using type = T;
};

namespace detail {
template <class To>
struct cast_target {
  using type = To;
  static constexpr bool saturates = false;
};
template <class T>
struct cast_target<saturating<T>> {
  using type = T;
  static constexpr bool saturates = true;
};
template <class T>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, std::int8_t>) return "int8";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, std::int16_t>) return "int16";
  else if constexpr (std::is_same_v<T, std::uint16_t>) return "uint16";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  else return "T";
}
}  // namespace detail

/// cast<T>(e) (To = T): static_cast lane by lane; saturating_cast<T>(e) (To = saturating<T>): the
/// value clamped to T's range first. Semantics and instructions: simd/convert.hpp. A vector of W
/// lanes converts to W lanes of T, in as many registers as that takes.
template <class To, Expr A>
struct cast_node : expr_node {
  using value_type = typename detail::cast_target<To>::type;
  static constexpr bool saturates = detail::cast_target<To>::saturates;
  using vars = typename A::vars;
  using reductions = typename A::reductions;
  using accesses = typename A::accesses;
  A a;
  explicit cast_node(const A& a_) : a(a_) {}
  template <class C>
  LOOM_INLINE value_type eval(const C& c) const {
    if constexpr (saturates) return simd::saturate_scalar<value_type>(a.eval(c));
    else return static_cast<value_type>(a.eval(c));
  }
  template <class VM, class C>
  LOOM_INLINE auto eval_v(const C& c) const {
    if constexpr (std::is_same_v<value_type, value_t<A>>) return a.template eval_v<VM>(c);
    else if constexpr (saturates) return simd::saturate<value_type>(a.template eval_v<VM>(c));
    else return simd::convert<value_type>(a.template eval_v<VM>(c));
  }
  template <class F> LOOM_INLINE void for_each_access(F&& f) { a.for_each_access(f); }
  template <class F> LOOM_INLINE void for_each_access(F&& f) const { a.for_each_access(f); }
  void print(std::ostream& os) const {
    os << (saturates ? "saturating_cast<" : "cast<") << detail::type_name<value_type>() << ">(";
    a.print(os);
    os << ")";
  }
};

// ---- Operators and functions. Scalars are lifted to the other operand's element type. ----

template <class A, class B>
concept ValueOperands = (Expr<A> && (Expr<B> || Scalar<B>)) || (Scalar<A> && Expr<B>);

namespace detail {
template <class A, class B>
using operand_value_t = std::conditional_t<Expr<A>, value_t<std::conditional_t<Expr<A>, A, B>>,
                                           value_t<std::conditional_t<Expr<B>, B, A>>>;
template <class Op, class A, class B>
constexpr auto make_binary(const A& a, const B& b) {
  using T = operand_value_t<A, B>;
  // Straight into the node: every copy of an access is a copy of its view (~100 bytes), which a
  // small GEMM in index notation pays per call (docs/tuning.md#small-gemm).
  return binary<Op, lifted_t<T, A>, lifted_t<T, B>>(lift<T>(a), lift<T>(b));
}
template <class Op, class A, class B>
constexpr auto make_compare(const A& a, const B& b) {
  using T = operand_value_t<A, B>;
  return compare<Op, lifted_t<T, A>, lifted_t<T, B>>(lift<T>(a), lift<T>(b));
}
}  // namespace detail

template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator+(const A& a, const B& b) { return detail::make_binary<op::add>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator-(const A& a, const B& b) { return detail::make_binary<op::sub>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator*(const A& a, const B& b) { return detail::make_binary<op::mul>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator/(const A& a, const B& b) { return detail::make_binary<op::div>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto min(const A& a, const B& b) { return detail::make_binary<op::min>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto max(const A& a, const B& b) { return detail::make_binary<op::max>(a, b); }

template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator<(const A& a, const B& b) { return detail::make_compare<op::lt>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator<=(const A& a, const B& b) { return detail::make_compare<op::le>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator>(const A& a, const B& b) { return detail::make_compare<op::gt>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator>=(const A& a, const B& b) { return detail::make_compare<op::ge>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator==(const A& a, const B& b) { return detail::make_compare<op::eq>(a, b); }
template <class A, class B> requires ValueOperands<A, B>
constexpr auto operator!=(const A& a, const B& b) { return detail::make_compare<op::ne>(a, b); }

template <Expr A> constexpr auto operator-(const A& a) { return unary<op::neg, A>(a); }
template <Expr A> constexpr auto abs(const A& a) { return unary<op::abs, A>(a); }
template <Expr A> constexpr auto sqrt(const A& a) { return unary<op::sqrt, A>(a); }
template <Expr A> constexpr auto exp(const A& a) { return unary<op::exp, A>(a); }
template <Expr A> constexpr auto log(const A& a) { return unary<op::log, A>(a); }
template <Expr A> constexpr auto tanh(const A& a) { return unary<op::tanh, A>(a); }
template <Expr A> constexpr auto sigmoid(const A& a) { return unary<op::sigmoid, A>(a); }

/// select(cond, a, b): a where cond holds, else b (both evaluated; no branch).
template <Expr Cond, class A, class B>
  requires(Expr<A> || Expr<B>)
constexpr auto select(const Cond& c, const A& a, const B& b) {
  using T = detail::operand_value_t<A, B>;
  return select_node<Cond, detail::lifted_t<T, A>, detail::lifted_t<T, B>>(c, detail::lift<T>(a), detail::lift<T>(b));
}

/// fma(a, b, c) = a * b + c with one rounding.
template <class A, class B, class Cc>
  requires(Expr<A> || Expr<B> || Expr<Cc>)
constexpr auto fma(const A& a, const B& b, const Cc& c) {
  using T = std::conditional_t<Expr<A>, A, std::conditional_t<Expr<B>, B, Cc>>;
  using V = value_t<T>;
  return fma_node<detail::lifted_t<V, A>, detail::lifted_t<V, B>, detail::lifted_t<V, Cc>>(
      detail::lift<V>(a), detail::lift<V>(b), detail::lift<V>(c));
}

/// cast<T>(e): converts the element type, as static_cast (integers wrap; floating point to
/// integer truncates toward zero, undefined where the result does not fit T, as in C++; use
/// saturating_cast for values that may not fit).
template <class To, Expr A>
constexpr auto cast(const A& a) {
  static_assert(std::is_arithmetic_v<To> && !std::is_same_v<To, bool>, "loom::cast<T>: T is an arithmetic type");
  return cast_node<To, A>(a);
}

/// saturating_cast<T>(e): e clamped to T's range, then converted (Halide's saturating_cast): 300
/// gives 255 as uint8, -1 gives 0; floating-point NaN gives 0 as an integer, stays NaN as float.
template <class To, Expr A>
constexpr auto saturating_cast(const A& a) {
  static_assert(std::is_arithmetic_v<To> && !std::is_same_v<To, bool>, "loom::saturating_cast<T>: T is an arithmetic type");
  return cast_node<saturating<To>, A>(a);
}

}  // namespace loom
