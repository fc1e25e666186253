// SPDX-License-Identifier: MIT
// loom/core/region.hpp — a view of a box of a larger index space: element (o + e) of the space is
// element e of the view, for the box's first index o (its origin). A pipeline's intermediate
// stages live in such boxes (the region a consumer needs, halo included), and a stage computed
// over part of its output writes through one, so every access keeps the indices the user wrote.
#pragma once
#include <array>

#include "tensor.hpp"

namespace loom {

/// Tag: the region belongs to no named stage (a tensor output seen over a box of it).
struct no_stage {};

/// TensorView of the box [origin, origin + extents) of an index space. Tag names the stage whose
/// values it holds (a Func's identity), so accesses to different stages have different types.
template <class T, std::size_t Rank, class Layout = layout_right, class Tag = no_stage>
class region_view : public TensorView<T, Rank, dims<Rank>, Layout> {
 public:
  using base_view = TensorView<T, Rank, dims<Rank>, Layout>;
  using tag_type = Tag;
  static constexpr bool has_origin = true;

  region_view() = default;
  region_view(const base_view& v, const shape_t<Rank>& origin) : base_view(v), origin_(origin) {}

  index_t origin(std::size_t d) const { return origin_[d]; }

  /// Index expressions build an access that keeps the origin (expr/access.hpp's make_access, by
  /// argument-dependent lookup); integers index the space, not the box.
  template <class... I>
    requires(sizeof...(I) == 0 || !(std::is_integral_v<I> && ...))
  auto operator()(const I&... i) const {
    return make_access(*this, i...);
  }
  template <class... I>
    requires(sizeof...(I) > 0 && (std::is_integral_v<I> && ...))
  T& operator()(I... idx) const {
    static_assert(sizeof...(I) == Rank, "loom: a region is indexed with one integer per dimension");
    shape_t<Rank> at{static_cast<index_t>(idx)...};
    for (std::size_t d = 0; d < Rank; ++d) at[d] -= origin_[d];
    return this->data()[this->offset(at)];
  }
  const region_view& as_view() const { return *this; }
  const shape_t<Rank>& origins() const { return origin_; }

  /// The sub-box [first, first + count) in the space's indices (checked by the caller).
  region_view box(const shape_t<Rank>& first, const shape_t<Rank>& count) const {
    shape_t<Rank> rel{};
    for (std::size_t d = 0; d < Rank; ++d) rel[d] = first[d] - origin_[d];
    return region_view(base_view::block(rel, count), first);
  }

 private:
  shape_t<Rank> origin_{};
};

/// Whether a view holds a pipeline stage's values (a Func's, or an implicit stage's), not a tensor's.
template <class V>
inline constexpr bool is_stage_view = false;
template <class T, std::size_t R, class L, class Tag>
inline constexpr bool is_stage_view<region_view<T, R, L, Tag>> = !std::is_same_v<Tag, no_stage>;

/// Whether an access reads a stage.
template <class A>
inline constexpr bool reads_stage = is_stage_view<typename A::view_type>;

template <class V>
inline constexpr bool has_origin = false;
template <class T, std::size_t R, class L, class Tag>
inline constexpr bool has_origin<region_view<T, R, L, Tag>> = true;

/// The first index of dimension d of a view: its origin for a region, else 0.
template <class V>
LOOM_INLINE index_t origin_of(const V& v, std::size_t d) {
  if constexpr (has_origin<V>) return v.origin(d);
  else return 0;
}

}  // namespace loom
