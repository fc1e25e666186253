#!/usr/bin/env python3
"""Summarize loom's benchmark JSON (Google Benchmark --benchmark_out) as a table.

    python3 bench/summarize.py RESULTS_DIR            # reads every *.json in it
    python3 bench/summarize.py core.json peak.json    # or the files themselves

Standard library only. For each benchmark named <kernel>/<impl>/threads:<T> it prints the median
(the "median" aggregate of --benchmark_repetitions; the median of the plain runs otherwise) of its
"GB/s" or "GFLOP/s" counter, the spread of the repetitions (cv %), and:

  * memory-bound kernels (GB/s): % of the copy bandwidth measured in the same run: the best copy
    (loom, memcpy, OpenMP memcpy, plain loop, streaming-store copy) of the matching size with at
    most T threads;
  * compute-bound kernels (GFLOP/s): % of the measured FMA peak at T threads (bench_peak: best of
    its chain counts);
  * for loom rows: loom / Eigen (the best Eigen variant at T threads, e.g. eigen or eigen_omp) and
    loom / xtensor.

Then it checks the performance targets and prints MET / NOT MET with the numbers. The bandwidth
targets compare with what the issue names, a plain copy of the same bytes (memcpy, OpenMP memcpy
or a plain loop, whichever is fastest); each line also gives the % of the best copy of all, loom's
own streaming copy, a harder roof.
"""
import glob
import json
import os
import statistics
import sys

# Which copy measures the bandwidth a memory-bound kernel is compared with.
COPY_REF = {
    "copy_16M": "copy_16M",
    "fused_16M": "copy_16M",
    "add_16M": "copy_16M",
    "copy_4096x4096": "copy_4096x4096",
    "rowsum_4096": "copy_4096x4096",
    "colsum_4096": "copy_4096x4096",
    "rowsum_65536x256": "copy_4096x4096",  # the same 64 MiB
    "colsum_65536x256": "copy_4096x4096",
    "colsum_8x2097152": "copy_4096x4096",
    "transpose_8192": "copy_4096x4096",  # a 64 MiB copy: both far outside the caches
    "read_4096x4096": "copy_4096x4096",
}
# Row-wise s(i) = sum(j, f(X(i, j), v(i))) over the same 64 MiB, row-major (rm) and column-major (cm).
ROWWISE_KERNELS = [f"rowwise_{f}_{lay}" for f in ("exp", "mul", "max") for lay in ("rm", "cm")]
COPY_REF.update({k: "copy_4096x4096" for k in ROWWISE_KERNELS})
# Copies that make the reference: every copy, the streaming-store one (copy_16M/nt_stores) too,
# since loom's own kernels stream their stores once the data outgrows the cache.
COPY_REF_IMPLS = ("loom", "memcpy", "memcpy_omp", "plain", "nt_stores")
# The copies with ordinary (cached) stores: the issue's "plain copy of the same bytes", which the
# bandwidth targets are checked against (the best copy of all is reported beside it).
ORDINARY_COPY_IMPLS = ("memcpy", "memcpy_omp", "plain")
# The read roof of the reductions (they only read): a hand-written xsimd sum of the same bytes.
READ_REF = {"rowsum_4096": "read_4096x4096", "colsum_4096": "read_4096x4096", "read_4096x4096": "read_4096x4096",
            "rowsum_65536x256": "read_4096x4096", "colsum_65536x256": "read_4096x4096",
            "colsum_8x2097152": "read_4096x4096"}
PEAK_KERNEL = "fma_peak"


def load(paths):
    """[(file, runs)] and {file: context}; a directory contributes *.json and parts/*.json."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "*.json"))) + sorted(glob.glob(os.path.join(p, "parts", "*.json")))
        else:
            files.append(p)
    per_file, context = [], {}
    for f in files:
        if os.path.getsize(f) == 0:  # a binary whose filter matched nothing writes no JSON
            continue
        with open(f) as fh:
            data = json.load(fh)
        per_file.append((f, data.get("benchmarks", [])))
        # per-benchmark runs (run.sh -p) share one context: keep the first of each binary
        base = os.path.basename(f).split(".")[0]
        context.setdefault(base, data.get("context", {}))
    return per_file, context


def parse_name(name):
    """'fused_16M/loom_default/threads:2/real_time' -> ('fused_16M', 'loom_default', 2)."""
    parts = [p for p in name.split("/") if p not in ("real_time", "process_time")]
    threads = 1
    rest = []
    for p in parts:
        if p.startswith("threads:"):
            threads = int(p.split(":", 1)[1])
        else:
            rest.append(p)
    kernel = rest[0] if rest else name
    impl = "/".join(rest[1:]) if len(rest) > 1 else ""
    return kernel, impl, threads


def metric_of(run):
    for unit in ("GB/s", "GFLOP/s"):
        if unit in run:
            return unit, float(run[unit])
    return None, None


def load_others(paths):
    """{(kernel, impl, threads): share of the machine other processes used} from run.sh -p."""
    out = {}
    for p in paths:
        f = os.path.join(p, "parts", "others.tsv") if os.path.isdir(p) else None
        if f and os.path.exists(f):
            with open(f) as fh:
                for line in fh:
                    parts = line.rstrip("\n").split("\t")
                    if len(parts) >= 2:
                        out[parse_name(parts[0])] = float(parts[1])
    return out


def collect(per_file):
    """{(kernel, impl, threads): {'unit', 'median', 'cv', 'n'}}; a benchmark found in several files
    (run.sh -p tries) is taken from the one whose repetitions agree best (smallest cv)."""
    rows = {}
    for _, runs in per_file:
        for key, v in collect_one(runs).items():
            old = rows.get(key)
            cv_new = v["cv"] if v["cv"] is not None else float("inf")
            cv_old = old["cv"] if old and old["cv"] is not None else float("inf")
            if old is None or cv_new < cv_old:
                rows[key] = v
    return rows


def collect_one(runs):
    medians, cvs, plain = {}, {}, {}
    for r in runs:
        if r.get("error_occurred"):
            continue
        name = r.get("run_name") or r["name"]
        key = parse_name(name)
        unit, val = metric_of(r)
        if unit is None:
            continue
        if r.get("run_type") == "aggregate":
            agg = r.get("aggregate_name")
            if agg == "median":
                medians[key] = (unit, val, r.get("repetitions", 0))
            elif agg == "cv":
                cvs[key] = val
        else:
            plain.setdefault(key, (unit, []))[1].append(val)
    rows = {}
    for key, (unit, val, n) in medians.items():
        rows[key] = {"unit": unit, "median": val, "cv": cvs.get(key), "n": n}
    for key, (unit, vals) in plain.items():
        if key not in rows:
            cv = statistics.pstdev(vals) / statistics.mean(vals) if len(vals) > 1 and statistics.mean(vals) else None
            rows[key] = {"unit": unit, "median": statistics.median(vals), "cv": cv, "n": len(vals)}
    return rows


def best(rows, kernel, pred, threads_ok):
    cands = [(v["median"], impl, t) for (k, impl, t), v in rows.items() if k == kernel and pred(impl) and threads_ok(t)]
    return max(cands) if cands else None


def is_loom(impl):
    return impl.startswith("loom")


def is_eigen(impl):
    return impl.startswith("eigen")


def is_xtensor(impl):
    return impl.startswith("xtensor")


def references(rows):
    def copy_ref(kernel, t):
        ref = COPY_REF.get(kernel)
        if ref is None:
            return None
        return best(rows, ref, lambda impl: impl in COPY_REF_IMPLS, lambda u: u <= t)

    def peak_ref(t):
        return best(rows, PEAK_KERNEL, lambda impl: True, lambda u: u == t)

    return copy_ref, peak_ref


def fmt(x, spec):
    return format(x, spec) if x is not None else "-"


def table(rows, others=None):
    others = others or {}
    copy_ref, peak_ref = references(rows)
    order = ["copy_16M", "copy_4096x4096", "read_4096x4096", "fused_16M", "add_16M", "rowsum_4096", "colsum_4096", "rowsum_65536x256", "colsum_65536x256", "colsum_8x2097152", "transpose_8192", "gemm_512", PEAK_KERNEL] + ROWWISE_KERNELS
    kernels = sorted({k for k, _, _ in rows}, key=lambda k: (order.index(k) if k in order else len(order), k))
    header = (f"{'kernel':<16} {'implementation':<30} {'thr':>3} {'median':>9} {'unit':<7} {'cv%':>5} "
              + (f"{'others%':>7} " if others else "")
              + f"{'%ref':>7} {'ref':<28} {'vs Eigen':>9} {'vs xtensor':>10}")
    lines = [header, "-" * len(header)]
    for kernel in kernels:
        impls = sorted({(impl, t) for k, impl, t in rows if k == kernel}, key=lambda x: (x[1], x[0]))
        for impl, t in impls:
            v = rows[(kernel, impl, t)]
            pct, ref_name = None, ""
            if v["unit"] == "GB/s":
                ref = copy_ref(kernel, t)
                if ref:
                    pct = 100.0 * v["median"] / ref[0]
                    ref_name = f"copy {ref[1]}@{ref[2]}t {ref[0]:.1f}"
            elif v["unit"] == "GFLOP/s":
                ref = peak_ref(t)
                if ref:
                    pct = 100.0 * v["median"] / ref[0]
                    ref_name = f"peak {ref[1]}@{ref[2]}t {ref[0]:.0f}"
            ve = vx = None
            if is_loom(impl):
                e = best(rows, kernel, is_eigen, lambda u: u == t)
                x = best(rows, kernel, is_xtensor, lambda u: u == t)
                ve = v["median"] / e[0] if e else None
                vx = v["median"] / x[0] if x else None
            cv = 100.0 * v["cv"] if v["cv"] is not None else None
            oth = others.get((kernel, impl, t))
            lines.append(
                f"{kernel:<16} {impl:<30} {t:>3} {v['median']:>9.2f} {v['unit']:<7} {fmt(cv, '5.1f'):>5} "
                + (f"{fmt(100 * oth if oth is not None else None, '7.1f'):>7} " if others else "") +
                f"{fmt(pct, '6.1f') + ('%' if pct is not None else ''):>7} {ref_name:<28} "
                f"{fmt(ve, '8.2f') + ('x' if ve is not None else ''):>9} {fmt(vx, '9.2f') + ('x' if vx is not None else ''):>10}"
            )
        lines.append("")
    return "\n".join(lines)


def targets(rows):
    copy_ref, peak_ref = references(rows)
    out = []

    def get(kernel, impl, t):
        v = rows.get((kernel, impl, t))
        return v["median"] if v else None

    def verdict(ok):
        return "MET    " if ok else "NOT MET"

    threads = sorted({t for _, _, t in rows})

    def plain_copy(kernel, t):
        # The issue's yardstick: "a plain copy of the same bytes" (memcpy, OpenMP memcpy, a plain
        # loop; ordinary stores), the best of them at <= t threads.
        return best(rows, COPY_REF[kernel], lambda impl: impl in ORDINARY_COPY_IMPLS, lambda u: u <= t)

    def stricter(v, t, kernel):
        # The best copy of all (loom's own streams its stores and walks 4 far-apart streams beyond
        # the cache, which outruns every plain copy): a harder roof, reported beside the target.
        ref = copy_ref(kernel, t)
        return f"; {100 * v / ref[0]:.0f}% of the best copy of all ({ref[1]} {ref[0]:.1f})" if ref else ""

    for t in threads:
        pc = plain_copy("fused_16M", t)
        e = best(rows, "fused_16M", is_eigen, lambda u: u == t)
        x = best(rows, "fused_16M", is_xtensor, lambda u: u == t)
        o = best(rows, "copy_16M", lambda c: c in COPY_REF_IMPLS and c != "loom", lambda u: u <= t)
        for impl in ("loom_default", "loom_hand"):
            v = get("fused_16M", impl, t)
            if v is None or pc is None:
                continue
            pct = 100 * v / pc[0]
            out.append(f"{verdict(pct >= 90)} fused {impl} {t}t: {v:.1f} GB/s = {pct:.0f}% of the plain copy "
                       f"({pc[1]}@{pc[2]}t {pc[0]:.1f}){stricter(v, t, 'fused_16M')} [target >= 90% of copy]")
            if o:
                out.append(f"REPORT  fused {impl} {t}t: {100 * v / o[0]:.0f}% of the best copy other than loom's ({o[1]}@{o[2]}t {o[0]:.1f} GB/s)")
            if e:
                out.append(f"{verdict(v / e[0] >= 1.2)} fused {impl} {t}t: {v / e[0]:.2f}x Eigen ({e[1]} {e[0]:.1f} GB/s) [target >= 1.2x]")
            if x:
                out.append(f"{verdict(v / x[0] >= 1.2)} fused {impl} {t}t: {v / x[0]:.2f}x xtensor ({x[0]:.1f} GB/s) [target >= 1.2x]")
            a = get("add_16M", "loom_default", t)
            if impl == "loom_default" and a is not None:
                out.append(f"REPORT  fused {impl} {t}t: {100 * v / a:.0f}% of the same bytes without the math "
                           f"(add_16M {a:.1f} GB/s = {100 * a / pc[0]:.0f}% of the plain copy)")
    for kernel in ("rowsum_4096", "colsum_4096"):
        for t in threads:
            pc = plain_copy(kernel, t)
            if pc is None:
                continue
            d = get(kernel, "loom_default", t)
            b = best(rows, kernel, is_loom, lambda u: u == t)
            rd = get(READ_REF[kernel], "xsimd", t)

            def more(v):
                return stricter(v, t, kernel) + (f"; {100 * v / rd:.0f}% of the hand-written read ({rd:.1f})" if rd else "")
            if d is not None:
                pct = 100 * d / pc[0]
                out.append(f"{verdict(pct >= 85)} {kernel} loom_default {t}t: {d:.1f} GB/s = {pct:.0f}% of the plain copy "
                           f"({pc[1]}@{pc[2]}t {pc[0]:.1f}){more(d)} [target >= 85% of copy]")
            if b and b[1] != "loom_default":
                pct = 100 * b[0] / pc[0]
                out.append(f"{verdict(pct >= 85)} {kernel} best loom ({b[1]}) {t}t: {b[0]:.1f} GB/s = {pct:.0f}% of the plain copy{more(b[0])} [target >= 85% of copy]")
    # The default against the best hand schedule of the same kernel (loom_hand_*), per thread count.
    for kernel in ROWWISE_KERNELS:
        for t in threads:
            d = get(kernel, "loom_default", t)
            h = best(rows, kernel, lambda impl: impl.startswith("loom_hand"), lambda u: u == t)
            if d is None or h is None:
                continue
            out.append(f"{verdict(h[0] / d <= 1.2)} {kernel} loom_default {t}t: {d:.1f} GB/s; best hand ({h[1]}) "
                       f"{h[0]:.1f} GB/s = {h[0] / d:.2f}x the default [target <= 1.2x]")
    for t in threads:
        un = best(rows, "transpose_8192", lambda impl: impl.startswith("loom_untiled"), lambda u: u == t)
        if un is None:
            continue
        for name, pred in (("default", lambda impl: impl == "loom_default"),
                           ("best tiled", lambda impl: impl.startswith("loom_tiled") or impl == "loom_default")):
            tl = best(rows, "transpose_8192", pred, lambda u: u == t)
            if tl:
                out.append(f"{verdict(tl[0] / un[0] >= 3)} transpose {name} ({tl[1]}) {t}t: {tl[0]:.2f} GB/s = "
                           f"{tl[0] / un[0]:.1f}x the best untiled ({un[1]} {un[0]:.2f} GB/s) [target >= 3x]")
    for t in threads:
        pk = peak_ref(t)
        if pk is None:
            continue
        for name, pred in (("default", lambda impl: impl == "loom_default"), ("best", is_loom)):
            g = best(rows, "gemm_512", pred, lambda u: u == t)
            if g:
                out.append(f"REPORT  gemm 512^3 {name} ({g[1]}) {t}t: {g[0]:.1f} GFLOP/s = {100 * g[0] / pk[0]:.0f}% of measured peak ({pk[0]:.0f})")
    return "\n".join(out)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    per_file, context = load(argv[1:])
    rows = collect(per_file)
    if not rows:
        print("no benchmark results found in", " ".join(argv[1:]))
        return 1
    for f, c in context.items():
        info = ", ".join(f"{k}={c[k]}" for k in ("date", "num_cpus", "mhz_per_cpu", "load_avg", "library_build_type") if k in c)
        extra = ", ".join(f"{k}={v}" for k, v in c.items() if k in ("eigen", "xtensor", "simd_arch", "loom_simd_width_float"))
        print(f"# {f}: {info}{'; ' + extra if extra else ''}")
    print()
    others = load_others(argv[1:])
    print(table(rows, others))
    if others:
        print("others%: share of the machine (all CPUs) that other processes used while the benchmark ran.")
        print()
    print("Targets:")
    print(targets(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
