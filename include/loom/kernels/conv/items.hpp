// SPDX-License-Identifier: MIT
// loom/kernels/conv/items.hpp — independent work items run on loom's team (core/threads.hpp), the
// one way the convolution kernels and their packing go parallel.
#pragma once
#include "../../core/config.hpp"
#include "../../core/threads.hpp"

namespace loom::conv_detail {

/// Runs `items` independent work items body(t) on loom's team (one thread: no parallel region);
/// on this thread alone where the whole is too little work to wake a team for.
template <class F>
void for_items(index_t items, const F& body, bool worth_a_team = true) {
  const loom::detail::team_claim claim(worth_a_team ? items : 1);
  const int team = claim.size();
  if (team > 1) {
    LOOM_PRAGMA(omp parallel for num_threads(team) schedule(static))
    for (index_t t = 0; t < items; ++t) body(t);
  } else {
    for (index_t t = 0; t < items; ++t) body(t);
  }
}

}  // namespace loom::conv_detail
