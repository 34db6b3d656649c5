#!/usr/bin/env python3
"""Pool bench/gpu/lockstep.py results: one line per (workload, mode X vs reference mode R).

  bench/gpu/lockstep_summary.py FILE.json... [--ref R | --ref R:X]...

Reference modes (default: `--ref untraced --ref min-full:full`): `--ref R` gives every mode X against R, `--ref R:X`
only X against R (e.g. `--ref min-full` for every full-mode part against CUPTI's floor).

Every pair X:R or R:X gives one ratio X/R (its B/A or the inverse), so a pair and its mirror (the two CPU sets
swapped) both count. A group of three or more (X:R:X:R...) gives one ratio X/R (geometric means of its processes)
and, for a mode with two processes in it, one A/A ratio (R/R: what the method leaves). Pooled: the geometric mean of the pairs' ratios with a 95 % t-interval over pairs (the
spread between pairs, not the steps inside one, is the honest error: step noise inside a pair is correlated).
Also per pair: the median-step ratio. Exit: seconds from the result file to the process's end, per mode (median, max)."""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchstats import geo, pooled as pool_ratios  # noqa: E402



def add_group(p, w, refs, pooled, exits, f):
    """A group of 3+ processes in turns: per (mode X, reference R) one sample, geomean of X's processes over
    geomean of R's; per mode with two processes or more, one A/A sample (its first process over its second)."""
    for r in p["procs"]:
        if r.get("exit_s") is not None and r.get("exit_valid"):
            exits.setdefault((w, r["mode"]), []).append(r["exit_s"])
    if not p.get("ok"):
        return
    by = {}
    for r in p["procs"]:
        by.setdefault(r["mode"], []).append(r)
    for x, xs in by.items():  # A/A: any mode with two processes or more in the group
        if len(xs) >= 2:
            pooled.setdefault((w, x, x), []).append(
                (xs[0]["mean_ms"] / xs[1]["mean_ms"], xs[0]["median_ms"] / xs[1]["median_ms"], f))
    for ref, only in refs.items():
        if ref not in by:
            continue
        for x, xs in by.items():
            if x != ref and (only is None or x == only):
                pooled.setdefault((w, x, ref), []).append(
                    (geo(r["mean_ms"] for r in xs) / geo(r["mean_ms"] for r in by[ref]),
                     geo(r["median_ms"] for r in xs) / geo(r["median_ms"] for r in by[ref]), f))


def parse_args(argv):
    """(files, refs): refs maps a reference mode R to the only mode X compared with it (None: every mode)."""
    files, refs, i = [], {}, 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        if a == "--ref" or a.startswith("--ref="):
            v = a[len("--ref="):] if a.startswith("--ref=") else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if a.startswith("--ref=") else 2
            r, _, x = v.partition(":")
            if not r:
                sys.exit("lockstep_summary: --ref wants a mode, R or R:X")
            refs[r] = x or None
            continue
        if a.startswith("-"):
            sys.exit(f"lockstep_summary: unknown option {a} (see --help)")
        files.append(a)
        i += 1
    if not files:
        sys.exit("lockstep_summary: no result file given (see --help)")
    return files, refs or {"untraced": None, "min-full": "full"}


def main():
    files, refs = parse_args(sys.argv[1:])
    pooled = {}
    exits = {}
    for f in files:
        d = json.load(open(f))
        w = d["workload"]
        for p in d["pairs"]:
            if "procs" in p:
                add_group(p, w, refs, pooled, exits, f)
                continue
            ma, mb = p["pair"].split(":")
            for side, m in (("a", ma), ("b", mb)):
                # files written before exit_valid: only side A's exit was timed right (B was polled after A ended)
                if p[side].get("exit_s") is not None and (p[side].get("exit_valid") or side == "a"):
                    exits.setdefault((w, m), []).append(p[side]["exit_s"])
            if "ratio" not in p:
                continue
            for r, only in refs.items():
                if mb == r and ma != r and (only is None or ma == only):
                    x, ratio, med = ma, 1 / p["ratio"], 1 / p["median_ratio"]
                elif ma == r and (only is None or mb == only):
                    x, ratio, med = mb, p["ratio"], p["median_ratio"]
                else:
                    continue
                pooled.setdefault((w, x, r), []).append((ratio, med, f))
    print(f"{'workload':12s} {'mode':16s} {'vs':9s} {'n':>2s} {'pooled':>8s} {'95% CI':>17s}  per pair (B/A turned to mode/ref)")
    rows = []
    for (w, x, r), v in sorted(pooled.items()):
        g, lo, hi = pool_ratios([a for a, _, _ in v])
        print(f"{w:12s} {x:16s} {r:9s} {len(v):2d} {g:8.4f} [{lo:.4f}, {hi:.4f}]  "
              + " ".join(f"{a:.3f}" for a, _, _ in v)
              + "  (median-step: " + " ".join(f"{b:.3f}" for _, b, _ in v) + ")")
        rows.append(dict(workload=w, mode=x, ref=r, n=len(v), pooled=g, ci=[lo, hi], ratios=[a for a, _, _ in v]))
    print("\nexit after the result (s): " + "; ".join(
        f"{w} {m} {statistics.median(v):.2f} (max {max(v):.2f}, n {len(v)})" for (w, m), v in sorted(exits.items())))
    return rows


if __name__ == "__main__":
    main()
