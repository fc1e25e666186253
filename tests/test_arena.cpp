#include "support.hpp"
// tests/test_arena.cpp — the buffer planner of pipelines (loom/pipeline/arena.hpp). plan_memory:
// every plan is valid (no two buffers live at once share a byte, 64-byte offsets, the arena is the
// largest end and lies between the live-bytes lower bound and the sum), known values on chains,
// disjoint and overlapping ranges and hand-placed cases, and against the optimum found by brute
// force on small instances. plan_order: against every topological order enumerated here on small
// graphs, a graph where the order matters by a hand-computed amount, cycles, and graphs above the
// exhaustive cap (the greedy order).

#include <loom/pipeline/arena.hpp>

#include <numeric>

namespace {

using loom::buffer_use;
using loom::index_t;
using loom::memory_plan;
using loom::stage_node;

std::size_t round64(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

/// The largest sum of (rounded) sizes live at one step: no arena can be smaller.
std::size_t live_bytes_bound(const std::vector<buffer_use>& uses) {
  std::size_t bound = 0;
  for (const buffer_use& u : uses)
    for (int t = u.first_step; t <= u.last_step; ++t) {
      std::size_t live = 0;
      for (const buffer_use& v : uses)
        if (v.first_step <= t && t <= v.last_step) live += round64(v.bytes);
      bound = std::max(bound, live);
    }
  return bound;
}

bool meet(const buffer_use& a, const buffer_use& b) { return a.first_step <= b.last_step && b.first_step <= a.last_step; }

/// Empty if `plan` is a valid plan of `uses`, else what is wrong with it.
std::string invalid(const std::vector<buffer_use>& uses, const memory_plan& plan) {
  if (plan.offsets.size() != uses.size()) return lt::str(plan.offsets.size(), " offsets for ", uses.size(), " buffers");
  std::size_t sum = 0, end = 0;
  for (std::size_t i = 0; i < uses.size(); ++i) {
    if (plan.offsets[i] % 64 != 0) return lt::str("buffer ", i, "'s offset ", plan.offsets[i], " is not a multiple of 64");
    if (uses[i].bytes == 0 && plan.offsets[i] != 0) return lt::str("empty buffer ", i, " at offset ", plan.offsets[i]);
    sum += round64(uses[i].bytes);
    if (uses[i].bytes != 0) end = std::max(end, plan.offsets[i] + round64(uses[i].bytes));
    for (std::size_t j = 0; j < i; ++j) {
      if (!meet(uses[i], uses[j]) || uses[i].bytes == 0 || uses[j].bytes == 0) continue;
      const bool apart = plan.offsets[i] + round64(uses[i].bytes) <= plan.offsets[j] ||
                         plan.offsets[j] + round64(uses[j].bytes) <= plan.offsets[i];
      if (!apart) return lt::str("buffers ", j, " and ", i, " are live together and overlap");
    }
  }
  if (plan.sum_bytes != sum) return lt::str("sum_bytes ", plan.sum_bytes, ", expected ", sum);
  if (plan.arena_bytes != end) return lt::str("arena_bytes ", plan.arena_bytes, ", the largest end is ", end);
  const std::size_t bound = live_bytes_bound(uses);
  if (plan.arena_bytes < bound) return lt::str("arena ", plan.arena_bytes, " below the live-bytes bound ", bound);
  if (plan.arena_bytes > sum) return lt::str("arena ", plan.arena_bytes, " above the sum ", sum);
  return {};
}

std::string show(const std::vector<buffer_use>& uses) {
  std::string s;
  for (std::size_t i = 0; i < uses.size(); ++i)
    s += lt::str(i ? ", " : "", uses[i].bytes, " [", uses[i].first_step, ", ", uses[i].last_step, "]");
  return s;
}

std::string show(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += lt::str(i ? " " : "", v[i]);
  return s;
}

/// A size: empty, tiny, a multiple of 64, or anything up to `hi`.
std::size_t random_bytes(lt::rng_t& g, std::size_t hi) {
  switch (lt::uniform(g, 0, 5)) {
    case 0: return lt::coin(g, 0.3) ? 0 : static_cast<std::size_t>(lt::uniform(g, 1, 63));
    case 1: return 64 * static_cast<std::size_t>(lt::uniform(g, 1, 8));
    default: return static_cast<std::size_t>(lt::uniform(g, 1, static_cast<index_t>(hi)));
  }
}

std::vector<buffer_use> random_uses(lt::rng_t& g, int n, int steps, std::size_t hi) {
  std::vector<buffer_use> uses;
  for (int i = 0; i < n; ++i) {
    const int first = static_cast<int>(lt::uniform(g, 0, steps - 1));
    const int last = static_cast<int>(lt::uniform(g, first, std::min(steps - 1, first + static_cast<int>(lt::uniform(g, 0, steps)))));
    uses.push_back({random_bytes(g, hi), first, last});
  }
  return uses;
}

/// The smallest arena over all placement orders, each placed at the lowest offset free of the
/// placed buffers it meets (here by trying 0 and every such buffer's end). Placing the buffers of
/// an optimal plan in increasing offset this way puts each at or below its optimal offset, so the
/// minimum over orders is the optimum.
std::size_t brute_force_optimum(const std::vector<buffer_use>& uses) {
  std::vector<std::size_t> order(uses.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::size_t best = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> offset(uses.size());
  do {
    std::size_t arena = 0;
    for (std::size_t q = 0; q < order.size(); ++q) {
      const std::size_t i = order[q], size = round64(uses[i].bytes);
      if (size == 0) continue;
      auto fits = [&](std::size_t at) {
        for (std::size_t r = 0; r < q; ++r) {
          const std::size_t j = order[r], sj = round64(uses[j].bytes);
          if (sj != 0 && meet(uses[i], uses[j]) && at < offset[j] + sj && offset[j] < at + size) return false;
        }
        return true;
      };
      std::size_t at = std::numeric_limits<std::size_t>::max();
      if (fits(0)) at = 0;
      for (std::size_t r = 0; r < q; ++r) {
        const std::size_t j = order[r], end = offset[j] + round64(uses[j].bytes);
        if (end < at && fits(end)) at = end;
      }
      offset[i] = at;
      arena = std::max(arena, at + size);
    }
    best = std::min(best, arena);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

// ---------------------------------------------------------------------------------------------
// Stage graphs, checked with code of their own.
// ---------------------------------------------------------------------------------------------

/// A random acyclic graph whose declaration order is not always topological: stage k may read
/// stage j when j comes before k in a random ranking.
std::vector<stage_node> random_dag(lt::rng_t& g, int stages, double edge_probability) {
  std::vector<int> rank(static_cast<std::size_t>(stages));
  std::iota(rank.begin(), rank.end(), 0);
  if (lt::coin(g, 0.7)) std::shuffle(rank.begin(), rank.end(), g);
  std::vector<stage_node> dag(static_cast<std::size_t>(stages));
  for (int k = 0; k < stages; ++k) {
    dag[static_cast<std::size_t>(k)].out_bytes = random_bytes(g, 5000);
    for (int j = 0; j < stages; ++j)
      if (rank[static_cast<std::size_t>(j)] < rank[static_cast<std::size_t>(k)] && lt::coin(g, edge_probability))
        dag[static_cast<std::size_t>(k)].inputs.push_back(j);
  }
  return dag;
}

/// Live ranges under `order`: producer's step to last reader's; outputs and unread stages to the end.
std::vector<buffer_use> live_ranges(const std::vector<stage_node>& dag, const std::vector<int>& order,
                                    const std::vector<int>& outputs) {
  const int n = static_cast<int>(dag.size());
  std::vector<int> step(dag.size());
  for (int t = 0; t < n; ++t) step[static_cast<std::size_t>(order[static_cast<std::size_t>(t)])] = t;
  std::vector<buffer_use> uses;
  for (int k = 0; k < n; ++k) {
    bool read = false;
    int last = step[static_cast<std::size_t>(k)];
    for (int c = 0; c < n; ++c)
      for (int j : dag[static_cast<std::size_t>(c)].inputs)
        if (j == k) {
          read = true;
          last = std::max(last, step[static_cast<std::size_t>(c)]);
        }
    if (!read || std::find(outputs.begin(), outputs.end(), k) != outputs.end()) last = n - 1;
    uses.push_back({dag[static_cast<std::size_t>(k)].out_bytes, step[static_cast<std::size_t>(k)], last});
  }
  return uses;
}

/// Every topological order, in lexicographic order.
void all_orders(const std::vector<stage_node>& dag, std::vector<int>& prefix, std::vector<char>& used,
                std::vector<std::vector<int>>& out) {
  if (prefix.size() == dag.size()) {
    out.push_back(prefix);
    return;
  }
  for (std::size_t k = 0; k < dag.size(); ++k) {
    if (used[k]) continue;
    bool ready = true;
    for (int j : dag[k].inputs) ready = ready && used[static_cast<std::size_t>(j)];
    if (!ready) continue;
    used[k] = 1;
    prefix.push_back(static_cast<int>(k));
    all_orders(dag, prefix, used, out);
    prefix.pop_back();
    used[k] = 0;
  }
}
std::vector<std::vector<int>> all_orders(const std::vector<stage_node>& dag) {
  std::vector<std::vector<int>> out;
  std::vector<int> prefix;
  std::vector<char> used(dag.size(), 0);
  all_orders(dag, prefix, used, out);
  return out;
}

/// Empty if `order` runs every stage once, each after the stages it reads.
std::string not_topological(const std::vector<stage_node>& dag, const std::vector<int>& order) {
  if (order.size() != dag.size()) return lt::str(order.size(), " steps for ", dag.size(), " stages");
  std::vector<int> step(dag.size(), -1);
  for (std::size_t t = 0; t < order.size(); ++t) {
    const int k = order[t];
    if (k < 0 || static_cast<std::size_t>(k) >= dag.size() || step[static_cast<std::size_t>(k)] >= 0)
      return lt::str("step ", t, " runs stage ", k);
    step[static_cast<std::size_t>(k)] = static_cast<int>(t);
  }
  for (std::size_t k = 0; k < dag.size(); ++k)
    for (int j : dag[k].inputs)
      if (step[static_cast<std::size_t>(j)] >= step[k]) return lt::str("stage ", k, " runs before stage ", j);
  return {};
}

std::string show(const std::vector<stage_node>& dag) {
  std::string s;
  for (std::size_t k = 0; k < dag.size(); ++k) s += lt::str("\n  stage ", k, ": ", dag[k].out_bytes, " bytes, reads {", show(dag[k].inputs), "}");
  return s;
}

template <class F>
std::string shape_error_of(F&& f) {
  try {
    f();
  } catch (const loom::shape_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return lt::str("a different exception: ", e.what());
  }
  return "(nothing thrown)";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// plan_memory
// ---------------------------------------------------------------------------------------------

TEST_CASE("arena: plan_memory gives valid plans on random instances", "[arena]") {
  auto g = lt::make_rng("arena: random plans");
  INFO("seed " << loom_test_seed());
  for (int c = 0; c < 600; ++c) {
    const int n = c < 590 ? static_cast<int>(lt::uniform(g, 0, 40)) : static_cast<int>(lt::uniform(g, 200, 400));
    const int steps = static_cast<int>(lt::uniform(g, 1, c % 3 == 0 ? 4 : 30));
    const auto uses = random_uses(g, n, steps, c % 2 ? 100000 : 3000);
    const memory_plan plan = loom::plan_memory(uses);
    INFO("case " << c << ": " << n << " buffers over " << steps << " steps: " << show(uses));
    const std::string why = invalid(uses, plan);
    INFO(why);
    REQUIRE(why.empty());
    CHECK(loom::plan_memory(uses).offsets == plan.offsets);  // deterministic
  }
}

TEST_CASE("arena: buffers of one size are placed optimally (interval colouring by first step)", "[arena]") {
  // With equal sizes, largest-first is first-step order, and first fit in that order colours an
  // interval graph with as many colours as its largest clique: the arena is the live-bytes bound.
  auto g = lt::make_rng("arena: one size");
  INFO("seed " << loom_test_seed());
  for (int c = 0; c < 300; ++c) {
    const std::size_t bytes = static_cast<std::size_t>(lt::uniform(g, 1, 4096));
    auto uses = random_uses(g, static_cast<int>(lt::uniform(g, 1, 60)), static_cast<int>(lt::uniform(g, 1, 25)), 1);
    for (buffer_use& u : uses) u.bytes = bytes;
    const memory_plan plan = loom::plan_memory(uses);
    INFO("case " << c << ": " << show(uses));
    REQUIRE(invalid(uses, plan).empty());
    CHECK(plan.arena_bytes == live_bytes_bound(uses));
  }
}

TEST_CASE("arena: chains, disjoint and overlapping ranges", "[arena]") {
  SECTION("a chain of distinct sizes that fall or rise: the arena is the largest adjacent pair") {
    // Each buffer lands at 0 or on a neighbour at 0. Equal neighbours can break this on a rising
    // chain (the tie rule places the left one first), so the rounded sizes here are distinct.
    auto g = lt::make_rng("arena: chains");
    INFO("seed " << loom_test_seed());
    for (int c = 0; c < 100; ++c) {
      std::vector<buffer_use> uses;
      const int n = static_cast<int>(lt::uniform(g, 1, 30));
      std::vector<std::size_t> lines(2000);
      std::iota(lines.begin(), lines.end(), std::size_t{1});
      std::shuffle(lines.begin(), lines.end(), g);
      for (int i = 0; i < n; ++i)
        uses.push_back({64 * lines[static_cast<std::size_t>(i)] - static_cast<std::size_t>(lt::uniform(g, 0, 63)), i, i + 1});
      std::sort(uses.begin(), uses.end(), [](const buffer_use& a, const buffer_use& b) { return a.bytes > b.bytes; });
      if (c % 2) std::reverse(uses.begin(), uses.end());  // and rising
      for (int i = 0; i < n; ++i) uses[static_cast<std::size_t>(i)].first_step = i, uses[static_cast<std::size_t>(i)].last_step = i + 1;
      std::size_t pair = round64(uses[0].bytes);
      for (int i = 1; i < n; ++i) pair = std::max(pair, round64(uses[static_cast<std::size_t>(i - 1)].bytes) + round64(uses[static_cast<std::size_t>(i)].bytes));
      const memory_plan plan = loom::plan_memory(uses);
      INFO("case " << c << ": " << show(uses));
      REQUIRE(invalid(uses, plan).empty());
      CHECK(plan.arena_bytes == pair);
    }
  }
  SECTION("a chain by hand: 1000, 3000, 500, 2000, 64 bytes") {
    // Rounded 1024, 3008, 512, 2048, 64; pairs 4032, 3520, 2560, 2112. By size: 3008 at 0, 2048 at
    // 0 (it does not meet the 3008), 1024 on the 3008, 512 on the 3008, 64 on the 2048.
    const std::vector<buffer_use> uses = {{1000, 0, 1}, {3000, 1, 2}, {500, 2, 3}, {2000, 3, 4}, {64, 4, 5}};
    const memory_plan plan = loom::plan_memory(uses);
    CHECK(plan.offsets == std::vector<std::size_t>{3008, 0, 3008, 0, 2048});
    CHECK(plan.arena_bytes == 4032);
    CHECK(plan.sum_bytes == 1024 + 3008 + 512 + 2048 + 64);
  }
  SECTION("disjoint ranges share offset 0: the arena is the largest buffer") {
    const std::vector<buffer_use> uses = {{100, 0, 0}, {5000, 1, 3}, {70, 4, 4}, {4990, 5, 9}};
    const memory_plan plan = loom::plan_memory(uses);
    CHECK(plan.offsets == std::vector<std::size_t>{0, 0, 0, 0});
    CHECK(plan.arena_bytes == 5056);
    CHECK(plan.sum_bytes == 128 + 5056 + 128 + 4992);
  }
  SECTION("ranges that all meet: the arena is the sum, largest lowest") {
    const std::vector<buffer_use> uses = {{100, 0, 3}, {5000, 2, 5}, {64, 3, 3}, {1, 1, 3}};
    const memory_plan plan = loom::plan_memory(uses);
    CHECK(plan.offsets == std::vector<std::size_t>{5056, 0, 5248, 5184});  // 1 byte, live first, below 64
    CHECK(plan.arena_bytes == 128 + 5056 + 64 + 64);
    CHECK(plan.arena_bytes == plan.sum_bytes);
  }
}

TEST_CASE("arena: hand-placed cases, ties and empty buffers", "[arena]") {
  SECTION("greedy by size reaches the live-bytes bound") {
    // Live bytes per step 0..6: 4096, 6144, 7168, 1024, 7168, 6144, 4096. By size: A 0, E 0 (A and
    // E never meet), B on A, C on E, D (meets all four) above B and C: 6144 + 1024 = 7168.
    const std::vector<buffer_use> uses = {{4096, 0, 2}, {2000, 1, 2}, {2048, 4, 5}, {1000, 2, 4}, {4096, 4, 6}};
    const memory_plan plan = loom::plan_memory(uses);
    CHECK(plan.offsets == std::vector<std::size_t>{0, 4096, 4096, 6144, 0});
    CHECK(plan.arena_bytes == 7168);
    CHECK(live_bytes_bound(uses) == 7168);
    CHECK(brute_force_optimum(uses) == 7168);
    CHECK(plan.sum_bytes == 13312);
    const std::string text = loom::describe(plan, uses);
    INFO(text);
    CHECK(text.find("arena 7168 bytes against 13312 bytes of separate buffers (53.8 %)") != std::string::npos);
    CHECK(text.find("1000  2..4") != std::string::npos);
    CHECK(text.find("6144") != std::string::npos);
  }
  SECTION("equal sizes: the earlier first step, then the lower index, goes lower") {
    const memory_plan a = loom::plan_memory({{64, 2, 3}, {60, 0, 2}});
    CHECK(a.offsets == std::vector<std::size_t>{64, 0});
    const memory_plan b = loom::plan_memory({{64, 1, 3}, {60, 1, 2}, {1, 0, 5}});
    CHECK(b.offsets == std::vector<std::size_t>{64, 128, 0});
  }
  SECTION("empty buffers get offset 0 and no space; no buffers, no arena") {
    const std::vector<buffer_use> uses = {{0, 0, 5}, {64, 0, 5}, {0, 2, 2}, {64, 1, 1}};
    const memory_plan plan = loom::plan_memory(uses);
    CHECK(plan.offsets == std::vector<std::size_t>{0, 0, 0, 64});
    CHECK(plan.arena_bytes == 128);
    CHECK(plan.sum_bytes == 128);
    const memory_plan none = loom::plan_memory({});
    CHECK(none.offsets.empty());
    CHECK(none.arena_bytes == 0);
    CHECK(none.sum_bytes == 0);
    CHECK(loom::describe(none, {}).find("arena 0 bytes against 0 bytes of separate buffers") != std::string::npos);
  }
  SECTION("bad input throws shape_error") {
    const std::string empty_range = shape_error_of([] { loom::plan_memory({{64, 0, 1}, {64, 3, 2}}); });
    CHECK(empty_range == "loom::plan_memory: buffer 1 is live over steps [3, 2], an empty range");
    const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
    CHECK(shape_error_of([&] { loom::plan_memory({{huge, 0, 0}, {huge, 1, 1}, {huge, 2, 2}}); }).find("add up") != std::string::npos);
    CHECK(shape_error_of([] { loom::plan_memory({{std::numeric_limits<std::size_t>::max() - 10, 0, 0}}); }).find("larger than an arena") !=
          std::string::npos);
  }
}

TEST_CASE("arena: plan_memory against the optimum by brute force", "[arena]") {
  SECTION("a chain where greedy by size is not optimal") {
    // In 64-byte units: sizes 95, 80, 90, 100 along a chain. By size: 100 at 0, 95 at 0, 90 on the
    // 100 (at 100), 80 above both its neighbours (at 190): 270. Optimal: 80 at 0, 95 at 80, 90 at
    // 100, 100 at 0: 190, the largest adjacent pair.
    const std::vector<buffer_use> uses = {{95 * 64, 0, 1}, {80 * 64, 1, 2}, {90 * 64, 2, 3}, {100 * 64, 3, 4}};
    const memory_plan plan = loom::plan_memory(uses);
    CHECK(plan.offsets == std::vector<std::size_t>{0, 190 * 64, 100 * 64, 0});
    CHECK(plan.arena_bytes == 270 * 64);
    CHECK(brute_force_optimum(uses) == 190 * 64);
    CHECK(live_bytes_bound(uses) == 190 * 64);
  }
  SECTION("random instances of up to 6 buffers") {
    auto g = lt::make_rng("arena: brute force");
    INFO("seed " << loom_test_seed());
    int optimal = 0;
    const int cases = 400;
    for (int c = 0; c < cases; ++c) {
      const auto uses = random_uses(g, static_cast<int>(lt::uniform(g, 1, 6)), static_cast<int>(lt::uniform(g, 1, 6)), 4000);
      const memory_plan plan = loom::plan_memory(uses);
      const std::size_t best = brute_force_optimum(uses);
      INFO("case " << c << ": " << show(uses) << "; greedy " << plan.arena_bytes << ", optimum " << best);
      REQUIRE(invalid(uses, plan).empty());
      CHECK(best >= live_bytes_bound(uses));
      CHECK(plan.arena_bytes >= best);
      CHECK(plan.arena_bytes <= plan.sum_bytes);
      optimal += plan.arena_bytes == best;
    }
    // Greedy by size is optimal on most small instances (the paper's premise); a collapse of
    // this share means a placement bug that still yields valid plans.
    INFO(optimal << " of " << cases << " optimal");
    CHECK(optimal >= cases * 9 / 10);
  }
}

// ---------------------------------------------------------------------------------------------
// plan_order
// ---------------------------------------------------------------------------------------------

TEST_CASE("arena: plan_order finds the smallest arena over every topological order", "[arena]") {
  auto g = lt::make_rng("arena: plan_order brute force");
  INFO("seed " << loom_test_seed());
  for (int c = 0; c < 300; ++c) {
    const int stages = c == 0 ? 7 : static_cast<int>(lt::uniform(g, 1, 7));
    const auto dag = random_dag(g, stages, c == 0 ? 0.0 : lt::uniform(g, 0, 6) / 10.0);  // case 0: 7! orders
    std::vector<int> outputs;
    if (lt::coin(g, 0.4))
      for (int k = 0; k < stages; ++k)
        if (lt::coin(g, 0.3)) outputs.push_back(k);
    INFO("case " << c << ": outputs {" << show(outputs) << "}" << show(dag));

    const auto orders = all_orders(dag);
    std::size_t best = std::numeric_limits<std::size_t>::max();
    std::vector<int> first_best;
    for (const auto& order : orders) {
      const std::size_t arena = loom::plan_memory(live_ranges(dag, order, outputs)).arena_bytes;
      if (arena < best) best = arena, first_best = order;
    }
    const loom::order_plan plan = loom::plan_order(dag, outputs);
    INFO(orders.size() << " orders; plan_order chose {" << show(plan.order) << "}, the first best is {" << show(first_best) << "}");
    REQUIRE(not_topological(dag, plan.order).empty());
    const auto uses = live_ranges(dag, plan.order, outputs);
    CHECK(invalid(uses, plan.memory).empty());
    CHECK(plan.memory.arena_bytes == best);
    CHECK(plan.order == first_best);  // ties: the lexicographically first, the declaration order if topological
    CHECK(plan.memory.offsets == loom::plan_memory(uses).offsets);
    const auto public_uses = loom::buffer_uses(dag, plan.order, outputs);
    REQUIRE(public_uses.size() == uses.size());
    for (std::size_t k = 0; k < uses.size(); ++k) {
      INFO("stage " << k);
      CHECK(public_uses[k].bytes == uses[k].bytes);
      CHECK(public_uses[k].first_step == uses[k].first_step);
      CHECK(public_uses[k].last_step == uses[k].last_step);
    }
  }
}

TEST_CASE("arena: plan_order runs one branch to its end before the other", "[arena]") {
  // Two branches, each a 4096-byte stage read by a 64-byte one, joined by a 64-byte stage. Declared
  // breadth first: 0 = a1, 1 = b1, 2 = a2 (reads a1), 3 = b2 (reads b1), 4 = join (reads a2, b2).
  const std::vector<stage_node> dag = {{4096, {}}, {4096, {}}, {64, {0}}, {64, {1}}, {64, {2, 3}}};
  // In declaration order a1 and b1 are live together at step 1: a1 at 0, b1 at 4096, a2 (steps
  // 2..4) at 8192, b2 (3..4) at 0 once a1 is dead, the join on b2: 8256 bytes.
  const memory_plan declared = loom::plan_memory(loom::buffer_uses(dag, {0, 1, 2, 3, 4}));
  CHECK(declared.arena_bytes == 8256);
  CHECK(declared.offsets == std::vector<std::size_t>{0, 4096, 8192, 0, 64});
  // Branch a first: a1 dies at step 1, so b1 takes its place; a2 (1..4) at 4096, b2 (3..4) above
  // it: 4096 + 64 + 64 = 4224, 4032 bytes less. {1, 3, 0, 2, 4} ties, and comes later.
  const loom::order_plan plan = loom::plan_order(dag);
  CHECK(plan.order == std::vector<int>{0, 2, 1, 3, 4});
  CHECK(plan.memory.arena_bytes == 4224);
  CHECK(plan.memory.offsets == std::vector<std::size_t>{0, 0, 4096, 4160, 0});
  CHECK(declared.arena_bytes - plan.memory.arena_bytes == 4032);
  const std::string text = loom::describe(plan.memory, loom::buffer_uses(dag, plan.order));
  INFO(text);
  CHECK(text.find("arena 4224 bytes against 8384 bytes of separate buffers (50.4 %)") != std::string::npos);
}

TEST_CASE("arena: plan_order keeps outputs live to the end; a chain in order", "[arena]") {
  const std::vector<stage_node> chain = {{128, {}}, {64, {0}}, {256, {1}}};
  const auto plain = loom::buffer_uses(chain, {0, 1, 2});
  CHECK((plain[0].first_step == 0 && plain[0].last_step == 1));
  CHECK((plain[1].first_step == 1 && plain[1].last_step == 2));
  CHECK((plain[2].first_step == 2 && plain[2].last_step == 2));  // read by none: the result
  const auto kept = loom::buffer_uses(chain, {0, 1, 2}, {0});
  CHECK((kept[0].first_step == 0 && kept[0].last_step == 2));
  const loom::order_plan plan = loom::plan_order(chain, {0});
  CHECK(plan.order == std::vector<int>{0, 1, 2});
  CHECK(plan.memory.arena_bytes == 128 + 64 + 256);
  const loom::order_plan freed = loom::plan_order(chain);
  CHECK(freed.memory.arena_bytes == 320);  // 256 and 128 (never live together) at 0, 64 above the 256

  const loom::order_plan empty = loom::plan_order({});
  CHECK(empty.order.empty());
  CHECK(empty.memory.arena_bytes == 0);
  CHECK(shape_error_of([&] { loom::buffer_uses(chain, {1, 0, 2}); }) ==
        "loom::buffer_uses: stage 1 runs at step 0, before stage 0, which it reads, at step 1");
  CHECK(shape_error_of([&] { loom::buffer_uses(chain, {0, 1}); }) == "loom::buffer_uses: the order has 2 steps for 3 stages");
}

TEST_CASE("arena: plan_order reports cycles and bad stage numbers", "[arena]") {
  CHECK(shape_error_of([] { loom::plan_order({{64, {}}, {64, {0, 3}}, {64, {1}}, {64, {2}}, {64, {3}}}); }) ==
        "loom::plan_order: the stage graph has a cycle through stage 1 (stage 1 reads 3, which reads 2, which reads 1)");
  CHECK(shape_error_of([] { loom::plan_order({{64, {}}, {64, {1}}}); }) ==
        "loom::plan_order: the stage graph has a cycle through stage 1 (it reads itself)");
  // A stage downstream of a cycle is not on it.
  CHECK(shape_error_of([] { loom::plan_order({{64, {1}}, {64, {2}}, {64, {1}}, {64, {0}}}); }) ==
        "loom::plan_order: the stage graph has a cycle through stage 1 (stage 1 reads 2, which reads 1)");
  CHECK(shape_error_of([] { loom::plan_order({{64, {}}, {64, {2}}}); }) ==
        "loom::plan_order: stage 1 reads stage 2, but the stages are numbered 0 to 1");
  CHECK(shape_error_of([] { loom::plan_order({{64, {}}}, {1}); }) ==
        "loom::plan_order: output 1 is not a stage (they are numbered 0 to 0)");
  CHECK_THROWS_AS(loom::plan_order({{64, {}}, {64, {-1}}}), loom::error);
}

TEST_CASE("arena: plan_order above the exhaustive cap", "[arena]") {
  SECTION("eight two-stage branches and a join: the greedy order finishes each branch") {
    // Stage i (i < 8): 640 bytes; stage 8 + i reads it (64 bytes); stage 16 reads stages 8..15.
    // 17 stages, far more orders than the cap. The greedy step runs b_i right after a_i (it frees
    // 640 bytes for 64): a0 b0 a1 b1 ... a7 b7 join. The largest step is a7's with b0..b7: 640 +
    // 8 x 64 = 1152, and by size the a_i (never live together) share offset 0, the b_i stack above.
    std::vector<stage_node> dag;
    for (int i = 0; i < 8; ++i) dag.push_back({640, {}});
    for (int i = 0; i < 8; ++i) dag.push_back({64, {i}});
    dag.push_back({64, {8, 9, 10, 11, 12, 13, 14, 15}});
    const loom::order_plan plan = loom::plan_order(dag);
    std::vector<int> expected;
    for (int i = 0; i < 8; ++i) expected.push_back(i), expected.push_back(8 + i);
    expected.push_back(16);
    CHECK(plan.order == expected);
    CHECK(plan.memory.arena_bytes == 1152);
    // Declared order: all eight a_i are live at step 8, with b0.
    std::vector<int> declared(17);
    std::iota(declared.begin(), declared.end(), 0);
    CHECK(loom::plan_memory(loom::buffer_uses(dag, declared)).arena_bytes >= 8 * 640 + 64);
  }
  SECTION("random graphs of 8 to 120 stages: a topological order and a valid plan") {
    auto g = lt::make_rng("arena: plan_order above the cap");
    INFO("seed " << loom_test_seed());
    for (int c = 0; c < 40; ++c) {
      const int stages = static_cast<int>(lt::uniform(g, 8, c < 30 ? 20 : 120));
      const auto dag = random_dag(g, stages, lt::uniform(g, 0, 3) / 10.0);
      std::vector<int> outputs;
      if (lt::coin(g)) outputs.push_back(static_cast<int>(lt::uniform(g, 0, stages - 1)));
      INFO("case " << c << ": outputs {" << show(outputs) << "}" << show(dag));
      const loom::order_plan plan = loom::plan_order(dag, outputs);
      const std::string why = not_topological(dag, plan.order);
      INFO(why);
      REQUIRE(why.empty());
      const auto uses = live_ranges(dag, plan.order, outputs);
      CHECK(invalid(uses, plan.memory).empty());
      // Never worse than the first topological order, a candidate in both regimes.
      std::vector<int> first;
      std::vector<char> done(dag.size(), 0);
      while (first.size() < dag.size())
        for (std::size_t k = 0; k < dag.size(); ++k) {
          bool ready = !done[k];
          for (int j : dag[k].inputs) ready = ready && done[static_cast<std::size_t>(j)];
          if (ready) {
            first.push_back(static_cast<int>(k));
            done[k] = 1;
            break;
          }
        }
      CHECK(plan.memory.arena_bytes <= loom::plan_memory(live_ranges(dag, first, outputs)).arena_bytes);
    }
  }
}
