#!/usr/bin/env python3
"""Mean step time per bin of wall time, with the kernel windows, from one kept trace (its 'step N' NVTX ranges):
does a window leave the steps after it slower? Usage: step_bins.py TRACE [--bin S] [--skip N] (session 11)."""
import argparse
import collections
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("trace")
    ap.add_argument("--bin", type=float, default=2.0, help="seconds a bin")
    ap.add_argument("--skip", type=int, default=30, help="first steps left out (warm-up)")
    ap.add_argument("--cli", default=os.path.join(TOP, "build", "railscope"))
    a = ap.parse_args()
    p = subprocess.run([a.cli, "dump", a.trace], capture_output=True, text=True)
    if p.returncode and not p.stdout:  # 1 with events: a partial trace (e.g. no PROC_END), still usable
        sys.exit(f"step_bins: {a.trace}: {p.stderr.strip()}")
    if p.returncode:
        print(f"step_bins: {a.trace}: partial: {p.stderr.strip()}", file=sys.stderr)
    starts, wins = {}, []
    for ln in p.stdout.splitlines():
        f = ln.split(None, 1)
        if not f or not f[0].startswith("+"):
            continue
        t = float(f[0])
        if "cuda_kernel_window" in ln:
            wins.append((t, " on=1 " in ln))
        m = re.search(r'nvtx_push .*message="step ([0-9]+)"', ln)
        if m:
            starts[int(m.group(1))] = t
    st = sorted(starts.items())
    dur = [(st[i][1], st[i + 1][1] - st[i][1]) for i in range(len(st) - 1)][a.skip:]
    if not dur:
        sys.exit("step_bins: no 'step N' ranges")
    print("windows (s from the trace's start): " + " ".join(f"{t:.2f}{'+' if on else '-'}" for t, on in sorted(wins)))
    b = collections.defaultdict(list)
    for t, d in dur:
        b[int(t // a.bin)].append(d)
    for k in sorted(b):
        v = b[k]
        lo = k * a.bin
        mark = " <- window" if any(lo <= t < lo + a.bin and on for t, on in wins) else ""
        print(f"{lo:7.1f} s  steps {len(v):4d}  mean {1e3 * sum(v) / len(v):8.3f} ms{mark}")


if __name__ == "__main__":
    main()
