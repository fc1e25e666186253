// SPDX-License-Identifier: MIT
// loom/pipeline/arena.hpp — the buffer planner of pipelines: places buffers with known live
// ranges at offsets inside one arena (greedy by size), and picks the order of a stage graph whose
// arena is smallest. Plain run-time code on sizes and step numbers; it touches no memory.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "../core/config.hpp"  // LOOM_COLD
#include "../core/error.hpp"  // shape_error; detail::cat, which builds the messages

namespace loom {

/// A buffer of `bytes`, live over the steps [first_step, last_step] (both included) of a
/// pipeline's stage order.
struct buffer_use {
  std::size_t bytes;
  int first_step;
  int last_step;
};

/// Where each buffer lies in one arena. offsets[i] is buffer i's offset, a multiple of
/// arena_alignment; arena_bytes the arena's size; sum_bytes what separate buffers would take
/// (every size rounded up to arena_alignment, as placed).
struct memory_plan {
  std::vector<std::size_t> offsets;
  std::size_t arena_bytes = 0;
  std::size_t sum_bytes = 0;
};

/// Every buffer starts on a cache line of its own: offsets and sizes are rounded up to this.
inline constexpr std::size_t arena_alignment = 64;

/// One stage of a stage graph: it produces one buffer of out_bytes and reads the buffers of the
/// stages in `inputs` (indices into the graph, which must be acyclic).
struct stage_node {
  std::size_t out_bytes;
  std::vector<int> inputs;
  friend bool operator==(const stage_node&, const stage_node&) = default;
};

/// A stage order (order[t] is the stage run at step t) and its memory plan, whose buffer k is
/// stage k's output.
struct order_plan {
  std::vector<int> order;
  memory_plan memory;
};

/// plan_order plans every topological order while there are at most this many (7!, so every graph
/// of up to 7 stages is searched exhaustively); above it, two candidates (see plan_order).
inline constexpr std::size_t max_exhaustive_orders = 5040;

namespace detail {

[[noreturn]] LOOM_COLD inline void arena_fail(const std::string& message) { throw shape_error(message); }

/// bytes rounded up to arena_alignment; throws where that does not fit a size_t.
inline std::size_t arena_round(std::size_t bytes, const char* who) {
  if (bytes > std::numeric_limits<std::size_t>::max() - (arena_alignment - 1))
    arena_fail(cat(who, ": a buffer of ", bytes, " bytes is larger than an arena can be"));
  return (bytes + arena_alignment - 1) / arena_alignment * arena_alignment;
}

inline bool live_ranges_meet(const buffer_use& a, const buffer_use& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

/// plan_memory with its working vectors kept, so that plan_order's search, which plans thousands
/// of orders, allocates nothing per order.
class memory_planner {
 public:
  void plan(const std::vector<buffer_use>& uses, memory_plan& out) {
    const std::size_t n = uses.size();
    rounded_.resize(n);
    out.offsets.assign(n, 0);
    out.sum_bytes = 0;
    out.arena_bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (uses[i].first_step > uses[i].last_step)
        arena_fail(cat("loom::plan_memory: buffer ", i, " is live over steps [", uses[i].first_step, ", ",
                       uses[i].last_step, "], an empty range"));
      rounded_[i] = arena_round(uses[i].bytes, "loom::plan_memory");
      if (rounded_[i] > std::numeric_limits<std::size_t>::max() - out.sum_bytes)
        arena_fail("loom::plan_memory: the buffers' sizes add up to more than a size_t holds");
      out.sum_bytes += rounded_[i];
    }

    // Largest first; equal sizes by first step, then by index, so the plan is deterministic.
    by_size_.clear();
    for (std::size_t i = 0; i < n; ++i)
      if (rounded_[i] != 0) by_size_.push_back(i);  // an empty buffer keeps offset 0, takes no space
    std::sort(by_size_.begin(), by_size_.end(), [&](std::size_t a, std::size_t b) {
      if (rounded_[a] != rounded_[b]) return rounded_[a] > rounded_[b];
      if (uses[a].first_step != uses[b].first_step) return uses[a].first_step < uses[b].first_step;
      return a < b;
    });

    // placed_: the buffers placed so far, by increasing offset. Walking it in that order, the
    // lowest free offset is the largest end among the conflicting buffers seen, until a
    // conflicting buffer starts far enough above it; no buffer later in the walk can start lower.
    placed_.clear();
    for (std::size_t i : by_size_) {
      const std::size_t size = rounded_[i];
      std::size_t offset = 0;
      for (std::size_t p : placed_) {
        if (!live_ranges_meet(uses[i], uses[p])) continue;
        if (out.offsets[p] >= offset && out.offsets[p] - offset >= size) break;
        offset = std::max(offset, out.offsets[p] + rounded_[p]);
      }
      out.offsets[i] = offset;
      // Ends never exceed sum_bytes (each offset is the end of an earlier buffer), so no overflow.
      out.arena_bytes = std::max(out.arena_bytes, offset + size);
      const auto at = std::upper_bound(placed_.begin(), placed_.end(), offset,
                                       [&](std::size_t o, std::size_t p) { return o < out.offsets[p]; });
      placed_.insert(at, i);
    }
  }

 private:
  std::vector<std::size_t> rounded_, by_size_, placed_;
};

/// A stage graph checked and turned around: who reads each stage, and which buffers stay live
/// to the end of the order.
struct stage_graph {
  int stages = 0;
  std::vector<std::vector<int>> consumers;  // distinct, increasing
  std::vector<std::vector<int>> inputs;     // distinct, increasing
  std::vector<char> to_end;                 // an output, or read by no stage
  std::vector<std::size_t> rounded;         // out_bytes rounded up to arena_alignment

  stage_graph(const std::vector<stage_node>& dag, const std::vector<int>& outputs, const char* who) {
    if (dag.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      arena_fail(cat(who, ": more stages than an int can number"));
    stages = static_cast<int>(dag.size());
    consumers.resize(dag.size());
    inputs.resize(dag.size());
    to_end.assign(dag.size(), 0);
    rounded.resize(dag.size());
    std::size_t sum = 0;
    for (int k = 0; k < stages; ++k) {
      const stage_node& node = dag[static_cast<std::size_t>(k)];
      rounded[static_cast<std::size_t>(k)] = arena_round(node.out_bytes, who);
      if (rounded[static_cast<std::size_t>(k)] > std::numeric_limits<std::size_t>::max() - sum)
        arena_fail(cat(who, ": the stages' buffers add up to more than a size_t holds"));
      sum += rounded[static_cast<std::size_t>(k)];
      std::vector<int>& in = inputs[static_cast<std::size_t>(k)];
      for (int j : node.inputs) {
        if (j < 0 || j >= stages)
          arena_fail(cat(who, ": stage ", k, " reads stage ", j, ", but the stages are numbered 0 to ", stages - 1));
        in.push_back(j);
      }
      std::sort(in.begin(), in.end());
      in.erase(std::unique(in.begin(), in.end()), in.end());
      for (int j : in) consumers[static_cast<std::size_t>(j)].push_back(k);  // k increases: sorted
    }
    for (int o : outputs) {
      if (o < 0 || o >= stages)
        arena_fail(cat(who, ": output ", o, " is not a stage (they are numbered 0 to ", stages - 1, ")"));
      to_end[static_cast<std::size_t>(o)] = 1;
    }
    for (int k = 0; k < stages; ++k)
      if (consumers[static_cast<std::size_t>(k)].empty()) to_end[static_cast<std::size_t>(k)] = 1;
  }

  /// The lexicographically smallest topological order (Kahn's, smallest ready stage first): the
  /// declaration order itself where that is topological. Throws, naming a cycle, where none is.
  std::vector<int> first_order(const char* who) const {
    std::vector<int> missing(static_cast<std::size_t>(stages));
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int k = 0; k < stages; ++k) {
      missing[static_cast<std::size_t>(k)] = static_cast<int>(inputs[static_cast<std::size_t>(k)].size());
      if (missing[static_cast<std::size_t>(k)] == 0) ready.push(k);
    }
    std::vector<int> order;
    order.reserve(static_cast<std::size_t>(stages));
    while (!ready.empty()) {
      const int k = ready.top();
      ready.pop();
      order.push_back(k);
      for (int c : consumers[static_cast<std::size_t>(k)])
        if (--missing[static_cast<std::size_t>(c)] == 0) ready.push(c);
    }
    if (static_cast<int>(order.size()) != stages) fail_cycle(missing, who);
    return order;
  }

  /// Every stage left with missing inputs reads another such stage, so following those reads from
  /// one of them must come back to a stage already met: that loop is a cycle.
  [[noreturn]] LOOM_COLD void fail_cycle(const std::vector<int>& missing, const char* who) const {
    std::vector<int> seen_at(static_cast<std::size_t>(stages), -1), path;
    int k = 0;
    while (missing[static_cast<std::size_t>(k)] == 0) ++k;
    while (seen_at[static_cast<std::size_t>(k)] < 0) {
      seen_at[static_cast<std::size_t>(k)] = static_cast<int>(path.size());
      path.push_back(k);
      for (int j : inputs[static_cast<std::size_t>(k)])
        if (missing[static_cast<std::size_t>(j)] != 0) {
          k = j;
          break;
        }
    }
    std::vector<int> cycle(path.begin() + seen_at[static_cast<std::size_t>(k)], path.end());
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    // "cycle through stage 1 (stage 1 reads 4, which reads 2, which reads 1)"
    std::string m = cat(who, ": the stage graph has a cycle through stage ", cycle[0]);
    if (cycle.size() == 1) {
      m += " (it reads itself)";
    } else {
      m += cat(" (stage ", cycle[0], " reads ", cycle[1]);
      for (std::size_t i = 2; i < cycle.size(); ++i) m += cat(", which reads ", cycle[i]);
      m += cat(", which reads ", cycle[0], ")");
    }
    arena_fail(m);
  }

  /// The live ranges of the stages' buffers under `order` (a topological order): from the
  /// producer's step to its last reader's, or to the last step for to_end buffers.
  void uses_of(const std::vector<int>& order, std::vector<int>& step_of, std::vector<buffer_use>& uses) const {
    const std::size_t n = static_cast<std::size_t>(stages);
    step_of.resize(n);
    for (std::size_t t = 0; t < n; ++t) step_of[static_cast<std::size_t>(order[t])] = static_cast<int>(t);
    uses.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      int last = stages - 1;
      if (!to_end[k]) {
        last = step_of[k];
        for (int c : consumers[k]) last = std::max(last, step_of[static_cast<std::size_t>(c)]);
      }
      uses[k] = buffer_use{rounded[k], step_of[k], last};
    }
  }

  /// Calls visit(order) for each topological order, in lexicographic order, until it returns false.
  template <class Visit>
  void for_each_order(Visit&& visit) const {
    const std::size_t n = static_cast<std::size_t>(stages);
    std::vector<int> missing(n), order(n), next(n + 1, 0);
    std::vector<char> done(n, 0);
    for (std::size_t k = 0; k < n; ++k) missing[k] = static_cast<int>(inputs[k].size());
    auto place = [&](int k) {
      done[static_cast<std::size_t>(k)] = 1;
      for (int c : consumers[static_cast<std::size_t>(k)]) --missing[static_cast<std::size_t>(c)];
    };
    auto unplace = [&](int k) {
      done[static_cast<std::size_t>(k)] = 0;
      for (int c : consumers[static_cast<std::size_t>(k)]) ++missing[static_cast<std::size_t>(c)];
    };
    std::size_t depth = 0;  // order[0, depth) is fixed; next[depth] is the next stage to try there
    while (true) {
      if (depth == n) {
        if (!visit(static_cast<const std::vector<int>&>(order))) return;
        if (n == 0) return;
        unplace(order[--depth]);
        continue;
      }
      int k = next[depth];
      while (k < stages && (done[static_cast<std::size_t>(k)] || missing[static_cast<std::size_t>(k)] != 0)) ++k;
      if (k < stages) {
        order[depth] = k;
        next[depth] = k + 1;
        place(k);
        next[++depth] = 0;
      } else {
        if (depth == 0) return;
        unplace(order[--depth]);
      }
    }
  }

  /// The greedy order: at each step, the ready stage whose step changes the live bytes least
  /// (its buffer's size less the buffers it is the last reader of); ties to the smaller index.
  std::vector<int> greedy_order() const {
    const std::size_t n = static_cast<std::size_t>(stages);
    std::vector<int> missing(n), readers_left(n), order;
    std::vector<char> done(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
      missing[k] = static_cast<int>(inputs[k].size());
      readers_left[k] = static_cast<int>(consumers[k].size());
    }
    order.reserve(n);
    auto freed_by = [&](std::size_t k) {
      std::size_t freed = 0;
      for (int j : inputs[k])
        if (readers_left[static_cast<std::size_t>(j)] == 1 && !to_end[static_cast<std::size_t>(j)])
          freed += rounded[static_cast<std::size_t>(j)];
      return freed;
    };
    for (std::size_t t = 0; t < n; ++t) {
      std::size_t best = n, best_grow = 0, best_freed = 0;
      for (std::size_t k = 0; k < n; ++k) {
        if (done[k] || missing[k] != 0) continue;
        const std::size_t freed = freed_by(k);
        // rounded[k] - freed < best_grow - best_freed, without signed sizes; no sum overflows,
        // as all the stages' sizes together fit a size_t.
        if (best == n || rounded[k] + best_freed < best_grow + freed) {
          best = k;
          best_grow = rounded[k];
          best_freed = freed;
        }
      }
      order.push_back(static_cast<int>(best));
      done[best] = 1;
      for (int j : inputs[best]) --readers_left[static_cast<std::size_t>(j)];
      for (int c : consumers[best]) --missing[static_cast<std::size_t>(c)];
    }
    return order;
  }
};

}  // namespace detail

/// Places the buffers in one arena, greedy by size (Pisarchyk & Lee, "Efficient Memory
/// Management for Deep Neural Net Inference", 2020): largest first (equal sizes: earlier
/// first_step, then lower index), each at the lowest offset where it overlaps no placed buffer
/// whose live range meets its own. Sizes are rounded up to arena_alignment; an empty buffer gets
/// offset 0 and no space. O(n^2) time. Throws shape_error for a range with first_step > last_step
/// or sizes whose sum does not fit a size_t.
inline memory_plan plan_memory(const std::vector<buffer_use>& uses) {
  memory_plan plan;
  detail::memory_planner().plan(uses, plan);
  return plan;
}

/// The live ranges of a stage graph's buffers under a stage order: buffer k (stage k's output,
/// out_bytes as given) is live from the step of stage k to the step of its last reader; a stage
/// in `outputs`, or read by no stage, is a result of the pipeline and stays live to the last
/// step. Throws shape_error if `order` is not a topological order of `dag`.
inline std::vector<buffer_use> buffer_uses(const std::vector<stage_node>& dag, const std::vector<int>& order,
                                           const std::vector<int>& outputs = {}) {
  const detail::stage_graph graph(dag, outputs, "loom::buffer_uses");
  const std::size_t n = dag.size();
  if (order.size() != n)
    detail::arena_fail(detail::cat("loom::buffer_uses: the order has ", order.size(), " steps for ", n, " stages"));
  std::vector<int> step_of(n, -1);
  for (std::size_t t = 0; t < n; ++t) {
    const int k = order[t];
    if (k < 0 || static_cast<std::size_t>(k) >= n || step_of[static_cast<std::size_t>(k)] >= 0)
      detail::arena_fail(detail::cat("loom::buffer_uses: step ", t, " runs stage ", k,
                                       ", which is not a stage or runs twice"));
    step_of[static_cast<std::size_t>(k)] = static_cast<int>(t);
  }
  for (std::size_t k = 0; k < n; ++k)
    for (int j : graph.inputs[k])
      if (step_of[static_cast<std::size_t>(j)] >= step_of[k])
        detail::arena_fail(detail::cat("loom::buffer_uses: stage ", k, " runs at step ", step_of[k], ", before stage ", j,
                                       ", which it reads, at step ", step_of[static_cast<std::size_t>(j)]));
  std::vector<buffer_use> uses;
  graph.uses_of(order, step_of, uses);
  for (std::size_t k = 0; k < n; ++k) uses[k].bytes = dag[k].out_bytes;
  return uses;
}

/// Of the topological orders of `dag`, one whose plan_memory arena (live ranges as in
/// buffer_uses) is smallest. With at most max_exhaustive_orders orders, all are planned and the
/// lexicographically first of the smallest wins (so the declaration order 0, 1, 2, ... wins its
/// ties where it is topological). With more, the better of two orders: the lexicographically first
/// topological order and a greedy one (each step runs the ready stage that adds the fewest live
/// bytes net of those it frees, ties to the lower index); ties to the first. Throws shape_error for
/// a cycle (naming it), an input or output that is not a stage, or sizes that overflow.
inline order_plan plan_order(const std::vector<stage_node>& dag, std::vector<int> outputs = {}) {
  const detail::stage_graph graph(dag, outputs, "loom::plan_order");
  order_plan result;
  result.order = graph.first_order("loom::plan_order");  // also the cycle check

  std::size_t count = 0;
  graph.for_each_order([&](const std::vector<int>&) { return ++count <= max_exhaustive_orders; });

  detail::memory_planner planner;
  memory_plan scratch;
  std::vector<int> step_of;
  std::vector<buffer_use> uses;
  auto arena_of = [&](const std::vector<int>& order) {
    graph.uses_of(order, step_of, uses);
    planner.plan(uses, scratch);
    return scratch.arena_bytes;
  };

  std::size_t best = arena_of(result.order);
  if (count <= max_exhaustive_orders) {
    graph.for_each_order([&](const std::vector<int>& order) {
      const std::size_t arena = arena_of(order);
      if (arena < best) {
        best = arena;
        result.order = order;
      }
      return true;
    });
  } else {
    std::vector<int> greedy = graph.greedy_order();
    if (arena_of(greedy) < best) result.order = std::move(greedy);
  }
  graph.uses_of(result.order, step_of, uses);
  for (std::size_t k = 0; k < dag.size(); ++k) uses[k].bytes = dag[k].out_bytes;
  planner.plan(uses, result.memory);
  return result;
}

/// A table of the plan, one row per buffer (its bytes, live steps and offset), and a last line
/// "arena X bytes against Y bytes of separate buffers (Z %)". `uses` are the buffers planned.
inline std::string describe(const memory_plan& plan, const std::vector<buffer_use>& uses) {
  if (plan.offsets.size() != uses.size())
    detail::arena_fail(detail::cat("loom::describe: the plan has ", plan.offsets.size(), " buffers and the uses ",
                                   uses.size()));
  const std::string head[4] = {"buffer", "bytes", "steps", "offset"};
  std::vector<std::string> cells;
  cells.reserve(4 * uses.size());
  std::size_t width[4] = {head[0].size(), head[1].size(), head[2].size(), head[3].size()};
  for (std::size_t i = 0; i < uses.size(); ++i) {
    cells.push_back(std::to_string(i));
    cells.push_back(std::to_string(uses[i].bytes));
    cells.push_back(detail::cat(uses[i].first_step, "..", uses[i].last_step));
    cells.push_back(std::to_string(plan.offsets[i]));
    for (std::size_t c = 0; c < 4; ++c) width[c] = std::max(width[c], cells[cells.size() - 4 + c].size());
  }
  std::string s;
  auto row = [&](const std::string* cell) {
    for (std::size_t c = 0; c < 4; ++c) {
      s += c == 0 ? "" : "  ";
      if (c == 2) {  // the steps read best left-aligned
        s += cell[c];
        s.append(width[c] - cell[c].size(), ' ');
      } else {
        s.append(width[c] - cell[c].size(), ' ');
        s += cell[c];
      }
    }
    s += '\n';
  };
  row(head);
  for (std::size_t i = 0; i < uses.size(); ++i) row(&cells[4 * i]);
  s += detail::cat("arena ", plan.arena_bytes, " bytes against ", plan.sum_bytes, " bytes of separate buffers");
  if (plan.sum_bytes != 0) {
    char percent[32];
    std::snprintf(percent, sizeof percent, " (%.1f %%)",
                  100.0 * static_cast<double>(plan.arena_bytes) / static_cast<double>(plan.sum_bytes));
    s += percent;
  }
  s += '\n';
  return s;
}

}  // namespace loom
