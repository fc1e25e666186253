#!/usr/bin/env bash
# bench/compile_time.sh — compile time of one fused elementwise definition, and of one GEMM +
# bias + ReLU, with loom and with Eigen 3.4: bench/compile/{loom,eigen}_{fused,gemm}.cpp, each compiled
# RUNS times (default 3) with  $CXX -std=c++20 -O2 -march=native -fopenmp -c  and timed with
# /usr/bin/time -f %e; prints every run and the median. Compile time is wall-clock time: run it
# on a quiet machine (the load average is printed along).
#
#   bench/compile_time.sh [RUNS]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
runs="${1:-3}"
cxx="${CXX:-g++}"
flags=(-std=c++20 -O2 -march=native -fopenmp)
eigen_inc="${EIGEN_INCLUDE:-/usr/include/eigen3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

measure() {  # label source include-flags...
  local label="$1" src="$2"
  shift 2
  local times=() t q
  for ((q = 0; q < runs; ++q)); do
    if ! /usr/bin/time -f %e -o "$tmp/time" "$cxx" "${flags[@]}" "$@" -c "$src" -o "$tmp/probe.o" 2>"$tmp/cc.err"; then
      cat "$tmp/cc.err" >&2
      echo "compile_time.sh: $label failed to compile" >&2
      exit 1
    fi
    t="$(tail -1 "$tmp/time")"
    times+=("$t")
  done
  printf '%-22s median %6.2f s   runs: %s\n' "$label" "$(printf '%s\n' "${times[@]}" | median)" "${times[*]}"
}

echo "compiler: $("$cxx" --version | head -1); flags: ${flags[*]} -c; runs: $runs"
echo "load: $(uptime)"
measure "loom (loom_fused)" "$here/compile/loom_fused.cpp" -I"$root/include"
if [[ -f "$eigen_inc/Eigen/Core" ]]; then
  measure "Eigen (eigen_fused)" "$here/compile/eigen_fused.cpp" -isystem "$eigen_inc"
fi
measure "loom (loom_gemm)" "$here/compile/loom_gemm.cpp" -I"$root/include"
if [[ -f "$eigen_inc/Eigen/Core" ]]; then
  measure "Eigen (eigen_gemm)" "$here/compile/eigen_gemm.cpp" -isystem "$eigen_inc"
else
  echo "Eigen headers not found in $eigen_inc (set EIGEN_INCLUDE); skipped"
fi
echo "load: $(uptime)"
