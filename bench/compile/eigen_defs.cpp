// bench/compile/eigen_defs.cpp — compile-time probe (bench/compile_time.sh): the Eigen 3.4
// equivalent of loom_defs.cpp, LOOM_DEFS (1 to 10, default 10) of the same operations on row-major
// arrays taken by reference, one array expression each.
#include <Eigen/Core>

#ifndef LOOM_DEFS
#define LOOM_DEFS 10
#endif

using V1 = Eigen::ArrayXf;
using V2 = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void axpb(V1& out, const V1& x, float a, float b) { out = a * x + b; }
#if LOOM_DEFS >= 2
void row_sum(V1& out, const V2& X) { out = X.rowwise().sum(); }
#endif
#if LOOM_DEFS >= 3
void col_sum(V1& out, const V2& X) { out = X.colwise().sum().transpose(); }
#endif
#if LOOM_DEFS >= 4
void transpose(V2& out, const V2& X) { out = X.transpose(); }
#endif
#if LOOM_DEFS >= 5
void select_pos(V2& out, const V2& X, const V2& Y, float s) { out = (X > 0.f).select(X, s * Y); }
#endif
#if LOOM_DEFS >= 6
void relu(V1& out, const V1& x) { out = x.max(0.f); }
#endif
#if LOOM_DEFS >= 7
void exp_mul(V1& out, const V1& x, const V1& y) { out = x.exp() * y; }
#endif
#if LOOM_DEFS >= 8
void add_bias(V2& out, const V2& X, const V1& bias) { out = X.rowwise() + bias.transpose(); }
#endif
#if LOOM_DEFS >= 9
void row_max(V1& out, const V2& X) { out = X.rowwise().maxCoeff(); }
#endif
#if LOOM_DEFS >= 10
void mul_add(V2& out, const V2& X, const V2& Y, float c) { out = X * Y + c; }
#endif
