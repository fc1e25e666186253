#!/usr/bin/env bash
# bench/run_pipelines.sh — loom's pipelines against Halide 14 on Halide's image apps (blur, blur_u16,
# unsharp, harris at 6400 x 4800), and softmax / layer norm against Eigen and oneDNN 2.6: build,
# run, summarize.
#
#   bench/run_pipelines.sh [-b BUILD_DIR] [-o RESULTS_DIR] [-r REPETITIONS] [-t "1 2"]
#                          [-a "blur blur_u16 unsharp harris softmax layernorm"] [-w WAIT_IDLE_S]
#                          [-n NICE] [-j JOBS] [-- BENCHMARK_ARGS...]
#
#   -b BUILD_DIR    CMake build directory (default: build/bench). A new one is configured Release
#                   with only the benchmarks on; an existing one is used as it is configured. Its
#                   targets bench_peak, bench_pipelines and, when CMake found them, Halide 14's
#                   bench_pipelines_halide and oneDNN's bench_pipelines_onednn are built (-j JOBS,
#                   default 1: the machine is shared).
#   -o RESULTS_DIR  JSON, logs, machine.txt, summary.txt (default build/bench-results/pipelines-<date>)
#   -r N            --benchmark_repetitions (default 5); the summary reads the medians
#   -t "T..."       thread counts (default "1 2")
#   -a "APP..."     apps to run (default: all six), in this order
#   -w SECONDS      before each process, wait up to SECONDS for < 25% of the CPUs busy (default 60;
#                   0: don't wait); the load is recorded either way
#   -n NICE         run the benchmarks under `nice -n NICE` (default 0)
#   BENCHMARK_ARGS  passed to every benchmark process
#
# One process per (app, thread count, library): loom's bench_pipelines with
# --benchmark_filter=^<app>/.*/threads:<T>$, then Halide's with HL_NUM_THREADS=<T> (Halide sizes its
# thread pool once per process) for the image apps, or oneDNN's bench_pipelines_onednn with
# --benchmark_filter=^<app>/onednn/threads:<T>$ for softmax and layer norm (oneDNN's OpenMP threads,
# omp_set_num_threads(T)), the libraries alternating, so all see the same machine state.
# bench_peak first gives the FMA peak and the copy bandwidth (copy_bw/64MiB) at each thread count,
# as bench/run.sh does. While each process runs, the share of the machine other processes took is
# recorded ("others%" in the summary): on a shared 2-core machine the 2-thread numbers mean little
# above a few per cent.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=machine.sh
source "$here/machine.sh"
build_dir="$root/build/bench"
results=""
reps=5
threads="1 2"
app_list="blur blur_u16 unsharp harris softmax layernorm"
wait_idle=60
niceness=0
jobs=1
while getopts "b:o:r:t:a:w:n:j:h" opt; do
  case "$opt" in
    b) build_dir="$OPTARG" ;;
    o) results="$OPTARG" ;;
    r) reps="$OPTARG" ;;
    t) threads="$OPTARG" ;;
    a) app_list="$OPTARG" ;;
    w) wait_idle="$OPTARG" ;;
    n) niceness="$OPTARG" ;;
    j) jobs="$OPTARG" ;;
    h) sed -n '2,32p' "$0"; exit 0 ;;
    *) sed -n '2,32p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ "${1:-}" == "--" ]] && shift
extra=("$@")

results="${results:-$root/build/bench-results/pipelines-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$results"
results="$(cd "$results" && pwd)"

# ---- build ----
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DLOOM_BUILD_BENCH=ON -DLOOM_BUILD_TESTS=OFF \
    -DLOOM_BUILD_EXAMPLES=OFF
fi
targets=(bench_peak bench_pipelines)
have_halide=0
if grep -q "/bench_pipelines_halide.dir" "$build_dir/CMakeFiles/TargetDirectories.txt" 2>/dev/null; then
  targets+=(bench_pipelines_halide)
  have_halide=1
else
  echo "run_pipelines.sh: CMake did not find Halide 14 in $build_dir: no Halide" >&2
fi
have_onednn=0
if grep -q "/bench_pipelines_onednn.dir" "$build_dir/CMakeFiles/TargetDirectories.txt" 2>/dev/null; then
  targets+=(bench_pipelines_onednn)
  have_onednn=1
else
  echo "run_pipelines.sh: CMake did not find oneDNN 2.x in $build_dir: no oneDNN" >&2
fi
echo "run_pipelines.sh: building ${targets[*]} in $build_dir (include/ snapshot $(include_snapshot))"
cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"
peak="$build_dir/bench/bench_peak"
lbin="$build_dir/bench/bench_pipelines"
hbin="$build_dir/bench/bench_pipelines_halide"
obin="$build_dir/bench/bench_pipelines_onednn"

# ---- machine ----
{
  echo "host: $(uname -a)"
  echo "cpu: $(lscpu | grep 'Model name' | sed 's/.*: *//')"
  echo "cpus: $(nproc)"
  echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset} OMP_PROC_BIND=${OMP_PROC_BIND:-unset} HL_NUM_THREADS=${HL_NUM_THREADS:-unset}"
  echo "transparent_hugepage: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')"
  echo "loom commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
  echo "include/ snapshot (sha256 of every header): $(include_snapshot)"
  echo "build: $build_dir ($(grep -m1 '^CMAKE_BUILD_TYPE' "$build_dir/CMakeCache.txt" || true))"
} >"$results/machine.txt"
cat "$results/machine.txt"

common=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true --benchmark_out_format=json)

[[ -x /usr/bin/time ]] || { echo "run_pipelines.sh: needs /usr/bin/time" >&2; exit 1; }
: >"$results/others.tsv"
run "bench_peak" "$results/peak.json" OMP_PROC_BIND="${OMP_PROC_BIND:-false}" -- "$peak" \
  --benchmark_filter='^(fma_peak/|copy_bw/)'
for app in $app_list; do
  for t in $threads; do
    run "loom $app ${t}t" "$results/loom.$app.t$t.json" HL_NUM_THREADS="$t" -- "$lbin" \
      --benchmark_filter="^$app/.*/threads:$t(/|\$)"
    if (( have_halide )) && [[ "$app" =~ ^(blur|blur_u16|unsharp|harris)$ ]]; then
      run "halide $app ${t}t" "$results/halide.$app.t$t.json" HL_NUM_THREADS="$t" -- "$hbin" --benchmark_filter="^$app/"
    fi
    if (( have_onednn )) && [[ "$app" =~ ^(softmax|layernorm)$ ]]; then
      run "onednn $app ${t}t" "$results/onednn.$app.t$t.json" -- "$obin" \
        --benchmark_filter="^$app/onednn/threads:$t(/|\$)"
    fi
  done
done

python3 "$here/summarize_pipelines.py" "$results" | tee "$results/summary.txt"
echo "run_pipelines.sh: results in $results"
