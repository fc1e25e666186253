#!/usr/bin/env bash
# bench/run.sh — build (or reuse) loom's benchmarks, run them, write JSON, print a summary.
#
#   bench/run.sh [-b BUILD_DIR] [-o RESULTS_DIR] [-r REPETITIONS] [-w WAIT_IDLE_S] [-p] [-t TRIES]
#                [-- BENCHMARK_ARGS...]
#
#   -b BUILD_DIR    use BUILD_DIR/bench/bench_core and BUILD_DIR/bench/bench_peak (a CMake build
#                   with -DLOOM_BUILD_BENCH=ON); without -b, both are built here with g++
#                   (-std=c++20 -O3 -march=native -fopenmp -DNDEBUG), with Eigen and xtensor when
#                   their headers are found.
#   -o RESULTS_DIR  where the JSON (bench_core.json, bench_peak.json), the console logs, the machine
#                   state and summary.txt go (default: build/bench-results/<date-time>).
#   -r N            repetitions (default 5); the summary reads the median of them.
#   -w SECONDS      before each binary (with -p: each benchmark), wait up to SECONDS for the machine
#                   to go quiet (< 25% of the CPUs busy; default 180, with -p 30; 0 = don't wait).
#                   Other people's compiles on a 2-core machine halve the 2-thread numbers; the
#                   load is recorded either way.
#   -p              per-benchmark mode, for shared machines: every benchmark runs in its own process
#                   after waiting for a quiet machine, and while it runs, the CPU time other
#                   processes take is measured (/proc/stat minus the benchmark's own time). It is run
#                   again (up to TRIES times, -t, default 3) while others took more than 5% of the
#                   machine or its repetitions spread more than 15% (cv); the least disturbed try is
#                   kept (the others are renamed *.rejected) and the summary shows, per benchmark,
#                   the share of the machine others used ("others%"). A 2-thread OpenMP kernel on a
#                   2-core machine loses half its speed or more whenever anything else runs, and
#                   does so consistently, so a small cv alone proves nothing.
#   -n NICE         run the benchmark binaries under `nice -n NICE` (default 0). On a shared machine
#                   a negative value (root only, e.g. -n -10) makes the scheduler favour the
#                   benchmark's threads over other people's compiles for the duration of the run,
#                   which slows those down but is the only way to get meaningful 2-thread numbers
#                   on a 2-core machine that is never idle.
#   BENCHMARK_ARGS  passed to both binaries (e.g. --benchmark_filter=fused).
#
# Every benchmark runs --benchmark_repetitions=N --benchmark_report_aggregates_only=true (without
# -p, with randomly interleaved repetitions, so slow drifts in background load hit all contenders
# alike). The summary reads the median of the repetitions.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=machine.sh
source "$here/machine.sh"
build_dir=""
results=""
reps=5
wait_idle=""
per_bench=0
tries=3
niceness=0
while getopts "b:o:r:w:pt:n:h" opt; do
  case "$opt" in
    b) build_dir="$OPTARG" ;;
    o) results="$OPTARG" ;;
    r) reps="$OPTARG" ;;
    w) wait_idle="$OPTARG" ;;
    p) per_bench=1 ;;
    t) tries="$OPTARG" ;;
    n) niceness="$OPTARG" ;;
    h) sed -n '2,36p' "$0"; exit 0 ;;
    *) sed -n '2,36p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ "${1:-}" == "--" ]] && shift
extra=("$@")

[[ -n "$wait_idle" ]] || wait_idle=$(( per_bench ? 30 : 180 ))
results="${results:-$root/build/bench-results/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$results"
results="$(cd "$results" && pwd)"

# ---- binaries ----
if [[ -n "$build_dir" ]]; then
  core="$build_dir/bench/bench_core"
  peak="$build_dir/bench/bench_peak"
  for b in "$core" "$peak"; do
    [[ -x "$b" ]] || { echo "run.sh: $b not found (build with -DLOOM_BUILD_BENCH=ON, or omit -b)" >&2; exit 1; }
  done
else
  bin="$results/bin"
  mkdir -p "$bin"
  cxx="${CXX:-g++}"
  flags=(-std=c++20 -O3 -march=native -fopenmp -DNDEBUG -Wall -Wextra -Wpedantic -I"$root/include")
  peers=()
  if [[ -f /usr/include/eigen3/Eigen/Core ]]; then
    peers+=(-DLOOM_HAVE_EIGEN=1 -isystem /usr/include/eigen3)
  elif pkg-config --exists eigen3 2>/dev/null; then
    peers+=(-DLOOM_HAVE_EIGEN=1 $(pkg-config --cflags-only-I eigen3 | sed 's/-I/-isystem /g'))
  fi
  if echo '#include <xtensor/xtensor.hpp>' | "$cxx" -std=c++20 -x c++ -E - >/dev/null 2>&1; then
    peers+=(-DLOOM_HAVE_XTENSOR=1)
  fi
  echo "run.sh: building with $cxx ${flags[*]} ${peers[*]}"
  echo "run.sh: include/ snapshot $(include_snapshot) at $(date -Is)"
  "$cxx" "${flags[@]}" "$here/bench_peak.cpp" -lbenchmark -lpthread -o "$bin/bench_peak"
  "$cxx" "${flags[@]}" "${peers[@]}" "$here/bench_core.cpp" -lbenchmark -lpthread -o "$bin/bench_core"
  core="$bin/bench_core"
  peak="$bin/bench_peak"
fi

# ---- machine state ----
state() {
  echo "== $1: $(date -Is)"
  uptime
  echo "busy fraction over 2 s: $(busy_fraction)"
  ps -eo pcpu,comm --sort=-pcpu | head -6
}

{
  echo "host: $(uname -a)"
  grep -m1 "model name" /proc/cpuinfo || true
  echo "cpus: $(nproc)"
  echo "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset} OMP_PROC_BIND=${OMP_PROC_BIND:-unset} OMP_PLACES=${OMP_PLACES:-unset}"
  echo "transparent_hugepage: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo '?')"
  echo "loom commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
  echo "include/ snapshot (sha256 of every header, as built): $(include_snapshot)"
} >"$results/machine.txt"

common=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true --benchmark_out_format=json)

max_cv() {  # largest cv of a rate counter in a JSON file (0 when there is none: too few repetitions)
  python3 - "$1" <<'PY'
import json, sys
cv = [r.get(k) for r in json.load(open(sys.argv[1])).get("benchmarks", [])
      if r.get("aggregate_name") == "cv" for k in ("GB/s", "GFLOP/s") if k in r]
print(max(cv) if cv else 0.0)
PY
}

jiffies() {  # busy and total jiffies of all CPUs: "busy total"
  local a q total=0
  a=($(head -1 /proc/stat))
  for q in 1 2 3 4 5 6 7 8; do total=$(( total + a[q] )); done
  echo "$(( total - a[4] - a[5] )) $total"
}
hz="$(getconf CLK_TCK 2>/dev/null || echo 100)"
ncpu="$(nproc)"

# run_measured OUT_JSON TEST BINARY: runs one benchmark; prints the share of the machine (0..1)
# that other processes used meanwhile.
run_measured() {
  local out="$1" t="$2" binary="$3" j0 j1 e u s
  j0=($(jiffies))
  if ! /usr/bin/time -f "%e %U %S" -o "$out.time" nice -n "$niceness" "$binary" "${common[@]}" "${extra[@]}" --benchmark_filter="^${t}\$" \
       --benchmark_out="$out" >>"$log" 2>&1; then
    tail -5 "$log" >&2
    echo "run.sh: $t failed (log: $log)" >&2
    exit 1
  fi
  j1=($(jiffies))
  read -r e u s <"$out.time"
  rm -f "$out.time"
  awk -v busy=$(( j1[0] - j0[0] )) -v hz="$hz" -v e="$e" -v own="$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" -v n="$ncpu" \
    'BEGIN { o = (busy / hz - own) / (e * n); if (o < 0) o = 0; printf "%.3f", o }'
}

run_one() {  # name binary
  local name="$1" binary="$2"
  state "before $name" >>"$results/machine.txt"
  if (( per_bench )); then
    [[ -x /usr/bin/time ]] || { echo "run.sh: -p needs /usr/bin/time" >&2; exit 1; }
    mkdir -p "$results/parts"
    log="$results/$name.log"
    local tests q=0 t try out cv others best best_others
    mapfile -t tests < <("$binary" --benchmark_list_tests=true "${extra[@]}")
    echo "run.sh: running $name: ${#tests[@]} benchmarks, one process each (repetitions $reps, up to $tries tries)"
    for t in "${tests[@]}"; do
      q=$(( q + 1 ))
      best="" best_others=2
      for (( try = 1; try <= tries; ++try )); do
        (( wait_idle > 0 )) && wait_quiet "$wait_idle" 1 quiet
        out="$results/parts/$name.$(printf %03d $q).$try.json"
        others="$(run_measured "$out" "$t" "$binary")"
        cv="$(max_cv "$out")"
        printf 'run.sh: %-58s try %d  cv %5.1f%%  others %5.1f%%\n' "$t" "$try" \
          "$(awk -v c="$cv" 'BEGIN { print 100 * c }')" "$(awk -v o="$others" 'BEGIN { print 100 * o }')"
        if awk -v o="$others" -v b="$best_others" 'BEGIN { exit !(o < b) }'; then
          [[ -n "$best" ]] && mv "$best" "$best.rejected"
          best="$out" best_others="$others"
        else
          mv "$out" "$out.rejected"
        fi
        awk -v c="$cv" -v o="$others" 'BEGIN { exit !(c <= 0.15 && o <= 0.05) }' && break
      done
      printf '%s\t%s\t%s\n' "$t" "$best_others" "$(basename "$best")" >>"$results/parts/others.tsv"
    done
  else
    (( wait_idle > 0 )) && wait_quiet "$wait_idle"
    echo "run.sh: running $name (repetitions $reps, nice $niceness) ..."
    local j0 j1 e u s others
    j0=($(jiffies))
    /usr/bin/time -f "%e %U %S" -o "$results/$name.time" nice -n "$niceness" "$binary" "${common[@]}" \
      --benchmark_enable_random_interleaving=true --benchmark_out="$results/$name.json" "${extra[@]}" 2>&1 | tee "$results/$name.log"
    [[ "${PIPESTATUS[0]}" == 0 ]] || { echo "run.sh: $name failed" >&2; exit 1; }
    j1=($(jiffies))
    read -r e u s <"$results/$name.time"
    others="$(awk -v busy=$(( j1[0] - j0[0] )) -v hz="$hz" -v e="$e" -v u="$u" -v s="$s" -v n="$ncpu" \
      'BEGIN { o = (busy / hz - u - s) / (e * n); if (o < 0) o = 0; printf "%.1f", 100 * o }')"
    echo "run.sh: while $name ran, other processes used $others% of the machine" | tee -a "$results/machine.txt"
  fi
  state "after $name" >>"$results/machine.txt"
}

run_one bench_peak "$peak"
run_one bench_core "$core"

python3 "$here/summarize.py" "$results" | tee "$results/summary.txt"
echo "run.sh: results in $results"
