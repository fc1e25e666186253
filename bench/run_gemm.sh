#!/usr/bin/env bash
# bench/run_gemm.sh — GEMM: loom against every peer library installed, one process per library.
#
#   bench/run_gemm.sh [-o RESULTS_DIR] [-r REPETITIONS] [-l "loom openblas ..."] [-- BENCHMARK_ARGS...]
#
# Builds bench_peak and bench/gemm/bench_gemm.cpp once per library (g++ -O3 -march=native
# -fopenmp; the library picked with -DLOOM_GEMM_LIB), skipping peers whose headers or libraries
# are missing (install them with `bash scripts/deps gemm-peers`): OpenBLAS, BLIS, Eigen 3.4,
# oneDNN (dnnl_sgemm) and libxsmm (small shapes). Then runs the FMA-peak microbenchmark and each
# binary in turn (waiting for a quiet machine before each), and prints the summary of
# bench/summarize_gemm.py: median GFLOP/s, % of the measured peak and loom's ratio to each peer.
# bench/plot_roofline.py RESULTS_DIR draws the results on the roofline (PNG).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=machine.sh
source "$here/machine.sh"
results=""
reps=5
libs="loom openblas blis eigen onednn libxsmm"
while getopts "o:r:l:h" opt; do
  case "$opt" in
    o) results="$OPTARG" ;;
    r) reps="$OPTARG" ;;
    l) libs="$OPTARG" ;;
    h) sed -n '2,14p' "$0"; exit 0 ;;
    *) sed -n '2,14p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ "${1:-}" == "--" ]] && shift
extra=("$@")

results="${results:-$root/build/bench-results/gemm-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$results/bin"
results="$(cd "$results" && pwd)"
bin="$results/bin"
cxx="${CXX:-g++}"
flags=(-std=c++20 -O3 -march=native -fopenmp -DNDEBUG -Wall -Wextra -Wpedantic -I"$root/include")

have_header() { echo "#include <$1>" | "$cxx" -std=c++20 -x c++ -E "${@:2}" - >/dev/null 2>&1; }
have_lib() { echo 'int main(){}' | "$cxx" -x c++ - -o /dev/null "-l$1" >/dev/null 2>&1; }

lib_flags() {  # flags to build the binary of library $1, or nothing when it is not installed
  case "$1" in
    loom) echo "" ;;
    openblas)
      # Debian's cblas.h of OpenBLAS lives in the openblas-<variant> include dirs.
      local inc
      inc="$(ls -d /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/x86_64-linux-gnu/openblas-openmp 2>/dev/null | head -n1)"
      [[ -n "$inc" ]] && have_lib openblas && echo "-isystem $inc -lopenblas" ;;
    blis)  # Debian: the OpenMP build of BLIS in its own include and library directories
      local d=/usr/include/x86_64-linux-gnu/blis-openmp l=/usr/lib/x86_64-linux-gnu/blis-openmp
      [[ -f $d/blis.h && -f $l/libblis.so ]] && echo "-isystem $d -L$l -Wl,-rpath,$l -lblis" ;;
    eigen) [[ -f /usr/include/eigen3/Eigen/Core ]] && echo "-DLOOM_HAVE_EIGEN=1 -isystem /usr/include/eigen3" ;;
    onednn) have_header dnnl.h && have_lib dnnl && echo "-ldnnl" ;;
    libxsmm) have_header libxsmm.h && have_lib xsmm && echo "-lxsmm -lxsmmnoblas -ldl" ;;
  esac
}

echo "run_gemm.sh: include/ snapshot $(include_snapshot) at $(date -Is)"
"$cxx" "${flags[@]}" "$here/bench_peak.cpp" -lbenchmark -lpthread -o "$bin/bench_peak"
built=()
for lib in $libs; do
  if ! lf="$(lib_flags "$lib")"; then
    echo "run_gemm.sh: $lib not installed, skipped (bash scripts/deps gemm-peers)"
    continue
  fi
  echo "run_gemm.sh: building bench_gemm_$lib"
  # shellcheck disable=SC2086
  "$cxx" "${flags[@]}" -DLOOM_GEMM_LIB="$lib" "$here/gemm/bench_gemm.cpp" $lf -lbenchmark -lpthread \
    -o "$bin/bench_gemm_$lib"
  built+=("$lib")
done

common=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true --benchmark_out_format=json)
{
  grep -m1 "model name" /proc/cpuinfo || true
  echo "cpus: $(nproc); libraries: ${built[*]}; loom commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
} >"$results/machine.txt"

wait_quiet 120
"$bin/bench_peak" "${common[@]}" --benchmark_out="$results/bench_peak.json" | tee "$results/bench_peak.log"
for lib in "${built[@]}"; do
  wait_quiet 120
  echo "run_gemm.sh: running $lib"
  "$bin/bench_gemm_$lib" "${common[@]}" --benchmark_out="$results/gemm_$lib.json" "${extra[@]}" \
    | tee "$results/gemm_$lib.log"
done

python3 "$here/summarize_gemm.py" "$results" | tee "$results/summary.txt"
echo "run_gemm.sh: results in $results"
