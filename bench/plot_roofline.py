#!/usr/bin/env python3
"""Draw bench/run_gemm.sh or bench/run_conv.sh results on the roofline of the machine they ran on (PNG).

    python3 bench/plot_roofline.py RESULTS_DIR [OUT.png] [--threads 1]

GEMM results (run_gemm.sh): RESULTS_DIR/gemm_*.json and RESULTS_DIR/bench_peak.json. Convolution
results (run_conv.sh): RESULTS_DIR/loom.t<T>.json, onednn.t<T>.json and peak.json. All are Google
Benchmark JSON, median aggregates. The roofs are measured, not taken from a datasheet: the FP32 FMA
peak (best fma_peak/* median) and the copy bandwidth (copy_bw/64MiB median, bytes read + written)
at the same thread count. Each GEMM is placed at its arithmetic intensity 2MNK / (4 (MK + KN + MN))
flop per byte (the compulsory traffic: read A and B once, write C once), each convolution layer at
its nominal flops over its compulsory bytes (input and weights read once, output written once:
bench_conv's `bytes` counter), both at their median GFLOP/s, one marker per library. Winograd
rows can sit above the FMA roof: their GFLOP/s are nominal (the direct method's flop count).
Needs matplotlib (Debian: python3-matplotlib; scripts/deps gemm-peers).
"""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_gemm import runs  # noqa: E402  (the same parsing of benchmark names)

MARKERS = {"loom": "o", "openblas": "s", "blis": "^", "eigen": "v", "onednn": "D", "libxsmm": "P"}
COLORS = {"loom": "tab:red", "openblas": "tab:blue", "blis": "tab:green", "eigen": "tab:purple", "onednn": "tab:orange",
          "libxsmm": "tab:brown"}


# Convolution rows drawn: loom's default choice, and oneDNN's direct and Winograd primitives.
CONV_ROWS = {"loom": ("loom", "o", "tab:red"), "onednn_direct": ("oneDNN direct", "D", "tab:orange"),
             "onednn_winograd": ("oneDNN Winograd", "s", "tab:olive")}


def plot_conv(ax, d, threads):
    """One marker per layer and library from run_conv.sh's JSON; loom's labelled with the layer."""
    rows = {}
    for lib in ("loom", "onednn"):
        path = os.path.join(d, f"{lib}.t{threads}.json")
        if os.path.exists(path):
            rows.update(runs(path))
    for (_, layer, impl, t), r in sorted(rows.items()):
        if t != threads or impl not in CONV_ROWS or "GFLOP/s" not in r or not r.get("bytes"):
            continue
        label, marker, color = CONV_ROWS[impl]
        ai = r["flops"] / r["bytes"]
        ax.scatter([ai], [r["GFLOP/s"]], marker=marker, s=40, label=label, color=color, zorder=3 if impl == "loom" else 2)
        if impl == "loom":
            ax.annotate(layer, (ai, r["GFLOP/s"]), textcoords="offset points", xytext=(4, -10), fontsize=7)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    threads = 1
    if "--threads" in argv:
        threads = int(argv[argv.index("--threads") + 1])
        args = [a for a in args if a != str(threads)]
    if not args:
        print(__doc__)
        return 2
    d = args[0]
    out_png = args[1] if len(args) > 1 else os.path.join(d, f"roofline_{threads}t.png")
    try:
        import matplotlib
    except ImportError:
        print("plot_roofline: needs matplotlib: apt-get install python3-matplotlib (bash scripts/deps gemm-peers), "
              "then run it with the system /usr/bin/python3")
        return 1

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    conv = os.path.exists(os.path.join(d, f"loom.t{threads}.json"))
    peak_rows = runs(os.path.join(d, "peak.json" if conv else "bench_peak.json"))
    peak = max((r["GFLOP/s"] for (n, _, _, t), r in peak_rows.items() if n == "fma_peak" and t == threads), default=None)
    bw = next((r["GB/s"] for (n, _, _, t), r in peak_rows.items() if n == "copy_bw" and t == threads), None)
    if peak is None or bw is None:
        print(f"plot_roofline: no fma_peak or copy_bw rows at {threads} thread(s) in bench_peak.json")
        return 1
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [2 ** (e / 4) for e in range(-8, 4 * 10)]
    ax.plot(xs, [min(peak, bw * x) for x in xs], "k-", lw=2, label=f"roof: {peak:.0f} GFLOP/s, {bw:.0f} GB/s")
    if conv:
        plot_conv(ax, d, threads)
    for f in ([] if conv else sorted(glob.glob(os.path.join(d, "gemm_*.json")))):
        for (lib, kernel, shape, t), r in sorted(runs(f).items()):
            if t != threads or "GFLOP/s" not in r:
                continue
            if kernel not in ("sgemm", "sgemm_bias_relu", "sgemm_static"):
                continue
            m, n, k = (int(v) for v in shape.split("x"))
            ai = 2.0 * m * n * k / (4.0 * (m * k + k * n + m * n))
            label = lib if kernel == "sgemm" else f"{lib} {kernel[6:]}"
            color = COLORS.get(lib, "black")
            # loom's variants: bias_relu an open circle, static a star (the library markers stay filled).
            marker = {"sgemm_bias_relu": "o", "sgemm_static": "*"}.get(kernel, MARKERS.get(lib, "x"))
            ax.scatter([ai], [r["GFLOP/s"]], marker=marker, s=60 if kernel == "sgemm_static" else 40, label=label,
                       edgecolors=color,
                       facecolors="none" if kernel == "sgemm_bias_relu" else color, zorder=3 if lib == "loom" else 2)
            if lib == "loom" and kernel == "sgemm":
                ax.annotate(shape, (ai, r["GFLOP/s"]), textcoords="offset points", xytext=(4, -10), fontsize=7)
    handles, labels = ax.get_legend_handles_labels()
    seen = {}
    for h, l in zip(handles, labels):
        seen.setdefault(l, h)
    ax.legend(seen.values(), seen.keys(), fontsize=8, loc="lower right")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("arithmetic intensity (flop per byte of compulsory traffic)")
    ax.set_ylabel("GFLOP/s (median)")
    what = "convolution layers (batch 1 unless named n8)" if conv else "GEMM"
    ax.set_title(f"FP32 {what} on the measured roofline, {threads} thread(s)")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)
    print(f"plot_roofline: wrote {out_png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
