#!/usr/bin/env python3
"""Summarize bench/run_gemm.sh results: loom's GEMM against its peers, as % of the measured peak.

    python3 bench/summarize_gemm.py RESULTS_DIR     # reads gemm_*.json and bench_peak.json

Standard library only. Benchmarks are named <lib>/<kernel>/<M>x<N>x<K>/threads:<T>; the figure of
each is the median of its repetitions ("median" aggregate) of the GFLOP/s counter. The peak at T
threads is the best median of bench_peak's fma_peak/* (float) or fma_peak_f64/* (double) rows at T
threads. Prints one table per kernel type and then checks the targets of the GEMM issue.
"""
import glob
import json
import os
import sys

PEERS = ["openblas", "blis", "eigen", "onednn", "libxsmm"]


def runs(path):
    """{(name0, name1, name2, threads): the median record} of one Google Benchmark JSON file.

    Names are <lib>/<kernel>/<MxNxK>/threads:<T> (bench_gemm) or <kernel>/<variant>/threads:<T>
    (bench_peak, whose key has an empty third part). Shared with plot_roofline.py.
    """
    out = {}
    if os.path.getsize(path) == 0:  # a binary whose filter matched nothing writes no JSON
        return out
    with open(path) as fh:
        data = json.load(fh)
    for r in data.get("benchmarks", []):
        if r.get("run_type") == "aggregate" and r.get("aggregate_name") != "median":
            continue
        parts = [p for p in r.get("run_name", r["name"]).split("/") if p != "real_time"]
        if len(parts) < 3:
            continue
        threads = int(parts[-1].split(":")[1]) if parts[-1].startswith("threads") else 1
        out[(parts[0], parts[1], parts[2] if len(parts) > 3 else "", threads)] = r
    return out


def medians(path):
    """{(lib, kernel, shape, threads): median GFLOP/s} of one JSON file."""
    return {k: r["GFLOP/s"] for k, r in runs(path).items() if "GFLOP/s" in r}


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    d = argv[1]
    rows = {}
    for f in sorted(glob.glob(os.path.join(d, "gemm_*.json"))):
        rows.update(medians(f))
    peak = {}
    pk = os.path.join(d, "bench_peak.json")
    if os.path.exists(pk):
        for (lib, chains, _, t), v in medians(pk).items():
            kind = "f64" if lib == "fma_peak_f64" else "f32" if lib == "fma_peak" else None
            if kind:
                peak[(kind, t)] = max(peak.get((kind, t), 0.0), v)
    libs = sorted({k[0] for k in rows}, key=lambda l: (l != "loom", l))
    peers = [p for p in PEERS if p in libs]

    def get(lib, kernel, shape, t):
        return rows.get((lib, kernel, shape, t))

    def pct(v, kind, t):
        p = peak.get((kind, t))
        return 100.0 * v / p if (v is not None and p) else None

    print("peak (measured, GFLOP/s): " + ", ".join(f"{k} {t} thr {v:.1f}" for (k, t), v in sorted(peak.items())))
    shapes = sorted({(k[2], k[3]) for k in rows if k[1] in ("sgemm", "dgemm")},
                    key=lambda s: (s[1], [int(x) for x in s[0].split("x")]))
    for kernel, kind in (("sgemm", "f32"), ("dgemm", "f64")):
        header = f"\n{kernel}: GFLOP/s (% of {kind} peak) and loom / peer\n{'shape':>16} thr  {'loom':>15}"
        header += "".join(f"  {p:>20}" for p in peers)
        print(header)
        for shape, t in shapes:
            lv = get("loom", kernel, shape, t)
            if lv is None:
                continue
            line = f"{shape:>16} {t:>3}  {lv:7.1f} ({pct(lv, kind, t) or 0:4.1f}%)"
            for p in peers:
                pv = get(p, kernel, shape, t)
                line += f"  {pv:7.1f} ({pct(pv, kind, t) or 0:4.1f}%) {lv / pv:4.2f}x" if pv else f"  {'-':>20}"
            print(line)
    extra = sorted({k[1] for k in rows if k[0] == "loom" and k[1] not in ("sgemm", "dgemm")})
    for kernel in extra:
        print(f"\nloom {kernel}: GFLOP/s (% of peak), ratio to loom sgemm and to libxsmm")
        for (lib, kn, shape, t), v in sorted(rows.items(), key=lambda kv: (kv[0][3], [int(x) for x in kv[0][2].split("x")])):
            if lib != "loom" or kn != kernel:
                continue
            base = get("loom", "sgemm", shape, t)
            xs = get("libxsmm", "sgemm", shape, t)
            line = f"{shape:>16} {t:>3}  {v:7.1f} ({pct(v, 'f32', t) or 0:4.1f}%)"
            line += f"  vs sgemm {v / base:5.3f}x" if base else ""
            line += f"  vs libxsmm {v / xs:4.2f}x" if xs else ""
            print(line)

    print("\ntargets")
    checks = []

    def target(desc, value, bound):
        if value is None:
            checks.append(f"  [ n/a ] {desc}: not measured")
            return
        ok = value >= bound
        checks.append(f"  [{'MET' if ok else 'NOT MET':^5}] {desc}: {value:.3f} (needs >= {bound})")

    def ratio(a, b):
        return a / b if (a is not None and b) else None

    # The convolution issue's "last steps" of the GEMM engine, then the older GEMM issue's
    # epilogue and double targets.
    for t in (1, 2):
        for s in ("1024x1024x1024", "2048x2048x2048", "64x4096x1024"):
            lv = get("loom", "sgemm", s, t)
            if s != "64x4096x1024":
                target(f"sgemm {s} {t} thr % of peak", pct(lv, "f32", t), 90)
            target(f"sgemm {s} {t} thr loom / oneDNN", ratio(lv, get("onednn", "sgemm", s, t)), 1.00)
            target(f"sgemm {s} {t} thr loom / OpenBLAS", ratio(lv, get("openblas", "sgemm", s, t)), 1.00)
        s = "3136x64x576"
        target(f"sgemm {s} {t} thr loom / oneDNN", ratio(get("loom", "sgemm", s, t), get("onednn", "sgemm", s, t)), 1.10)
        for n in (1024, 2048):
            s = f"{n}x{n}x{n}"
            target(f"bias+relu {s} {t} thr / plain sgemm", ratio(get("loom", "sgemm_bias_relu", s, t),
                                                                 get("loom", "sgemm", s, t)), 0.99)
        s = "1024x1024x1024"
        target(f"dgemm {s} {t} thr % of FP64 peak", pct(get("loom", "dgemm", s, t), "f64", t), 85)
    for n in (16, 32, 64):
        s = f"{n}x{n}x{n}"
        target(f"static sgemm {s} 1 thr loom / libxsmm",
               ratio(get("loom", "sgemm_static", s, 1), get("libxsmm", "sgemm", s, 1)), 1.0)
        target(f"run-time sgemm {s} 1 thr loom / libxsmm",
               ratio(get("loom", "sgemm", s, 1), get("libxsmm", "sgemm", s, 1)), 1.0)
    print("\n".join(checks))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
