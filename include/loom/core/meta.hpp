// SPDX-License-Identifier: MIT
// loom/core/meta.hpp — a minimal type list: the compile-time loop nest and variable sets are
// built from these. Fold expressions only, so instantiation depth stays flat.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

namespace loom::meta {

template <class... Ts>
struct list {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class T>
inline constexpr bool always_false = false;

// contains<L, T>
template <class L, class T>
struct contains_impl;
template <class... Ts, class T>
struct contains_impl<list<Ts...>, T> : std::bool_constant<(std::is_same_v<Ts, T> || ...)> {};
template <class L, class T>
inline constexpr bool contains = contains_impl<L, T>::value;

// index_of<L, T>: position of T in L, or L::size when absent.
template <class L, class T>
struct index_of_impl;
template <class... Ts, class T>
struct index_of_impl<list<Ts...>, T> {
  static constexpr std::size_t value = [] {
    constexpr bool hit[] = {std::is_same_v<Ts, T>..., false};
    std::size_t k = 0;
    while (k < sizeof...(Ts) && !hit[k]) ++k;
    return k;
  }();
};
template <class L, class T>
inline constexpr std::size_t index_of = index_of_impl<L, T>::value;

// count<L, T>: how many times T occurs in L.
template <class L, class T>
struct count_impl;
template <class... Ts, class T>
struct count_impl<list<Ts...>, T> {
  static constexpr std::size_t value = (std::size_t{std::is_same_v<Ts, T>} + ... + 0);
};
template <class L, class T>
inline constexpr std::size_t count = count_impl<L, T>::value;

// concat<L...>
template <class... Ls>
struct concat_impl;
template <>
struct concat_impl<> {
  using type = list<>;
};
template <class... As>
struct concat_impl<list<As...>> {
  using type = list<As...>;
};
template <class... As, class... Bs, class... Rest>
struct concat_impl<list<As...>, list<Bs...>, Rest...> {
  using type = typename concat_impl<list<As..., Bs...>, Rest...>::type;
};
template <class... Ls>
using concat = typename concat_impl<Ls...>::type;

// unique<L>: first occurrences kept, in order.
template <class Acc, class L>
struct unique_impl;
template <class Acc>
struct unique_impl<Acc, list<>> {
  using type = Acc;
};
template <class... As, class T, class... Ts>
struct unique_impl<list<As...>, list<T, Ts...>> {
  using type = typename unique_impl<
      std::conditional_t<contains<list<As...>, T>, list<As...>, list<As..., T>>, list<Ts...>>::type;
};
template <class L>
using unique = typename unique_impl<list<>, L>::type;

// at<L, N>
template <class L, std::size_t N>
struct at_impl;
template <class T, class... Ts>
struct at_impl<list<T, Ts...>, 0> {
  using type = T;
};
template <class T, class... Ts, std::size_t N>
struct at_impl<list<T, Ts...>, N> {
  using type = typename at_impl<list<Ts...>, N - 1>::type;
};
template <class L, std::size_t N>
using at = typename at_impl<L, N>::type;

// filter<L, Pred>: keeps the T with Pred<T>::value.
template <class L, template <class> class Pred>
struct filter_impl;
template <class... Ts, template <class> class Pred>
struct filter_impl<list<Ts...>, Pred> {
  using type = concat<std::conditional_t<Pred<Ts>::value, list<Ts>, list<>>...>;
};
template <class L, template <class> class Pred>
using filter = typename filter_impl<L, Pred>::type;

// drop_front<L, N> / take_front<L, N>
template <class L, class Seq>
struct take_impl;
template <class... Ts, std::size_t... I>
struct take_impl<list<Ts...>, std::index_sequence<I...>> {
  using type = list<at<list<Ts...>, I>...>;
};
template <class L, std::size_t N>
using take_front = typename take_impl<L, std::make_index_sequence<N>>::type;

template <class L, std::size_t N, class Seq>
struct drop_impl;
template <class... Ts, std::size_t N, std::size_t... I>
struct drop_impl<list<Ts...>, N, std::index_sequence<I...>> {
  using type = list<at<list<Ts...>, N + I>...>;
};
template <class L, std::size_t N>
using drop_front = typename drop_impl<L, N, std::make_index_sequence<L::size - N>>::type;

// remove<L, T>
template <class L, class T>
struct remove_impl;
template <class... Ts, class T>
struct remove_impl<list<Ts...>, T> {
  using type = concat<std::conditional_t<std::is_same_v<Ts, T>, list<>, list<Ts>>...>;
};
template <class L, class T>
using remove = typename remove_impl<L, T>::type;

// replace_at<L, N, Repl...>: the element at N becomes the list Repl...
template <class L, std::size_t N, class... Repl>
using replace_at = concat<take_front<L, N>, list<Repl...>, drop_front<L, N + 1>>;

// set_at<L, N, T>
template <class L, std::size_t N, class T>
using set_at = replace_at<L, N, T>;

template <class L, class Fn>
constexpr void for_each_type(Fn&& fn) {
  [&]<class... Ts>(list<Ts...>*) { (fn(static_cast<Ts*>(nullptr)), ...); }(static_cast<L*>(nullptr));
}

}  // namespace loom::meta
