#!/usr/bin/env python3
"""Summarize bench/run_pipelines.sh's results: loom's pipelines against Halide 14, Eigen and oneDNN 2.6.

    python3 bench/summarize_pipelines.py RESULTS_DIR     # every *.json in it, and others.tsv

Standard library only. Reads the "median" aggregate of each benchmark <kernel>/<impl>/threads:<T>
(bench_pipelines, bench_pipelines_halide, bench_pipelines_onednn, bench_peak) and prints, per app
(blur, blur_u16, unsharp, harris; an app without results, or a table without any, is left out)
and thread count:

  * ms of loom best, loom root, loom default, hand-fused, Halide best, Halide root (and Halide root
    with its buffers kept from run to run, halide_root_keep). "loom best" is
    the faster of loom_best (Halide's app schedule transcribed) and loom_tuned (when present);
    "Halide best" the fastest Halide schedule that is not compute_root. A letter says which.
  * the ratios loom best / Halide best, loom root / loom best, loom default / loom best (time
    ratios: above 1 is slower), and loom_best / halide_app: the same schedule in both;
  * then every implementation: ms, GB/s (input + output once), % of the copy bandwidth measured at
    the same thread count (bench_peak copy_bw/64MiB), the peak intermediate storage, the spread of
    the repetitions (cv) and the share of the machine other processes took while it ran;
  * softmax and layer norm (4096 x 4096): loom one definition, loom pipeline (the faster of its two
    schedules), Eigen (the faster of its serial and OpenMP row loops), oneDNN (softmax_forward /
    layer_normalization_forward, forward_inference), then loom / Eigen (time ratios: at most 1 is
    loom at least as fast as Eigen) and oneDNN / loom (how many times faster loom is than oneDNN:
    the target is at least 2), for each of loom's two.
"""
import glob
import json
import os
import sys

APPS = ["blur", "blur_u16", "unsharp", "harris"]
ROWWISE = ["softmax", "layernorm"]


def parse_name(name):
    """'blur/loom_best/threads:2/real_time' -> ('blur', 'loom_best', 2)."""
    parts = [p for p in name.split("/") if p not in ("real_time", "process_time")]
    threads, rest = 1, []
    for p in parts:
        if p.startswith("threads:"):
            threads = int(p.split(":", 1)[1])
        else:
            rest.append(p)
    return rest[0], "/".join(rest[1:]), threads


def load(results):
    rows, context = {}, {}
    for f in sorted(glob.glob(os.path.join(results, "*.json"))):
        if os.path.getsize(f) == 0:
            continue
        with open(f) as fh:
            data = json.load(fh)
        context[os.path.basename(f)] = data.get("context", {})
        agg = {}
        for r in data.get("benchmarks", []):
            if r.get("error_occurred"):
                continue
            key = parse_name(r.get("run_name") or r["name"])
            kind = r.get("aggregate_name", "")
            if kind in ("median", "cv", ""):
                agg.setdefault(key, {})[kind or "plain"] = r
        for key, a in agg.items():
            r = a.get("median") or a.get("plain")
            if r is None:
                continue
            unit = r.get("time_unit", "ns")
            scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
            cv = a.get("cv")
            rows[key] = {
                "ms": float(r["real_time"]) * scale,
                "gbs": float(r["GB/s"]) if "GB/s" in r else None,
                "gflops": float(r["GFLOP/s"]) if "GFLOP/s" in r else None,
                "storage": float(r["storage_bytes"]) if "storage_bytes" in r else None,
                "cv": float(cv["real_time"]) if cv and "real_time" in cv else None,
            }
    return rows, context


def load_others(results):
    """{(kernel, threads, library): share of the machine others took}, from others.tsv labels
    'loom blur 2t' / 'halide blur 2t' / 'onednn softmax 2t'."""
    out = {}
    f = os.path.join(results, "others.tsv")
    if os.path.exists(f):
        for line in open(f):
            parts = line.rstrip("\n").split("\t")
            words = parts[0].split()
            if len(parts) == 2 and len(words) == 3 and words[2].endswith("t"):
                out[(words[1], int(words[2][:-1]), words[0])] = float(parts[1])
    return out


def fmt(v, spec, none="-"):
    """v formatted by spec; `none` right-aligned to spec's width when v is None."""
    if v is not None:
        return format(v, spec)
    width = spec.split(".")[0]
    return none.rjust(int(width) if width.isdigit() else 0)


def mb(b):
    if b is None:
        return "-"
    if b == 0:
        return "0"
    return f"{b / 1e6:.2f} MB" if b >= 1e5 else f"{b / 1e3:.1f} kB"


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    results = argv[1]
    rows, context = load(results)
    others = load_others(results)
    if not rows:
        print("no benchmark results in", results)
        return 1
    machine = os.path.join(results, "machine.txt")
    if os.path.exists(machine):
        for line in open(machine):
            if line.startswith(("cpu:", "cpus:", "loom commit", "include/")):
                print("#", line.rstrip())
    for f, c in context.items():
        if f.startswith("halide"):
            print(f"# Halide JIT target: {c.get('halide_target', '?')} (natural float width {c.get('halide_natural_float_width', '?')})")
            break
    for f, c in context.items():
        if f.startswith("onednn"):
            print(f"# oneDNN {c.get('onednn_version', '?')}, ISA {c.get('onednn_isa', '?')}: softmax "
                  f"{c.get('onednn_softmax_impl', '?')}, layer norm {c.get('onednn_layernorm_impl', '?')}")
            break
    threads = sorted({t for _, _, t in rows})
    peak = {t: max((v["gflops"] for (k, _, u), v in rows.items() if k == "fma_peak" and u == t and v["gflops"]), default=None)
            for t in threads}
    copy = {t: max((v["gbs"] for (k, _, u), v in rows.items() if k == "copy_bw" and u <= t and v["gbs"]), default=None)
            for t in threads}
    for t in threads:
        print(f"# {t} thread(s): FMA peak {fmt(peak[t], '.0f')} GFLOP/s, copy {fmt(copy[t], '.1f')} GB/s (bench_peak, medians)")
    print()

    def get(k, impl, t):
        v = rows.get((k, impl, t))
        return v["ms"] if v else None

    def best_of(k, t, pred):
        c = [(v["ms"], impl) for (kk, impl, u), v in rows.items() if kk == k and u == t and pred(impl)]
        return min(c) if c else (None, None)

    def ratio(a, b):
        return a / b if a is not None and b else None

    # ---- the apps: one line per app and thread count (left out when only softmax / layer norm ran) ----
    if any(k in APPS for k, _, _ in rows):
        head = (f"{'app':<8} {'thr':>3} {'loom best':>11} {'loom root':>9} {'loom dflt':>9} {'hand fused':>10} "
                f"{'Halide best':>13} {'Halide root':>11} {'(kept)':>8} | {'best/H.best':>11} {'root/best':>9} {'dflt/best':>9} "
                f"{'loom_best/halide_app':>20}")
        print("Image apps, 6400 x 4800 (float; blur_u16: uint16): median ms per run (time ratios: above 1 is slower)")
        print(head)
        print("-" * len(head))
        for k in APPS:
            for t in threads:
                lb, lbi = best_of(k, t, lambda i: i in ("loom_best", "loom_tuned"))
                if lb is None:
                    continue
                hb, hbi = best_of(k, t, lambda i: i.startswith("halide") and "root" not in i)
                lr, ld, hf, hr = get(k, "loom_root", t), get(k, "loom_default", t), get(k, "hand_fused", t), get(k, "halide_root", t)
                hk = get(k, "halide_root_keep", t)
                same = ratio(get(k, "loom_best", t), get(k, "halide_app", t))
                tag = "t" if lbi == "loom_tuned" else "a"
                htag = {"halide_app": "a", "halide_app_native": "n", "halide_tiled": "T", "halide_app_nocw": "c"}.get(hbi, "")
                print(f"{k:<8} {t:>3} {fmt(lb, '9.2f')} {tag} {fmt(lr, '9.2f')} {fmt(ld, '9.2f')} {fmt(hf, '10.2f')} "
                      f"{fmt(hb, '11.2f')} {htag:1} {fmt(hr, '11.2f')} {fmt(hk, '8.2f')} | {fmt(ratio(lb, hb), '11.2f')} {fmt(ratio(lr, lb), '9.2f')} "
                      f"{fmt(ratio(ld, lb), '9.2f')} {fmt(same, '20.2f')}")
        print("loom best: a = loom_best (Halide's app schedule), t = loom_tuned. Halide best: a = halide_app, "
              "n = app with native-width vectors, T = tiled, c = app without compute_with.")
        print("Halide root allocates its buffers in every run (page faults); (kept): halide_root_keep, whose allocator "
              "keeps them, as loom keeps its arena.")
        print()

    # ---- every implementation ----
    head = (f"{'kernel':<10} {'implementation':<20} {'thr':>3} {'ms':>9} {'GB/s':>7} {'%copy':>6} {'storage':>10} "
            f"{'cv%':>5} {'others%':>7}")
    print(head)
    print("-" * len(head))
    order = APPS + ROWWISE
    for k in sorted({k for k, _, _ in rows if k in order}, key=order.index):
        for impl, t in sorted({(i, u) for kk, i, u in rows if kk == k}, key=lambda x: (x[1], x[0])):
            v = rows[(k, impl, t)]
            pct = 100 * v["gbs"] / copy[t] if v["gbs"] and copy.get(t) else None
            lib = "halide" if impl.startswith("halide") else "onednn" if impl.startswith("onednn") else "loom"
            o = others.get((k, t, lib))
            print(f"{k:<10} {impl:<20} {t:>3} {v['ms']:9.2f} {fmt(v['gbs'], '7.2f')} {fmt(pct, '6.1f')} {mb(v['storage']):>10} "
                  f"{fmt(100 * v['cv'] if v['cv'] is not None else None, '5.1f')} {fmt(100 * o if o is not None else None, '7.1f')}")
        print()

    # ---- softmax and layer norm (left out when only the image apps ran) ----
    if any(k in ROWWISE for k, _, _ in rows):
        head = (f"{'kernel':<10} {'thr':>3} {'loom onedef':>11} {'loom pipeline':>13} {'Eigen':>9} {'oneDNN':>9} | "
                f"{'onedef/Eigen':>12} {'pipeline/Eigen':>14} | {'oneDNN/onedef':>13} {'oneDNN/pipeline':>15}")
        print("Row-wise, 4096 x 4096 float: median ms (loom pipeline: the faster of loom_pipeline and loom_pipeline_tuned; "
              "Eigen: the faster of its serial and OpenMP row loops)")
        print("loom/Eigen: time ratio (target: at most 1); oneDNN/loom: how many times faster loom is (target: at least 2)")
        print(head)
        print("-" * len(head))
        for k in ROWWISE:
            for t in threads:
                one = get(k, "loom_onedef", t)
                pipe, _ = best_of(k, t, lambda i: i.startswith("loom_pipeline"))
                d = get(k, "onednn", t)
                if one is None and pipe is None and d is None:
                    continue
                e, _ = best_of(k, t, lambda i: i.startswith("eigen"))
                print(f"{k:<10} {t:>3} {fmt(one, '11.2f')} {fmt(pipe, '13.2f')} {fmt(e, '9.2f')} {fmt(d, '9.2f')} | "
                      f"{fmt(ratio(one, e), '12.2f')} {fmt(ratio(pipe, e), '14.2f')} | {fmt(ratio(d, one), '13.2f')} "
                      f"{fmt(ratio(d, pipe), '15.2f')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
