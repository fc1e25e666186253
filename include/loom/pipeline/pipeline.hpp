// SPDX-License-Identifier: MIT
// loom/pipeline/pipeline.hpp — loom::pipeline(def1, def2, ...): definitions in the order they are
// computed, the last writing a tensor (the pipeline's output). Stages (Funcs) connect them. The
// object owns one arena for its stages computed at root, planned from their live ranges (greedy
// by size, pipeline/arena.hpp) and kept from run to run, so a stored stage costs no allocation
// (and no page faults) after the first run.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <tuple>
#include <utility>
#include <vector>

#include "../expr/definition.hpp"
#include "arena.hpp"
#include "func.hpp"

namespace loom {

namespace detail {

/// The func_id a definition writes (void for a tensor output).
template <class D>
struct written_stage {
  using type = void;
};
template <class D>
  requires is_stage_view<typename D::lhs_type::view_type>
struct written_stage<D> {
  using type = typename D::lhs_type::view_type::tag_type;
};
template <class D>
using written_stage_t = typename written_stage<D>::type;

/// The func_ids a tree reads.
template <class A>
struct stage_read {
  using type = meta::list<>;
};
template <class A>
  requires reads_stage<A>
struct stage_read<A> {
  using type = meta::list<typename A::view_type::tag_type>;
};
template <class Accesses>
struct read_stages;
template <class... A>
struct read_stages<meta::list<A...>> {
  using type = meta::unique<meta::concat<meta::list<>, typename stage_read<A>::type...>>;
};
template <class D>
using read_stages_t = typename read_stages<typename D::rhs_type::accesses>::type;

/// Whether access A reads a stage with another element type or rank than the stage's definition
/// (in Defs, whose written stages are Written): two Funcs of one name, for a stage is known by it.
template <class Defs, class Written, class A>
consteval bool reads_other_type() {
  if constexpr (!reads_stage<A>) {
    return false;
  } else {
    using D = meta::at<Defs, meta::index_of<Written, typename A::view_type::tag_type>>;
    using L = typename D::lhs_type;
    return !std::is_same_v<typename A::value_type, typename L::value_type> || A::rank != L::rank;
  }
}
template <class Defs, class Written, class D>
consteval bool any_read_of_other_type() {
  return []<class... A>(meta::list<A...>*) {
    return (reads_other_type<Defs, Written, A>() || ... || false);
  }(static_cast<typename D::rhs_type::accesses*>(nullptr));
}

/// What is wrong with a list of definitions as a pipeline, as the first problem in order.
enum class pipeline_problem {
  none,
  empty,
  stage_defined_twice,
  stage_read_before_defined,
  stage_name_shared,
  last_not_tensor,
  stage_accumulates,
};

template <class... Defs>
consteval pipeline_problem first_pipeline_problem() {
  if constexpr (sizeof...(Defs) == 0) {
    return pipeline_problem::empty;
  } else {
    using written = meta::list<written_stage_t<Defs>...>;
    constexpr std::size_t n = sizeof...(Defs);
    // Per definition k: the stages it reads must be written by a definition before k.
    constexpr bool defined_twice = []<class... W>(meta::list<W...>*) {
      return ((!std::is_void_v<W> && meta::count<written, W> > 1) || ...);
    }(static_cast<written*>(nullptr));
    constexpr bool read_early = []<std::size_t... K>(std::index_sequence<K...>) {
      auto early_in = []<class... R>(meta::list<R...>*, [[maybe_unused]] std::size_t k) { return ((meta::index_of<written, R> >= k) || ...); };
      return (early_in(static_cast<read_stages_t<meta::at<meta::list<Defs...>, K>>*>(nullptr), K) || ...);
    }(std::make_index_sequence<n>{});
    constexpr bool accumulates = ((!std::is_void_v<written_stage_t<Defs>> && std::is_same_v<typename Defs::mode, assign_add>) || ...);
    if constexpr (defined_twice) return pipeline_problem::stage_defined_twice;
    else if constexpr (read_early) return pipeline_problem::stage_read_before_defined;
    else if constexpr ((any_read_of_other_type<meta::list<Defs...>, written, Defs>() || ...)) return pipeline_problem::stage_name_shared;
    else if constexpr (accumulates) return pipeline_problem::stage_accumulates;
    else if constexpr (!std::is_void_v<meta::at<written, n - 1>>) return pipeline_problem::last_not_tensor;
    else return pipeline_problem::none;
  }
}

template <pipeline_problem P>
constexpr void report_pipeline() {
  using enum pipeline_problem;
  static_assert(P != empty, "loom::pipeline: give it the definitions in the order they run, the last writing a tensor");
  static_assert(P != stage_defined_twice, "loom::pipeline: a Func is defined twice (each stage has one definition)");
  static_assert(P != stage_read_before_defined,
                "loom::pipeline: a definition reads a Func that no earlier definition of the pipeline defines "
                "(define each stage before its readers; a stage cannot read itself)");
  static_assert(P != stage_name_shared,
                "loom::pipeline: two Funcs share a name but not their element type or rank (a stage is known by its "
                "name: give each Func its own)");
  static_assert(P != stage_accumulates, "loom::pipeline: a Func is defined with +=; define a stage with = (sum(...) inside for a reduction)");
  static_assert(P != last_not_tensor, "loom::pipeline: the last definition must write a tensor (the pipeline's output), not a Func");
}

/// One buffer of a stored stage: grow-only, 64-byte aligned, owned by the pipeline.
class stage_buffer {
 public:
  void* get(std::size_t bytes) {
    if (bytes_ < bytes) {
      p_.reset();
      p_.reset(::operator new(bytes, std::align_val_t{64}));
      bytes_ = bytes;
    }
    return p_.get();
  }
  std::size_t bytes() const noexcept { return bytes_; }

  stage_buffer() = default;
  /// A moved-from buffer is empty (its size goes with the memory).
  stage_buffer(stage_buffer&& o) noexcept : p_(std::move(o.p_)), bytes_(std::exchange(o.bytes_, 0)) {}
  stage_buffer& operator=(stage_buffer&& o) noexcept {
    p_ = std::move(o.p_);
    bytes_ = std::exchange(o.bytes_, 0);
    return *this;
  }

 private:
  struct free64 {
    void operator()(void* p) const { ::operator delete(p, std::align_val_t{64}); }
  };
  std::unique_ptr<void, free64> p_;
  std::size_t bytes_ = 0;
};

}  // namespace detail

/// The definitions of a pipeline and the arena of its stages computed at root. Built by
/// loom::pipeline.
template <class... Defs>
class Pipeline {
 public:
  static constexpr std::size_t size = sizeof...(Defs);
  explicit Pipeline(const Defs&... d) : defs_(d...) {}

  const std::tuple<Defs...>& definitions() const { return defs_; }
  /// The bytes its arena holds now (kept for the next run).
  std::size_t buffer_bytes() const { return arena_.bytes(); }
  /// Frees the arena (the next run allocates it again).
  void release_buffers() {
    arena_ = detail::stage_buffer();
    plan_ = {};
  }

  /// The arena's plan for these stages, planned again only when they change (internal: used by
  /// loom::run). The key is the whole graph, not the sizes alone: two schedules of one pipeline
  /// can put different stages at root with the same sizes, and each needs its own order.
  struct arena_plan {
    std::vector<std::size_t> bytes;  // per stage that runs at root (0: a tensor output)
    std::vector<stage_node> dag;
    std::vector<int> outputs;
    order_plan plan;
    std::vector<buffer_use> uses;
  };
  const arena_plan& plan_for(const std::vector<std::size_t>& bytes, const std::vector<stage_node>& dag, const std::vector<int>& outputs) {
    if (dag.empty() || (!plan_.plan.order.empty() && plan_.bytes == bytes && plan_.dag == dag && plan_.outputs == outputs))
      return plan_;
    plan_.bytes = bytes;
    plan_.dag = dag;
    plan_.outputs = outputs;
    plan_.plan = plan_order(dag, outputs);
    plan_.uses = buffer_uses(dag, plan_.plan.order, outputs);
    return plan_;
  }
  /// The arena, at least `bytes` long (internal: used by loom::run).
  std::byte* arena(std::size_t bytes) { return static_cast<std::byte*>(arena_.get(std::max<std::size_t>(bytes, 64))); }

 private:
  std::tuple<Defs...> defs_;
  detail::stage_buffer arena_;
  arena_plan plan_;
};

template <class T>
inline constexpr bool is_pipeline = false;
template <class... D>
inline constexpr bool is_pipeline<Pipeline<D...>> = true;

/// loom::pipeline(bx(y, x) = ..., out(y, x) = ...): nothing runs until loom::run.
template <Definition... Defs>
auto pipeline(const Defs&... defs) {
  constexpr detail::pipeline_problem problem = detail::first_pipeline_problem<Defs...>();
  detail::report_pipeline<problem>();
  return Pipeline<Defs...>(defs...);
}

}  // namespace loom
