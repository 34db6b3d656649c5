#!/usr/bin/env python3
"""Does the report's extrapolation of sampled GPU activity (analyzer/analyze_sampling.c) give the shares of a
fully traced run? Takes `railscope report --json` of a run traced with RAILSCOPE_CUDA_KERNELS=all, plays a
sampling window of WINDOW_S seconds (consecutive steps) at every position, re-splits the other steps as the
analyzer does ("abs": the window steps' mean GPU work per step, the rest host idle; "frac": the window steps'
fractions, the method it replaced) and prints the largest difference from the full report's shares over all
window positions, in points of step time.

  railscope report --json TRACE_DIR > full.json; bench/gpu/sampling_check.py full.json [WINDOW_S]"""
import json
import sys

CATS = ["compute", "h2d_exposed", "host_idle", "other"]


def main():
    j = json.load(open(sys.argv[1]))
    win = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    steps = j["steps"]
    L = [s["mean_s"] for s in steps]
    A = [{c: s["attribution"][c] for c in CATS} for s in steps]
    tot = sum(L)
    full = {c: sum(a[c] for a in A) / tot for c in CATS}
    print("full report: " + ", ".join(f"{c} {100 * v:.2f} %" for c, v in full.items()) + f" ({len(steps)} steps)")
    for method in ("abs", "frac"):
        worst, worst_at = 0.0, None
        for w0 in range(len(steps)):
            ins, t = [], 0.0
            for k in range(w0, len(steps)):
                if t >= win:
                    break
                ins.append(k)
                t += L[k]
            if t < win:
                break
            insum = {c: sum(A[i][c] for i in ins) for c in CATS}
            inpool = sum(insum.values())
            out = {c: 0.0 for c in CATS}
            inset = set(ins)
            for i, a in enumerate(A):
                pool = sum(a.values())
                if i in inset:
                    for c in CATS:
                        out[c] += a[c]
                elif method == "frac":
                    for c in CATS:
                        out[c] += pool * insum[c] / inpool
                else:
                    work = {c: insum[c] / len(ins) for c in CATS if c != "host_idle"}
                    s = sum(work.values())
                    scale = pool / s if s > pool else 1.0
                    for c in work:
                        out[c] += work[c] * scale
                    out["host_idle"] += pool - s * scale
            d = max(abs(out[c] / tot - full[c]) for c in CATS)
            if d > worst:
                worst, worst_at = d, (w0, len(ins), {c: round(100 * out[c] / tot, 2) for c in CATS})
        print(f"{method}: largest difference over window positions {100 * worst:.2f} points (window at step "
              f"{worst_at[0]}, {worst_at[1]} steps: {worst_at[2]})")


if __name__ == "__main__":
    main()
