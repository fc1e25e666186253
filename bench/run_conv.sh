#!/usr/bin/env bash
# bench/run_conv.sh — loom::conv2d against oneDNN 2.6 on ResNet-50 and MobileNet-v2 layers
# (bench/bench_conv.cpp, bench/bench_conv_onednn.cpp): build, run, summarize.
#
#   bench/run_conv.sh [-b BUILD_DIR] [-o RESULTS_DIR] [-r REPETITIONS] [-t "1 2"] [-l "LAYER..."]
#                     [-w WAIT_IDLE_S] [-n NICE] [-j JOBS] [-- BENCHMARK_ARGS...]
#
#   -b BUILD_DIR    CMake build directory (default: build/bench). A new one is configured Release
#                   with only the benchmarks on; an existing one is re-run through CMake when it
#                   does not know bench_conv yet. Targets bench_peak, bench_conv and, when CMake
#                   found oneDNN 2.x, bench_conv_onednn are built (-j JOBS, default 1, nice 19).
#   -o RESULTS_DIR  JSON, logs, machine.txt, summary.txt (default build/bench-results/conv-<date>)
#   -r N            --benchmark_repetitions (default 3); the summary reads the medians
#   -t "T..."       thread counts (default "1 2")
#   -l "LAYER..."   only these layers (default: all; names as in bench_conv.cpp, e.g. r3x3_64_56)
#   -w SECONDS      before each process, wait up to SECONDS for < 25% of the CPUs busy (default 60;
#                   0: don't wait)
#   -n NICE         run the benchmarks under `nice -n NICE` (default 0)
#   BENCHMARK_ARGS  passed to every benchmark process
#
# bench_peak first (fma_peak/: the FMA peak at each thread count, the denominator of "% of peak";
# copy_bw/64MiB: the memory roof of bench/plot_roofline.py),
# then per thread count one process of loom's bench_conv (--benchmark_filter=
# ^conv/<layer>/(loom|naive)/threads:<T>) and one of bench_conv_onednn (^conv/<layer>/onednn_*/
# threads:<T>; oneDNN's OpenMP threads, omp_set_num_threads(T)), alternating. While each process
# runs, the share of the machine other processes took is recorded (others.tsv): on a shared
# 2-core machine the 2-thread numbers mean little above a few per cent.
#
# The summary (summary.txt), per layer and thread count, medians, nominal GFLOP/s (2 N OH OW CO KH
# KW C/groups, padded taps included; Winograd's too, so it may pass the peak): loom (packed
# weights, algorithm automatic; W or D: Winograd or direct ran), its % of the FMA peak, oneDNN
# direct with format any (the convolution alone; "reord" is the ms of the NHWC reorders it leaves
# out, 0 where oneDNN chose NHWC itself), oneDNN Winograd (where implemented), oneDNN direct on
# plain NHWC, loom / best oneDNN (a speed ratio: above 1 is loom faster), then loom forced to
# direct and to Winograd (3 x 3 stride-1 layers), loom on unpacked weights and the plain loop,
# nchw/nhwc (loom_nchw's GFLOP/s over loom's: the same call on NCHW tensors seen through permuted
# views) and fused cost (loom_index_fused's time over loom_index's, minus 1, in %: what bias + skip +
# ReLU fused on the register tiles cost); then the geometric mean of loom / best oneDNN over the
# dense layers (and over the depthwise ones) at each thread count.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=machine.sh
source "$here/machine.sh"
build_dir="$root/build/bench"
results=""
reps=3
threads="1 2"
layers=""
wait_idle=60
niceness=0
jobs=1
while getopts "b:o:r:t:l:w:n:j:h" opt; do
  case "$opt" in
    b) build_dir="$OPTARG" ;;
    o) results="$OPTARG" ;;
    r) reps="$OPTARG" ;;
    t) threads="$OPTARG" ;;
    l) layers="$OPTARG" ;;
    w) wait_idle="$OPTARG" ;;
    n) niceness="$OPTARG" ;;
    j) jobs="$OPTARG" ;;
    h) sed -n '2,36p' "$0"; exit 0 ;;
    *) sed -n '2,36p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ "${1:-}" == "--" ]] && shift
extra=("$@")

results="${results:-$root/build/bench-results/conv-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$results"
results="$(cd "$results" && pwd)"

# ---- build ----
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DLOOM_BUILD_BENCH=ON -DLOOM_BUILD_TESTS=OFF \
    -DLOOM_BUILD_EXAMPLES=OFF
elif ! grep -q "/bench_conv.dir" "$build_dir/CMakeFiles/TargetDirectories.txt" 2>/dev/null; then
  cmake "$build_dir" >/dev/null  # configured before bench_conv.cpp existed: glob the sources again
fi
targets=(bench_peak bench_conv)
have_onednn=0
if grep -q "/bench_conv_onednn.dir" "$build_dir/CMakeFiles/TargetDirectories.txt" 2>/dev/null; then
  targets+=(bench_conv_onednn)
  have_onednn=1
else
  echo "run_conv.sh: CMake did not find oneDNN 2.x in $build_dir: no oneDNN" >&2
fi
echo "run_conv.sh: building ${targets[*]} in $build_dir (include/ snapshot $(include_snapshot))"
nice -n 19 cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"
peak="$build_dir/bench/bench_peak"
lbin="$build_dir/bench/bench_conv"
obin="$build_dir/bench/bench_conv_onednn"

# ---- machine ----
{
  echo "host: $(uname -a)"
  echo "cpu: $(lscpu | grep 'Model name' | sed 's/.*: *//')"
  echo "cpus: $(nproc)"
  echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset} OMP_PROC_BIND=${OMP_PROC_BIND:-unset}"
  echo "loom commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
  echo "include/ snapshot (sha256 of every header): $(include_snapshot)"
  echo "build: $build_dir ($(grep -m1 '^CMAKE_BUILD_TYPE' "$build_dir/CMakeCache.txt" || true))"
} >"$results/machine.txt"
cat "$results/machine.txt"

common=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true --benchmark_out_format=json)

[[ -x /usr/bin/time ]] || { echo "run_conv.sh: needs /usr/bin/time" >&2; exit 1; }
: >"$results/others.tsv"
layer_re="[^/]+"
[[ -n "$layers" ]] && layer_re="($(echo "$layers" | tr -s ' ' '|'))"
run "bench_peak" "$results/peak.json" "$peak" --benchmark_filter='^(fma_peak/|copy_bw/64MiB)'
for t in $threads; do
  run "loom ${t}t" "$results/loom.t$t.json" "$lbin" --benchmark_filter="^conv/$layer_re/(loom[a-z0-9_]*|naive)/threads:$t(/|\$)"
  if (( have_onednn )); then
    run "onednn ${t}t" "$results/onednn.t$t.json" "$obin" --benchmark_filter="^conv/$layer_re/onednn_[a-z]+/threads:$t(/|\$)"
  fi
done

# ---- summary ----
python3 - "$results" <<'EOF' | tee "$results/summary.txt"
import glob, json, math, os, sys

results = sys.argv[1]
rows, context = {}, {}
for f in sorted(glob.glob(os.path.join(results, "*.json"))):
    if os.path.getsize(f) == 0:
        continue
    data = json.load(open(f))
    context.update(data.get("context", {}))
    for r in data.get("benchmarks", []):
        if r.get("error_occurred") or r.get("aggregate_name", "median") != "median":
            continue
        parts = [p for p in (r.get("run_name") or r["name"]).split("/") if p not in ("real_time", "process_time")]
        t = next((int(p.split(":")[1]) for p in parts if p.startswith("threads:")), 1)
        rest = [p for p in parts if not p.startswith("threads:")]
        if rest[0] == "conv":  # conv/<layer>/<impl> -> (<layer>, <impl>); fma_peak/chains8 -> (fma_peak, chains8)
            rest = rest[1:]
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[r.get("time_unit", "ns")]
        rows[(rest[0], "/".join(rest[1:]), t)] = {"ms": float(r["real_time"]) * scale, "gflops": r.get("GFLOP/s"),
                                                  "winograd": r.get("winograd")}

machine = os.path.join(results, "machine.txt")
if os.path.exists(machine):
    for line in open(machine):
        if line.startswith(("cpu:", "cpus:", "loom commit", "include/")):
            print("#", line.rstrip())
if "onednn_version" in context:
    print(f"# oneDNN {context['onednn_version']}, ISA {context.get('onednn_isa', '?')}")
threads = sorted({t for _, _, t in rows})
peak = {t: max((v["gflops"] for (k, _, u), v in rows.items() if k == "fma_peak" and u == t and v["gflops"]), default=None)
        for t in threads}
for t in threads:
    if peak[t]:
        print(f"# {t} thread(s): FMA peak {peak[t]:.0f} GFLOP/s (bench_peak fma_peak, best chain count, median)")
others = os.path.join(results, "others.tsv")
if os.path.exists(others):
    shares = [l.rstrip("\n").split("\t") for l in open(others) if "\t" in l]
    print("# others' share of the machine while each process ran: " + ", ".join(f"{a} {100 * float(b):.1f}%" for a, b in shares))
print("# GFLOP/s: nominal (2 N OH OW CO KH KW C/groups), medians; reord: ms of oneDNN's NHWC reorders that 'direct' leaves out;")
print("# loom: loom::conv2d, packed weights, algorithm automatic (W: it ran Winograd, F(4x4) or F(2x2), D: direct); l.direct,")
print("# l.wino, l.wino2: the same with conv_algorithm::direct / ::winograd / ::winograd_2x2; unpacked: conv2d on the HWIO")
print("# weights (packed by each call)")
print("# loom/best: loom's GFLOP/s over the best oneDNN column (above 1: loom faster)")
print("# nchw/nhwc: loom_nchw (NCHW in and out through permuted views, relayout around the kernel) over loom, GFLOP/s;")
print("# fused cost: time of loom_index_fused (index notation, max(conv + bias + skip, 0)) over loom_index (bare), minus 1, in %")
print()

order = ["r3x3_64_56", "r3x3_128_28", "r3x3_256_14", "r3x3_512_7", "r1x1_64_256_56", "r1x1s2_256_512_56", "stem7x7",
         "dw32_112", "dw96_112s2", "dw144_56", "dw576_14", "r3x3_64_56_n8"]
layers = sorted({k for (k, impl, t) in rows if k not in ("fma_peak", "copy_bw")}, key=lambda k: (order.index(k) if k in order else len(order), k))

def g(k, impl, t):
    v = rows.get((k, impl, t))
    return v["gflops"] if v else None

def f(v, w=7, p=1):
    return ("-" if v is None else f"{v:.{p}f}").rjust(w)

hdr = (f"{'layer':<18} {'T':>2} {'loom':>7}   {'%peak':>6} | {'direct':>7} {'reord':>6} {'wino':>7} {'nhwc':>7} |"
       f" {'loom/best':>9} | {'l.direct':>8} {'l.wino':>7} {'l.wino2':>7} {'unpacked':>8} {'naive':>6} | {'nchw/nhwc':>9} {'fused cost':>10}")
ratios = {}
for t in threads:
    print(hdr)
    print("-" * len(hdr))
    for k in layers:
        if not any(kk == k and u == t for kk, _, u in rows):
            continue
        name = k
        lo = g(k, "loom", t)
        direct, wino, nhwc = g(k, "onednn_direct", t), g(k, "onednn_winograd", t), g(k, "onednn_nhwc", t)
        reord = rows.get((k, "onednn_reorders", t))
        best = max([v for v in (direct, wino, nhwc) if v], default=None)
        ratio = lo / best if lo and best else None
        if ratio:
            ratios.setdefault((t, name.startswith("dw")), []).append(ratio)
        pk = 100 * lo / peak[t] if lo and peak.get(t) else None
        lr = rows.get((k, "loom", t))
        alg = "W" if lr and lr.get("winograd") else "D" if lr else " "
        nchw = g(k, "loom_nchw", t)
        bare, fused = rows.get((k, "loom_index", t)), rows.get((k, "loom_index_fused", t))
        cost = 100 * (fused["ms"] / bare["ms"] - 1) if bare and fused and bare["ms"] > 0 else None
        print(f"{name:<18} {t:>2} {f(lo)} {alg} {f(pk, 5)}% | {f(direct)} {f(reord['ms'] if reord else None, 6, 3)} {f(wino)} {f(nhwc)} |"
              f" {f(ratio, 9, 2)} | {f(g(k, 'loom_direct', t), 8)} {f(g(k, 'loom_winograd', t))} {f(g(k, 'loom_winograd_2x2', t))} {f(g(k, 'loom_unpacked', t), 8)}"
              f" {f(g(k, 'naive', t), 6)} | {f(nchw / lo if nchw and lo else None, 9, 2)} {('-' if cost is None else f'{cost:+.1f}%').rjust(10)}")
    print()
for t in threads:
    for dw, what in ((False, "dense"), (True, "depthwise")):
        r = ratios.get((t, dw))
        if r:
            gm = math.exp(sum(math.log(x) for x in r) / len(r))
            print(f"geometric mean of loom / best oneDNN, {what} layers ({len(r)}), {t} thread(s): {gm:.2f}")
print()
for k in layers:
    impl = [f"{v} {context[f'onednn_{k}_{v}']}" for v in ("direct", "winograd", "nhwc") if f"onednn_{k}_{v}" in context]
    if impl:
        print(f"# oneDNN {k}: " + ", ".join(impl))
EOF
echo "run_conv.sh: results in $results"
