#!/usr/bin/env python3
"""Summarise tests/gpu/run.sh's overhead rounds: B-<mode>-<round>.json files from train.py (step_ms of the
timed steady-state region). Prints per-round step times, and per mode the median over rounds and its ratio
to untraced, plus the round-paired ratios (each traced run against the untraced run of its own round)."""
import json
import os
import re
import statistics
import sys
from collections import defaultdict

MODES = ["untraced", "nocuda", "copies", "lean", "default", "full", "fullapi", "torchprof"]
NAMES = {"untraced": "untraced", "nocuda": "railscope, CUDA capture off", "copies": "railscope, copies only", "lean": "railscope lean (no API/sync rec.)",
         "default": "railscope default (kernels sampled)", "full": "railscope full (every kernel)",
         "fullapi": "railscope full + API/sync records",
         "torchprof": "torch.profiler (CPU+CUDA)"}


def main():
    ms = defaultdict(dict)
    for p in sys.argv[1:]:
        m = re.match(r"B-(\w+)-(\d+)\.json$", os.path.basename(p))
        if not m:
            continue
        r = json.load(open(p))
        if r.get("step_ms"):
            ms[m.group(1)][int(m.group(2))] = r["step_ms"][0]
    rounds = sorted({r for d in ms.values() for r in d})
    print("mode".ljust(38) + "".join(f"round {r:<4}" for r in rounds) + " median   vs untraced  paired ratios")
    base = statistics.median(ms["untraced"].values()) if ms["untraced"] else None
    out = {}
    for m in MODES:
        if not ms[m]:
            continue
        med = statistics.median(ms[m].values())
        paired = [ms[m][r] / ms["untraced"][r] for r in rounds if r in ms[m] and r in ms["untraced"]]
        ratio = med / base if base else float("nan")
        out[m] = dict(step_ms=ms[m], median_ms=med, ratio=ratio, paired=paired)
        print(NAMES[m].ljust(38) + "".join(f"{ms[m].get(r, float('nan')):<10.3f}" for r in rounds)
              + f" {med:7.3f}  {ratio:8.4f}    " + " ".join(f"{x:.4f}" for x in paired))
    print("BENCH " + json.dumps(out))


if __name__ == "__main__":
    main()
