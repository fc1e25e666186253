// SPDX-License-Identifier: MIT
// loom/pipeline/func.hpp — a named intermediate stage: `constexpr loom::Func<float, 2, "bx"> bx;`
// It holds no storage. Defined once, `bx(y, x) = ...`, and read by later definitions, `bx(y - 1, x)`;
// the pipeline decides where its values live (inlined into each reader, a buffer of its whole
// required region, or per-thread tiles inside a consumer's loop).
#pragma once
#include <string>
#include <string_view>

#include "../core/region.hpp"
#include "../expr/access.hpp"
#include "../expr/var.hpp"

namespace loom {

/// The identity of a stage: its name, as a type (two Funcs with one name are one stage).
template <fixed_string Name>
struct func_id {
  static constexpr std::string_view name() { return std::string_view(Name.data, sizeof(Name.data) - 1); }
};

/// A stage named Name with Rank dimensions of T. Empty and structural, so a schedule names it as
/// it names a variable: loom::stage<bx, loom::compute_root>.
template <class T, std::size_t Rank, fixed_string Name>
struct Func {
  static_assert(std::is_arithmetic_v<T> && !std::is_const_v<T>, "loom::Func<T, Rank, Name>: T must be an arithmetic type");
  static_assert(Rank >= 1, "loom::Func<T, Rank, Name>: a stage has at least one dimension");
  using value_type = T;
  using id = func_id<Name>;
  /// The stage's values over the box of its index space that a run computes.
  using view_type = region_view<T, Rank, layout_right, id>;
  static constexpr std::size_t rank = Rank;
  static constexpr std::string_view name() { return id::name(); }

  template <class... I>
  auto operator()(const I&... i) const {
    view_type v;
    v.set_name(name());
    return make_access(v, i...);
  }
};

}  // namespace loom
