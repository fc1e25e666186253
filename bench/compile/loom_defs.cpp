// bench/compile/loom_defs.cpp — compile-time probe (bench/compile_time.sh): LOOM_DEFS (1 to 10,
// default 10) small definitions, each in its own function over tensors taken by reference and run
// once with the default schedule: elementwise maps, a row sum, a column sum, a transpose, a select,
// a broadcast and a row maximum. eigen_defs.cpp holds the same operations in Eigen 3.4.
#include <loom/loom.hpp>

#ifndef LOOM_DEFS
#define LOOM_DEFS 10
#endif

using namespace loom::vars;
using V1 = loom::Tensor<float, 1>;
using V2 = loom::Tensor<float, 2>;

void axpb(V1& out, const V1& x, float a, float b) { loom::run(out(i) = a * x(i) + b); }
#if LOOM_DEFS >= 2
void row_sum(V1& out, const V2& X) { loom::run(out(i) = sum(j, X(i, j))); }
#endif
#if LOOM_DEFS >= 3
void col_sum(V1& out, const V2& X) { loom::run(out(j) = sum(i, X(i, j))); }
#endif
#if LOOM_DEFS >= 4
void transpose(V2& out, const V2& X) { loom::run(out(j, i) = X(i, j)); }
#endif
#if LOOM_DEFS >= 5
void select_pos(V2& out, const V2& X, const V2& Y, float s) { loom::run(out(i, j) = select(X(i, j) > 0.f, X(i, j), s * Y(i, j))); }
#endif
#if LOOM_DEFS >= 6
void relu(V1& out, const V1& x) { loom::run(out(i) = max(x(i), 0.f)); }
#endif
#if LOOM_DEFS >= 7
void exp_mul(V1& out, const V1& x, const V1& y) { loom::run(out(i) = exp(x(i)) * y(i)); }
#endif
#if LOOM_DEFS >= 8
void add_bias(V2& out, const V2& X, const V1& bias) { loom::run(out(i, j) = X(i, j) + bias(j)); }
#endif
#if LOOM_DEFS >= 9
void row_max(V1& out, const V2& X) { loom::run(out(i) = maximum(j, X(i, j))); }
#endif
#if LOOM_DEFS >= 10
void mul_add(V2& out, const V2& X, const V2& Y, float c) { loom::run(out(i, j) = X(i, j) * Y(i, j) + c); }
#endif
