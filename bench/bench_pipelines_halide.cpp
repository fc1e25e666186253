// bench/bench_pipelines_halide.cpp — the image apps of bench/bench_pipelines.cpp (examples/apps.hpp:
// blur, unsharp, harris in float, and blur_u16, Halide's apps/blur as it is, in uint16; 6400 x 4800,
// the same padded inputs and offsets) in Halide 14, JIT-compiled once for the host
// (get_jit_target_from_environment) before anything is timed.
//
// Schedules, with v = 8 where Halide's app says 8 and v = the target's natural float width (16
// with AVX-512) where it says natural_vector_size:
//   blur/halide_app          apps/blur's CPU schedule, verbatim: blur_y.split(y, y, yi, 8)
//                            .parallel(y).vectorize(x, 8); blur_x.store_at(blur_y, y)
//                            .compute_at(blur_y, yi).vectorize(x, 8)
//   blur/halide_app_native   the same with natural-width vectors (loom_best's width)
//   blur/halide_tiled        the tiled alternative (Halide's README and paper): blur_y.tile(x, y,
//                            xi, yi, 256, 32).vectorize(xi, 8).parallel(y); blur_x.compute_at(
//                            blur_y, x).vectorize(x, 8)
//   blur_u16/...             the same blur schedules (app, app_native, tiled, root, root_keep)
//                            over Buffer<uint16_t>, the algorithm in uint16 (the app's own:
//                            (in(x, y) + in(x + 1, y) + in(x + 2, y)) / 3, wrapping sums, integer
//                            division); v of app_native and root = the natural uint16 width (32
//                            with AVX-512), app and tiled keep the app's 8
//   unsharp/halide_app       apps/unsharp's CPU schedule without gray and ratio (see apps.hpp):
//                            output.split(y, yo, yi, 32).vectorize(x, v).parallel(yo);
//                            blur_y.compute_at(output, yi).store_at(output, yo).vectorize(x, v)
//   harris/halide_app        apps/harris's CPU schedule: output.split(y, y, yi, 32).parallel(y)
//                            .vectorize(x, v); Ix and Iy .store_at(output, y).compute_at(output,
//                            yi).vectorize(x, v); Ix.compute_with(Iy, x)
//   harris/halide_app_nocw   the same without compute_with (what loom_best can express)
//   <app>/halide_root        every Func compute_root().parallel(y).vectorize(x, v), and the output
//                            .parallel(y).vectorize(x, v) (loom_root's schedule). Halide allocates
//                            the root buffers in every realize: fresh pages, a page fault per 4 KiB.
//   <app>/halide_root_keep   the same with an allocator that keeps freed blocks for the next run
//                            (as loom keeps its arena): the root schedule without the page faults
// (These schedules are copied from Halide's apps/ sources: blur/halide_blur_generator.cpp,
// unsharp/unsharp_generator.cpp, harris/harris_generator.cpp.)
//
// Threads: Halide's own thread pool, sized by HL_NUM_THREADS when it starts (once per process), so
// one process runs one thread count: HL_NUM_THREADS=2 bench_pipelines_halide. Names follow
// bench_pipelines: <app>/<impl>/threads:<HL_NUM_THREADS>. Counters as there: "GB/s" (input +
// output once), "ms", "storage_bytes": the peak of the bytes Halide had allocated through
// halide_malloc during one run, measured with a counting allocator in the checking run (Halide
// allocates compute_root buffers in every realize, and puts small constant-size buffers on the
// stack, which are not counted). Each result is checked against apps.hpp's reference first.

#include <Halide.h>

#include "bench_common.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "../examples/apps.hpp"

namespace {

using namespace loom_bench;
using apps::T2;
using loom::index_t;
using Halide::Expr;
using Halide::Func;
using Halide::Var;

constexpr index_t H = 4800, W = 6400;

/// HL_NUM_THREADS, set to the hardware's thread count when absent (Halide's own default).
int halide_threads() {
  const char* e = std::getenv("HL_NUM_THREADS");
  if (e && std::atoi(e) > 0) return std::atoi(e);
  const int n = int(std::max(1u, std::thread::hardware_concurrency()));
  setenv("HL_NUM_THREADS", std::to_string(n).c_str(), 1);
  return n;
}

// ---- the counting allocator of the checking run ----
std::atomic<std::size_t> live_bytes{0}, peak_bytes{0};
constexpr std::size_t header = 64;  // keeps 64-byte alignment and holds the size

void* counting_malloc(Halide::JITUserContext*, std::size_t n) {
  void* p = std::aligned_alloc(64, (n + header + 63) / 64 * 64);
  if (!p) return nullptr;
  std::memcpy(p, &n, sizeof n);
  const std::size_t now = live_bytes += n;
  std::size_t peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
  return static_cast<char*>(p) + header;
}
void counting_free(Halide::JITUserContext*, void* q) {
  if (!q) return;
  void* p = static_cast<char*>(q) - header;
  std::size_t n;
  std::memcpy(&n, p, sizeof n);
  live_bytes -= n;
  std::free(p);
}

// ---- halide_root_keep's allocator: freed blocks are kept, by size, for the next run ----
std::mutex keep_mutex;
std::multimap<std::size_t, void*> kept;  // size -> block

void* keeping_malloc(Halide::JITUserContext* c, std::size_t n) {
  {
    std::lock_guard<std::mutex> lock(keep_mutex);
    const auto it = kept.find(n);
    if (it != kept.end()) {
      void* p = it->second;
      kept.erase(it);
      return static_cast<char*>(p) + header;
    }
  }
  void* q = counting_malloc(c, n);  // the same layout (size in the header); the counts are unused
  return q;
}
void keeping_free(Halide::JITUserContext*, void* q) {
  if (!q) return;
  void* p = static_cast<char*>(q) - header;
  std::size_t n;
  std::memcpy(&n, p, sizeof n);
  std::lock_guard<std::mutex> lock(keep_mutex);
  kept.emplace(n, p);
}

// ---- the apps ----
template <class App>
struct AppData {
  using V = typename App::value_type;
  using Img = apps::image_t<App>;
  Img in{"in", H + App::pad, W + App::pad}, out{"out", H, W};
  decltype(App::ref(std::declval<const Img&>(), H, W)) ref{0, 0};
  // Halide's view of the same memory: x (columns) is dimension 0, as loom's row-major layout.
  Halide::Buffer<V> hin, hout;
  AppData() {
    apps::fill_image(in, 7u);  // bench_pipelines.cpp's input
    ref = App::ref(in, H, W);
    hin = Halide::Buffer<V>(in.data(), int(W + App::pad), int(H + App::pad));
    hout = Halide::Buffer<V>(out.data(), int(W), int(H));
  }
};
template <class App>
AppData<App>& data() {
  static AppData<App> d;
  return d;
}

enum class sched { app, app_native, tiled, app_nocw, root, root_keep };

/// A vectorize-and-parallelize helper for the root schedules.
void root_loops(Func f, const Var& x, const Var& y, int v) { f.compute_root().parallel(y).vectorize(x, v); }

/// blur in float, or blur_u16 (V = uint16_t): Halide's apps/blur algorithm, whose uint16 sums wrap
/// and whose / 3 is Halide's integer division (by a multiply-high).
template <class V>
Func blur_pipeline(const Halide::Buffer<V>& in, sched s, int nat) {
  Var x("x"), y("y"), xi("xi"), yi("yi");
  Func blur_x("blur_x"), blur_y("blur_y");
  const Expr three = std::is_floating_point_v<V> ? Expr(3.f) : Halide::cast<V>(3);
  blur_x(x, y) = (in(x, y) + in(x + 1, y) + in(x + 2, y)) / three;
  blur_y(x, y) = (blur_x(x, y) + blur_x(x, y + 1) + blur_x(x, y + 2)) / three;
  if (s == sched::app || s == sched::app_native) {
    const int v = s == sched::app ? 8 : nat;
    blur_y.split(y, y, yi, 8).parallel(y).vectorize(x, v);
    blur_x.store_at(blur_y, y).compute_at(blur_y, yi).vectorize(x, v);
  } else if (s == sched::tiled) {
    blur_y.tile(x, y, xi, yi, 256, 32).vectorize(xi, 8).parallel(y);
    blur_x.compute_at(blur_y, x).vectorize(x, 8);
  } else {
    root_loops(blur_x, x, y, nat);
    blur_y.parallel(y).vectorize(x, nat);
  }
  return blur_y;
}

Func unsharp_pipeline(const Halide::Buffer<float>& in, sched s, int nat) {
  Var x("x"), y("y"), yo("yo"), yi("yi");
  const auto k = apps::unsharp::gaussian();
  const float w0 = float(k.w[0]), w1 = float(k.w[1]), w2 = float(k.w[2]);
  Func blur_y("blur_y"), blur_x("blur_x"), output("output");
  // apps.hpp's offsets: blur_y(x, y) centred on in(x, y + 2), blur_x(x, y) on blur_y(x + 2, y).
  blur_y(x, y) = w0 * in(x, y + 2) + w1 * (in(x, y + 1) + in(x, y + 3)) + w2 * (in(x, y) + in(x, y + 4));
  blur_x(x, y) = w0 * blur_y(x + 2, y) + w1 * (blur_y(x + 1, y) + blur_y(x + 3, y)) + w2 * (blur_y(x, y) + blur_y(x + 4, y));
  output(x, y) = 2.f * in(x + 2, y + 2) - blur_x(x, y);
  if (s == sched::app) {
    output.split(y, yo, yi, 32).vectorize(x, nat).parallel(yo);
    blur_y.compute_at(output, yi).store_at(output, yo).vectorize(x, nat);
  } else {
    root_loops(blur_y, x, y, nat);
    root_loops(blur_x, x, y, nat);
    output.parallel(y).vectorize(x, nat);
  }
  return output;
}

Func harris_pipeline(const Halide::Buffer<float>& in, sched s, int nat) {
  Var x("x"), y("y"), yi("yi");
  const float c1 = apps::harris::c1, c2 = apps::harris::c2, kappa = apps::harris::kappa;
  Func Ix("Ix"), Iy("Iy"), Ixx("Ixx"), Iyy("Iyy"), Ixy("Ixy"), Sxx("Sxx"), Syy("Syy"), Sxy("Sxy"), det("det"), trace("trace"),
      output("output");
  // apps.hpp's offsets (Halide's, moved by 1 per stage): loom's in(y + a, x + b) is in(x + b, y + a).
  Iy(x, y) = in(x, y) * -c1 + in(x, y + 2) * c1 + in(x + 1, y) * -c2 + in(x + 1, y + 2) * c2 + in(x + 2, y) * -c1 + in(x + 2, y + 2) * c1;
  Ix(x, y) = in(x, y) * -c1 + in(x + 2, y) * c1 + in(x, y + 1) * -c2 + in(x + 2, y + 1) * c2 + in(x, y + 2) * -c1 + in(x + 2, y + 2) * c1;
  Ixx(x, y) = Ix(x, y) * Ix(x, y);
  Iyy(x, y) = Iy(x, y) * Iy(x, y);
  Ixy(x, y) = Ix(x, y) * Iy(x, y);
  auto sum3x3 = [&](Func f) {  // Halide's sum3x3, x outermost
    return f(x, y) + f(x, y + 1) + f(x, y + 2) + f(x + 1, y) + f(x + 1, y + 1) + f(x + 1, y + 2) + f(x + 2, y) + f(x + 2, y + 1) +
           f(x + 2, y + 2);
  };
  Sxx(x, y) = sum3x3(Ixx);
  Syy(x, y) = sum3x3(Iyy);
  Sxy(x, y) = sum3x3(Ixy);
  det(x, y) = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y);
  trace(x, y) = Sxx(x, y) + Syy(x, y);
  output(x, y) = det(x, y) - kappa * trace(x, y) * trace(x, y);
  if (s == sched::app || s == sched::app_nocw) {
    output.split(y, y, yi, 32).parallel(y).vectorize(x, nat);
    Ix.store_at(output, y).compute_at(output, yi).vectorize(x, nat);
    Iy.store_at(output, y).compute_at(output, yi).vectorize(x, nat);
    if (s == sched::app) Ix.compute_with(Iy, x);
  } else {
    for (Func f : {Iy, Ix, Ixx, Iyy, Ixy, Sxx, Syy, Sxy, det, trace}) root_loops(f, x, y, nat);
    output.parallel(y).vectorize(x, nat);
  }
  return output;
}

template <class App>
Func make(const Halide::Buffer<typename App::value_type>& in, sched s, int nat) {
  if constexpr (std::is_same_v<App, apps::blur> || std::is_same_v<App, apps::blur_u16>) return blur_pipeline(in, s, nat);
  else if constexpr (std::is_same_v<App, apps::unsharp>) return unsharp_pipeline(in, s, nat);
  else return harris_pipeline(in, s, nat);
}

const Halide::Target& target() {
  static const Halide::Target t = Halide::get_jit_target_from_environment();
  return t;
}

template <class App, sched S>
void halide_app(benchmark::State& st, const std::string& name) {
  auto& d = data<App>();
  static Func f = [&] {
    Func g = make<App>(d.hin, S, target().natural_vector_size<typename App::value_type>());
    g.compile_jit(target());  // once, before anything is timed
    return g;
  }();
  static std::size_t stored = [&] {
    using V = typename App::value_type;  // poison: NaN, or 0xffff (above the 12-bit blur_u16)
    const V poison = std::is_floating_point_v<V> ? std::numeric_limits<V>::quiet_NaN() : std::numeric_limits<V>::max();
    std::fill(d.out.begin(), d.out.end(), poison);
    auto& handlers = f.jit_handlers();
    handlers.custom_malloc = counting_malloc;
    handlers.custom_free = counting_free;
    live_bytes = 0, peak_bytes = 0;
    f.realize(d.hout);
    const std::size_t peak = peak_bytes.load();
    const index_t bad = apps::mismatch(d.out, d.ref);
    if (bad >= 0)
      fail(name + ": point (" + std::to_string(bad / W) + ", " + std::to_string(bad % W) + ") is " +
           std::to_string(d.out.data()[bad]) + ", expected " + std::to_string(d.ref.value[std::size_t(bad)]));
    // The timed runs use Halide's own allocator (root_keep: the keeping one).
    handlers.custom_malloc = S == sched::root_keep ? keeping_malloc : nullptr;
    handlers.custom_free = S == sched::root_keep ? keeping_free : nullptr;
    f.realize(d.hout);  // warm: root_keep's blocks are kept from here on
    return peak;
  }();
  for (auto _ : st) {
    f.realize(d.hout);
    touch(d.out.data());
  }
  set_bytes(st, double(sizeof(typename App::value_type)) * double((H + App::pad) * (W + App::pad) + H * W));
  st.counters["ms"] = benchmark::Counter(double(st.iterations()) / 1e3, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.counters["storage_bytes"] = benchmark::Counter(double(stored));
}

template <class App, sched S>
void reg(const char* impl) {
  const std::string name = std::string(App::name) + "/" + impl;
  benchmark::RegisterBenchmark(name.c_str(), [name](benchmark::State& st) { halide_app<App, S>(st, name); })
      ->ArgName("threads")
      ->Arg(halide_threads())
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  reg<apps::blur, sched::app>("halide_app");
  reg<apps::blur, sched::app_native>("halide_app_native");
  reg<apps::blur, sched::tiled>("halide_tiled");
  reg<apps::blur, sched::root>("halide_root");
  reg<apps::blur, sched::root_keep>("halide_root_keep");
  reg<apps::blur_u16, sched::app>("halide_app");
  reg<apps::blur_u16, sched::app_native>("halide_app_native");
  reg<apps::blur_u16, sched::tiled>("halide_tiled");
  reg<apps::blur_u16, sched::root>("halide_root");
  reg<apps::blur_u16, sched::root_keep>("halide_root_keep");
  reg<apps::unsharp, sched::app>("halide_app");
  reg<apps::unsharp, sched::root>("halide_root");
  reg<apps::unsharp, sched::root_keep>("halide_root_keep");
  reg<apps::harris, sched::app>("halide_app");
  reg<apps::harris, sched::app_nocw>("halide_app_nocw");
  reg<apps::harris, sched::root>("halide_root");
  reg<apps::harris, sched::root_keep>("halide_root_keep");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("halide_target", target().to_string());
  benchmark::AddCustomContext("halide_natural_float_width", std::to_string(target().natural_vector_size<float>()));
  benchmark::AddCustomContext("halide_natural_uint16_width", std::to_string(target().natural_vector_size<std::uint16_t>()));
  benchmark::AddCustomContext("HL_NUM_THREADS", std::to_string(halide_threads()));
  benchmark::AddCustomContext("image", std::to_string(W) + "x" + std::to_string(H));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
