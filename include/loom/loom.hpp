// SPDX-License-Identifier: MIT
// loom/loom.hpp — everything a user needs. Read top to bottom, it is the architecture:
#pragma once

#include "version.hpp"  // LOOM_VERSION_MAJOR/MINOR/PATCH, LOOM_VERSION

#include "core/config.hpp"    // index_t (64-bit), attributes
#include "core/error.hpp"     // loom::error, bounds_error, shape_error, alias_error
#include "core/extents.hpp"   // static/dynamic extents
#include "core/tensor.hpp"    // Tensor (owning), TensorView (any strides), view()
#include "core/threads.hpp"   // set_num_threads, get_num_threads, thread_limit
#include "core/scratch.hpp"   // release_scratch, scratch_bytes: the per-thread work buffers

#include "expr/var.hpp"         // Var<"name">, loom::vars::{i, j, k, ...}, outer/inner/fused
#include "expr/index.hpp"       // affine index expressions: x + 1, 2 * y - 1
#include "expr/ops.hpp"         // + - * /, comparisons, select, min/max/abs/sqrt/exp/log/tanh/sigmoid, fma, cast, saturating_cast
#include "expr/reduce.hpp"      // sum, product, maximum, minimum
#include "expr/boundary.hpp"    // repeat_edge, constant_exterior, mirror_image, mirror_interior
#include "expr/definition.hpp"  // out(i, j) = e, out(i, j) += e

#include "schedule/directives.hpp"  // split, tile, reorder, fuse, unroll, vectorize, parallel, tails, prefetch
#include "schedule/specialize.hpp"  // specialize<Condition, Then, Else>: one of two schedules per run

// The engines' policies before the run path: their static_asserts are then reported a short
// include chain from the user's file (within the first 10 lines of g++'s output).
#include "kernels/gemm/policy.hpp"  // loom::gemm_policy
#include "kernels/conv/policy.hpp"  // loom::conv_policy
#include "run.hpp"  // loom::run, loom::print_loop_nest

#include "kernels/gemm.hpp"  // loom::gemm(C, A, B, alpha, beta): the packed, blocked GEMM engine
#include "kernels/conv.hpp"  // loom::conv2d(out, in, w, params): direct, grouped and depthwise convolution (NHWC)
