// SPDX-License-Identifier: MIT
// loom/core/tensor.hpp — TensorView (non-owning, any strides) and Tensor (owning, 64-byte
// aligned, row-major). Integers index an element; index expressions build an expression access.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "config.hpp"
#include "error.hpp"
#include "extents.hpp"
#include "layout.hpp"
#include "name.hpp"

namespace loom {

template <std::size_t R>
using shape_t = std::array<index_t, R>;
template <std::size_t R>
using strides_t = std::array<index_t, R>;

/// loom::shape(M, N) and loom::strides(ld, 1): spelled-out arguments for loom::view.
template <class... I>
constexpr shape_t<sizeof...(I)> shape(I... e) { return {static_cast<index_t>(e)...}; }
template <class... I>
constexpr strides_t<sizeof...(I)> strides(I... s) { return {static_cast<index_t>(s)...}; }

namespace detail {
/// Throws shape_error naming the tensor if an extent is negative: before any allocation or view.
template <std::size_t R>
void check_extents(const shape_t<R>& e, std::string_view name) {
  for (std::size_t d = 0; d < R; ++d)
    if (e[d] < 0) throw shape_error(cat("loom: tensor '", name, "': dimension ", d, " has negative extent ", e[d]));
}

/// The extents as "A x B x C", for messages.
template <std::size_t R>
std::string extents_text(const shape_t<R>& e) {
  std::string s;
  for (std::size_t d = 0; d < R; ++d) s += cat(d == 0 ? "" : " x ", e[d]);
  return s;
}

/// The bytes an owning tensor of these (non-negative) extents needs; shape_error if its element
/// count or its bytes overflow 64 bits (a wrapped count would allocate too little).
template <std::size_t R>
std::size_t checked_bytes(const shape_t<R>& e, std::size_t elem, std::string_view name) {
  for (std::size_t d = 0; d < R; ++d)
    if (e[d] == 0) return 0;  // no elements, however large the other extents
  index_t n = 1;
  bool over = false;
  for (std::size_t d = 0; d < R; ++d) over = over || __builtin_mul_overflow(n, e[d], &n);
  std::size_t bytes = 0;
  over = over || __builtin_mul_overflow(static_cast<std::size_t>(n), elem, &bytes);
  if (over)
    throw shape_error(cat("loom: tensor '", name, "' of extents ", extents_text(e), ": its size overflows 64 bits"));
  return bytes;
}

/// Whether a non-empty view's reach, data + [lo, hi] elements over every index, is addressable:
/// a non-null pointer, and (e - 1) * stride summed over dimensions (and its bytes) within 64 bits.
template <std::size_t R>
LOOM_INLINE bool view_fits(const void* data, const shape_t<R>& e, const strides_t<R>& s, index_t elem) {
  index_t lo = 0, hi = 0, reach = 0;
  bool over = false;
  for (std::size_t d = 0; d < R; ++d) {
    if (e[d] == 0) return true;  // empty: never read or written
    over |= __builtin_mul_overflow(e[d] - 1, s[d], &reach);
    over |= reach < 0 ? __builtin_add_overflow(lo, reach, &lo) : __builtin_add_overflow(hi, reach, &hi);
  }
  over |= __builtin_add_overflow(hi, 1, &hi);
  // Bytes: one-byte elements skip the multiplications (clang 14 at -O2 crashes in instruction
  // selection on `x * 1` checked for overflow, once x is a product of another view's strides).
  if (elem != 1) over |= __builtin_mul_overflow(lo, elem, &lo) || __builtin_mul_overflow(hi, elem, &hi);
  return data != nullptr && !over;
}

/// The error for a view that view_fits rejects, out of line and cold.
template <std::size_t R>
[[noreturn]] LOOM_COLD void view_error(const void* data, const shape_t<R>& e, const strides_t<R>& s, std::string_view name) {
  if (data == nullptr)
    throw shape_error(cat("loom: view '", name, "' of extents ", extents_text(e), " has a null data pointer"));
  throw shape_error(cat("loom: view '", name, "' of extents ", extents_text(e), " and strides ", extents_text(s),
                        ": the span it reaches overflows 64 bits"));
}
}  // namespace detail

/// Row-major strides. Their products wrap (no overflow is undefined) only where the shape's
/// element count overflows 64 bits: an empty shape, whose strides are never used to address, or
/// one that view_fits then rejects.
template <std::size_t R>
constexpr strides_t<R> row_major_strides(const shape_t<R>& e) {
  strides_t<R> s{};
  std::uint64_t acc = 1;
  for (std::size_t d = R; d-- > 0;) {
    s[d] = index_t(acc);
    acc *= std::uint64_t(std::max<index_t>(e[d], 1));
  }
  return s;
}

/// `A(i, k + 1)`: indices that are not all integers build an expression access. The expression
/// layer supplies make_access(view, indices...) (expr/access.hpp), found by argument-dependent
/// lookup when the call is instantiated, so core/ depends on nothing above it.
template <class Derived, std::size_t Rank>
struct indexable {
  template <class... I>
    requires(sizeof...(I) == 0 || !(std::is_integral_v<I> && ...))
  auto operator()(const I&... i) {
    return make_access(static_cast<Derived&>(*this).as_view(), i...);
  }
  template <class... I>
    requires(sizeof...(I) == 0 || !(std::is_integral_v<I> && ...))
  auto operator()(const I&... i) const {
    return make_access(static_cast<const Derived&>(*this).as_view(), i...);
  }
};

template <class T, std::size_t Rank, class Ext = dims<Rank>, class Layout = layout_stride>
class TensorView : public indexable<TensorView<T, Rank, Ext, Layout>, Rank> {
  static_assert(is_extents<Ext> && Ext::rank == Rank, "loom::TensorView<T, Rank, Ext>: Ext must be loom::extents of rank Rank");
  static_assert(std::is_arithmetic_v<T>, "loom::TensorView<T, ...>: T must be an arithmetic type");
  static_assert(is_layout<Layout>, "loom::TensorView<T, Rank, Ext, Layout>: Layout must be loom::layout_stride or loom::layout_right");
  static constexpr bool unit_last = std::is_same_v<Layout, layout_right> && Rank > 0;

 public:
  using value_type = std::remove_const_t<T>;
  using element_type = T;
  using extents_type = Ext;
  using layout_type = Layout;
  static constexpr std::size_t rank = Rank;

  TensorView() = default;
  // Names are taken as a string_view and written in place: building a tensor_name first and
  // copying it (32 bytes, wide loads right after byte stores) stalls on store forwarding, which a
  // 16x16 GEMM that makes its views per call pays for every view.
  // Always inlined, with the one below: clang calls them out of line otherwise, and a small GEMM
  // then reads the strides back through memory (docs/tuning.md#small-gemm).
  LOOM_INLINE TensorView(T* data, const Ext& ext, const strides_t<Rank>& str, std::string_view name = "view")
      : data_(data), ext_(ext), stride_(str), name_(name) {
    if (!detail::view_fits<Rank>(data, ext.values(), str, index_t(sizeof(T))))
      detail::view_error<Rank>(data, ext.values(), str, name);
    if constexpr (unit_last) {
      if (str[Rank - 1] != 1)
        throw shape_error(detail::cat("loom: a layout_right view of '", name, "' needs stride 1 in its last dimension, not ", str[Rank - 1]));
    }
  }
  LOOM_INLINE TensorView(T* data, const Ext& ext, std::string_view name = "view")
      : TensorView(data, ext, row_major_strides<Rank>(ext.values()), name) {}
  TensorView(T* data, const Ext& ext, const strides_t<Rank>& str, const tensor_name& name)
      : TensorView(data, ext, str, name.view()) {}
  TensorView(T* data, const Ext& ext, const tensor_name& name) : TensorView(data, ext, name.view()) {}

  /// Implicit where nothing is lost: to const elements, to all-dynamic extents, from
  /// layout_right to layout_stride.
  template <class U, class E2, class L2>
    requires((!std::is_same_v<U, T> || !std::is_same_v<E2, Ext> || !std::is_same_v<L2, Layout>) &&
             std::is_convertible_v<U (*)[], T (*)[]> && (std::is_same_v<E2, Ext> || std::is_same_v<Ext, dims<Rank>>) &&
             (std::is_same_v<L2, Layout> || std::is_same_v<Layout, layout_stride>))
  TensorView(const TensorView<U, Rank, E2, L2>& o)
      : data_(o.data()), ext_(convert_extents(o.extents())), stride_(o.strides()), name_(o.name_tag()) {}

  T* data() const { return data_; }
  index_t extent(std::size_t d) const { return ext_.extent(d); }
  index_t stride(std::size_t d) const {
    if constexpr (unit_last) {
      if (d + 1 == Rank) return 1;
    }
    return stride_[d];
  }
  const Ext& extents() const { return ext_; }
  const strides_t<Rank>& strides() const { return stride_; }
  index_t size() const { return ext_.size(); }
  /// The bytes [first, last) the view can touch (an empty range for an empty view).
  std::pair<const char*, const char*> byte_span() const {
    const char* b = reinterpret_cast<const char*>(data_);
    index_t lo = 0, hi = 0;
    for (std::size_t d = 0; d < Rank; ++d) {
      if (ext_.extent(d) == 0) return {b, b};
      const index_t reach = (ext_.extent(d) - 1) * stride(d);
      lo += std::min<index_t>(reach, 0);  // values, not a reference picked by sign: clang kept
      hi += std::max<index_t>(reach, 0);  // lo and hi in memory for that
    }
    return {b + lo * index_t(sizeof(T)), b + (hi + 1) * index_t(sizeof(T))};
  }
  std::string_view name() const { return name_.view(); }
  const tensor_name& name_tag() const { return name_; }
  TensorView& set_name(std::string_view n) {
    name_.set(n);
    return *this;
  }

  /// By reference: a view holds its name inline (32 bytes), and hot paths (a small static GEMM
  /// per call) should not pay a copy of it.
  const TensorView& as_view() const { return *this; }

  /// Element access by integers (no bounds check, like operator[] of std containers).
  template <class... I>
    requires(sizeof...(I) > 0 && (std::is_integral_v<I> && ...))
  T& operator()(I... idx) const {
    static_assert(sizeof...(I) == Rank, "loom: a tensor is indexed with one integer per dimension: the count differs from its rank");
    return data_[offset(std::array<index_t, Rank>{static_cast<index_t>(idx)...})];
  }
  using indexable<TensorView, Rank>::operator();

  index_t offset(const std::array<index_t, Rank>& idx) const {
    index_t o = 0;
    for (std::size_t d = 0; d < Rank; ++d) o += idx[d] * stride_[d];
    return o;
  }

  /// The view with dimensions permuted: dimension d of the result is dimension P[d] of this.
  template <std::size_t... P>
    requires(sizeof...(P) == Rank)
  TensorView<T, Rank> permuted() const {
    return TensorView<T, Rank>(data_, dims<Rank>(shape_t<Rank>{ext_.extent(P)...}), strides_t<Rank>{stride_[P]...}, name_);
  }
  /// Rank-2 transpose: a view, nothing moves.
  TensorView<T, Rank> transposed() const
    requires(Rank == 2)
  {
    return permuted<1, 0>();
  }
  /// A sub-block starting at `first` with extents `count` (checked).
  /// (Rows of a row-major view stay rows: the block keeps the layout.)
  TensorView<T, Rank, dims<Rank>, Layout> block(const shape_t<Rank>& first, const shape_t<Rank>& count) const {
    for (std::size_t d = 0; d < Rank; ++d)
      if (first[d] < 0 || count[d] < 0 || first[d] > ext_.extent(d) || count[d] > ext_.extent(d) - first[d]) {
        index_t end = 0;  // first + count, unless that overflows (then it is only named)
        if (__builtin_add_overflow(first[d], count[d], &end))
          throw bounds_error(detail::cat("loom: block of '", name_.str(), "' dimension ", d, ": first ", first[d], " and count ", count[d], " are outside extent ", ext_.extent(d)));
        throw bounds_error(detail::cat("loom: block of '", name_.str(), "' dimension ", d, ": [", first[d], ", ", end, ") is outside extent ", ext_.extent(d)));
      }
    bool empty = std::any_of(count.begin(), count.end(), [](index_t c) { return c == 0; });
    return TensorView<T, Rank, dims<Rank>, Layout>(empty ? data_ : data_ + offset(first), dims<Rank>(count), stride_, name_);
  }
  /// Every element with a stride of `step` along each dimension (step >= 1).
  TensorView<T, Rank> strided(const shape_t<Rank>& step) const {
    shape_t<Rank> e{};
    strides_t<Rank> s{};
    for (std::size_t d = 0; d < Rank; ++d) {
      if (step[d] < 1) throw shape_error(detail::cat("loom: strided view of '", name_.str(), "': step must be >= 1"));
      e[d] = ext_.extent(d) == 0 ? 0 : (ext_.extent(d) - 1) / step[d] + 1;  // no overflow for any step
      // A product that overflows only matters for a dimension with two or more elements: the
      // view's constructor rejects those; a single element's stride is never used.
      if (__builtin_mul_overflow(stride_[d], step[d], &s[d])) s[d] = e[d] > 1 ? std::numeric_limits<index_t>::max() : 0;
    }
    return TensorView<T, Rank>(data_, dims<Rank>(e), s, name_);
  }
  /// The same view with all extents dynamic.
  TensorView<T, Rank, dims<Rank>, Layout> dynamic() const { return *this; }

 private:
  T* data_ = nullptr;
  Ext ext_{};
  strides_t<Rank> stride_{};
  tensor_name name_{std::string_view("view")};

  /// Same extents type: a copy (already validated); to all-dynamic: the values.
  template <class E2>
  static Ext convert_extents(const E2& e) {
    if constexpr (std::is_same_v<E2, Ext>) return e;
    else return Ext(e.values());
  }
};

/// A non-owning view of user memory: loom::view(ptr, shape(M, N)) (row-major, layout_right) or
/// loom::view(ptr, shape(M, N), strides(1, M)) (column-major), any strides in elements.
///
/// Always inlined, as the constructors are: returned from a call, a view comes back through
/// memory, and reading it stalls on the narrower stores that wrote it (docs/tuning.md#small-gemm).
/// Throws loom::shape_error naming the view, before anything runs, for a negative extent, a null
/// pointer with a non-empty shape, or strides whose reach overflows 64 bits.
template <class T, std::size_t R>
LOOM_INLINE TensorView<T, R> view(T* data, const shape_t<R>& e, const strides_t<R>& s, std::string_view name = "view") {
  detail::check_extents<R>(e, name);
  return TensorView<T, R>(data, dims<R>(e), s, name);
}
template <class T, std::size_t R>
LOOM_INLINE TensorView<T, R, dims<R>, layout_right> view(T* data, const shape_t<R>& e, std::string_view name = "view") {
  detail::check_extents<R>(e, name);
  return TensorView<T, R, dims<R>, layout_right>(data, dims<R>(e), name);
}

namespace detail {
struct aligned_free {
  void operator()(void* p) const { ::operator delete(p, std::align_val_t{64}); }
};
}  // namespace detail

/// Owning, 64-byte aligned, row-major, zero-initialised.
template <class T, std::size_t Rank, class Ext = dims<Rank>>
class Tensor : public indexable<Tensor<T, Rank, Ext>, Rank> {
 public:
  using value_type = T;
  using view_type = TensorView<T, Rank, Ext, layout_right>;
  using const_view_type = TensorView<const T, Rank, Ext, layout_right>;
  static constexpr std::size_t rank = Rank;

  Tensor() requires(Ext::rank_dynamic == 0) : Tensor(Ext{}, tensor_name()) {}

  /// Throws loom::shape_error naming the tensor for a negative extent or a size that overflows
  /// 64 bits, and std::bad_alloc when the memory cannot be had.
  template <class... I>
    requires((sizeof...(I) == Rank || sizeof...(I) == Ext::rank_dynamic) && sizeof...(I) > 0 &&
             (std::is_integral_v<I> && ...))
  explicit Tensor(I... e) : Tensor(checked_ext(tensor_name(), e...)) {}

  template <class... I>
    requires((sizeof...(I) == Rank || sizeof...(I) == Ext::rank_dynamic) && (std::is_integral_v<I> && ...))
  explicit Tensor(std::string_view name, I... e) : Tensor(checked_ext(tensor_name(name), e...)) {}

  explicit Tensor(const shape_t<Rank>& e, std::string_view name = {})
      : Tensor(checked_ext(name.empty() ? tensor_name() : tensor_name(name), e)) {}

  Tensor(const Tensor& o) : Tensor(o.view_.extents(), o.view_.name_tag()) {
    if (o.size() > 0 && o.data() != nullptr) std::memcpy(data(), o.data(), sizeof(T) * static_cast<std::size_t>(o.size()));
  }
  /// Copies o's elements (and name). Of the same extents, into this tensor's own storage, so the
  /// views taken of it stay valid (as std::vector's assignment keeps its buffer); otherwise into
  /// new storage, and earlier views dangle.
  Tensor& operator=(const Tensor& o) {
    if (this == &o) return *this;
    if (storage_ && o.storage_ && view_.extents().values() == o.view_.extents().values()) {
      std::memcpy(data(), o.data(), sizeof(T) * static_cast<std::size_t>(o.size()));
      view_ = view_type(data(), o.view_.extents(), o.view_.name_tag());
    } else {
      *this = Tensor(o);
    }
    return *this;
  }
  /// A moved-from tensor owns nothing: its dynamic extents are 0 and its data null (with static
  /// extents only, it has no elements to read: assign to it before use), as a moved-from
  /// std::vector is empty. It keeps its name.
  Tensor(Tensor&& o) noexcept : storage_(std::move(o.storage_)), view_(o.view_) { o.view_ = moved_from(o.view_); }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      storage_ = std::move(o.storage_);
      view_ = o.view_;
      o.view_ = moved_from(o.view_);
    }
    return *this;
  }

  T* data() { return view_.data(); }
  const T* data() const { return view_.data(); }
  index_t extent(std::size_t d) const { return view_.extent(d); }
  index_t stride(std::size_t d) const { return view_.stride(d); }
  const Ext& extents() const { return view_.extents(); }
  index_t size() const { return view_.size(); }
  std::string_view name() const { return view_.name(); }
  Tensor& set_name(std::string_view n) {
    view_.set_name(n);
    return *this;
  }

  view_type view() { return view_; }
  const_view_type view() const { return view_; }
  /// To its own view type, or to any view type that one converts to (const, dynamic, strided).
  template <class U, class E2, class L2>
    requires std::is_convertible_v<const view_type&, TensorView<U, Rank, E2, L2>>
  operator TensorView<U, Rank, E2, L2>() { return view_; }
  template <class U, class E2, class L2>
    requires std::is_convertible_v<const const_view_type&, TensorView<U, Rank, E2, L2>>
  operator TensorView<U, Rank, E2, L2>() const { return const_view_type(view_); }
  const view_type& as_view() { return view_; }
  const_view_type as_view() const { return view_; }

  template <class... I>
    requires(sizeof...(I) > 0 && (std::is_integral_v<I> && ...))
  T& operator()(I... idx) {
    return view_(idx...);
  }
  template <class... I>
    requires(sizeof...(I) > 0 && (std::is_integral_v<I> && ...))
  const T& operator()(I... idx) const {
    return view_(idx...);
  }
  using indexable<Tensor, Rank>::operator();

  TensorView<T, Rank> transposed() requires(Rank == 2) { return view_.transposed(); }
  TensorView<T, Rank, dims<Rank>, layout_right> block(const shape_t<Rank>& first, const shape_t<Rank>& count) { return view_.block(first, count); }
  TensorView<T, Rank> strided(const shape_t<Rank>& step) { return view_.strided(step); }
  template <std::size_t... P>
  TensorView<T, Rank> permuted() { return view_.template permuted<P...>(); }

  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }

 private:
  /// The extents, checked (negative values, then an overflowing size) before anything is allocated.
  template <class... I>
    requires(std::is_integral_v<I> && ...)
  static std::pair<Ext, tensor_name> checked_ext(tensor_name name, I... e) {
    const std::array<index_t, sizeof...(I)> raw{static_cast<index_t>(e)...};
    return checked_ext(name, raw);
  }
  template <std::size_t N>
  static std::pair<Ext, tensor_name> checked_ext(tensor_name name, const std::array<index_t, N>& raw) {
    detail::check_extents<N>(raw, name.view());
    if constexpr (N == Rank) {
      for (std::size_t d = 0; d < Rank; ++d)
        if (Ext::static_extent(d) != dyn && Ext::static_extent(d) != raw[d])
          throw shape_error(detail::cat("loom: tensor '", name.view(), "': dimension ", d, " is static with extent ",
                                        Ext::static_extent(d), " but ", raw[d], " was given"));
    }
    Ext ext(raw);
    detail::checked_bytes<Rank>(ext.values(), sizeof(T), name.view());
    return {ext, name};
  }
  explicit Tensor(const std::pair<Ext, tensor_name>& checked) : Tensor(checked.first, checked.second) {}

  static view_type moved_from(const view_type& v) {
    view_type empty;
    empty.set_name(v.name());
    return empty;
  }

  Tensor(const Ext& ext, tensor_name name) {
    // At least one element so data() is never null (a rank-0 tensor holds one value).
    const std::size_t bytes = std::max(detail::checked_bytes<Rank>(ext.values(), sizeof(T), name.view()), sizeof(T));
    void* p = ::operator new(bytes, std::align_val_t{64});
    std::memset(p, 0, bytes);
    storage_.reset(p);
    view_ = view_type(static_cast<T*>(p), ext, name);
  }

  std::unique_ptr<void, detail::aligned_free> storage_;
  view_type view_;
};

/// Whether two views can touch a common byte: the aliasing checks of loom::run and loom::gemm.
/// Conservative: their address ranges intersect (views that interleave, even and odd columns of
/// one matrix, count as overlapping; a run then computes into a temporary, loom::gemm refuses).
/// Inline, since a 16 x 16 GEMM makes two per call of under 100 ns. Addresses compare as integers:
/// `<` between pointers into different objects is unspecified, and <functional>'s std::less would
/// cost every program that includes loom compile time (docs/tuning.md#compile-time).
template <class A, class B>
LOOM_INLINE bool views_overlap(const A& a, const B& b) {
  const auto [a0, a1] = a.byte_span();
  const auto [b0, b1] = b.byte_span();
  const auto at = [](const char* p) { return reinterpret_cast<std::uintptr_t>(p); };
  return at(a0) < at(a1) && at(b0) < at(b1) && at(a0) < at(b1) && at(b0) < at(a1);
}

namespace detail {
/// A dimension along which view v names one element at two index tuples (a stride of 0 over an
/// extent of 2 or more, or strides that interleave), or -1 when every element is distinct. An
/// output like that has no single value per element: loom::run refuses it (alias_error).
/// Row-major views are distinct by type; other views are checked by their strides sorted by
/// size (each must step past all the smaller ones reach), and where that test fails, by listing
/// their offsets (up to 2^22 elements; beyond, they are taken as distinct).
template <class V>
index_t repeated_dimension(const V& v) {
  if constexpr (std::is_same_v<typename V::layout_type, layout_right>) {
    return -1;
  } else {
    constexpr std::size_t R = V::rank;
    std::array<std::size_t, R == 0 ? 1 : R> order{};
    std::size_t n = 0;
    for (std::size_t d = 0; d < R; ++d)
      if (v.extent(d) == 0) return -1;  // no elements, whatever the other dimensions' strides
    for (std::size_t d = 0; d < R; ++d) {
      if (v.extent(d) == 1) continue;
      if (v.stride(d) == 0) return index_t(d);
      order[n++] = d;
    }
    const auto size = [&](std::size_t d) { return v.stride(d) < 0 ? -v.stride(d) : v.stride(d); };
    for (std::size_t q = 1; q < n; ++q)  // insertion sort: a handful of dimensions
      for (std::size_t r = q; r > 0 && size(order[r]) < size(order[r - 1]); --r) std::swap(order[r], order[r - 1]);
    index_t reach = 0;  // the largest offset the smaller strides reach
    bool nested = true;
    for (std::size_t q = 0; q < n && nested; ++q) {
      nested = size(order[q]) > reach;
      reach += size(order[q]) * (v.extent(order[q]) - 1);
    }
    if (nested || v.size() > (index_t(1) << 22)) return -1;
    std::vector<index_t> offsets;
    offsets.reserve(std::size_t(v.size()));
    std::array<index_t, R == 0 ? 1 : R> idx{};
    for (index_t q = 0, total = v.size(); q < total; ++q) {
      index_t o = 0;
      for (std::size_t d = 0; d < R; ++d) o += idx[d] * v.stride(d);
      offsets.push_back(o);
      for (std::size_t d = R; d-- > 0;) {
        if (++idx[d] < v.extent(d)) break;
        idx[d] = 0;
      }
    }
    std::sort(offsets.begin(), offsets.end());
    if (std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end()) return -1;
    return index_t(order[n - 1]);
  }
}

/// Throws alias_error when output view v names an element twice (repeated_dimension).
template <class V>
void check_distinct_elements(const V& v, std::string_view who) {
  if (const index_t d = repeated_dimension(v); d >= 0) [[unlikely]]
    throw alias_error(cat(who, ": the output '", v.name(), "' names some elements more than once (dimension ", d, ": extent ",
                          v.extent(std::size_t(d)), ", stride ", v.stride(std::size_t(d)),
                          "), so its points would overwrite one another; write to a view whose elements are distinct"));
}
}  // namespace detail

template <class V>
inline constexpr bool is_view = false;
template <class T, std::size_t R, class E, class L>
inline constexpr bool is_view<TensorView<T, R, E, L>> = true;

}  // namespace loom
