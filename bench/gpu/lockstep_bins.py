#!/usr/bin/env python3
"""Where in the timed steps a mode's cost sits, from lock-step groups (bench/gpu/lockstep.py results).

  bench/gpu/lockstep_bins.py FILE.json... [--mode default] [--ref untraced] [--bin 25] [--exclude LO:HI]
                             [--period-s 30]

Why: railscope's default pays a few milliseconds per kernel window (attach, the first step with kernel activity,
the finalize) every 30 s of wall time. In a lock-step group of k processes each process steps only 1/k of the
wall time, so a per-window cost weighs k times more in the group's ratio than in a lone run; a cost spread over
every step weighs the same. This separates the two:
- per bin of --bin consecutive steps (step i of every process in a group is at about the same wall time), the
  mode's excess over the reference in %, mean over groups: a window shows as a bump;
- with --exclude LO:HI, the pooled ratio over the steps outside LO..HI-1 (geometric mean over groups, 95 %
  t-interval), and the excess inside LO..HI-1 in ms per process (the mode's steps there minus the reference's
  scaled by the outside ratio) and what that would be per --period-s seconds of a lone run.
The range is a reading aid, not a test: choose it from the bins before trusting the split, and say so.
A step longer than --clip times its process's median counts as that median (a preemption of a loaded machine, not
the tracer; none in the H200 runs, where the longest step is ~2x the median); how many is printed."""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchstats import geo, pooled  # noqa: E402


def clipped(steps, clip, count):
    med = statistics.median(steps)
    out = [x if x <= clip * med else med for x in steps]
    count[0] += sum(1 for x in steps if x > clip * med)
    return out


def groups(files, mode, ref, clip, count):
    """Per group: (steps of the mode's processes, steps of the reference's), trimmed to the shortest process."""
    for f in files:
        with open(f) as fh:
            d = json.load(fh)
        for p in d["pairs"]:
            if not p.get("ok") or "procs" not in p:
                continue
            by = {}
            for r in p["procs"]:
                by.setdefault(r["mode"], []).append(clipped(r["steps_ms"], clip, count))
            if mode in by and ref in by:
                n = min(len(s) for v in (by[mode], by[ref]) for s in v)
                yield [s[:n] for s in by[mode]], [s[:n] for s in by[ref]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--mode", default="default")
    ap.add_argument("--ref", default="untraced")
    ap.add_argument("--bin", type=int, default=25)
    ap.add_argument("--exclude", help="LO:HI, timed steps LO..HI-1")
    ap.add_argument("--period-s", type=float, default=30.0, help="wall time between windows in a lone run")
    ap.add_argument("--clip", type=float, default=5.0, help="a step over this many times its process's median counts as the median")
    a = ap.parse_args()
    count = [0]
    gs = list(groups(a.files, a.mode, a.ref, a.clip, count))
    if len(gs) < 2:
        sys.exit(f"lockstep_bins: {len(gs)} group(s) with both {a.mode} and {a.ref}: need 2 or more")
    n = min(len(m[0]) for m, _ in gs)
    rows = []
    for b in range(0, n - a.bin + 1, a.bin):
        ex = [100 * (statistics.mean(statistics.mean(s[b:b + a.bin]) for s in m)
                     / statistics.mean(statistics.mean(s[b:b + a.bin]) for s in r) - 1) for m, r in gs]
        rows.append((b, statistics.mean(ex), statistics.stdev(ex) / len(ex) ** 0.5))
    print(f"{a.mode} vs {a.ref}, {len(gs)} groups, {count[0]} steps over {a.clip:g}x their median clipped; "
          f"excess per bin of {a.bin} steps (mean % over groups, +- s.e.):")
    for b, m, se in rows:
        print(f"  steps {b:4d}-{b + a.bin - 1:4d}  {m:+6.2f} % +- {se:4.2f}")
    if not a.exclude:
        return
    lo, hi = (int(x) for x in a.exclude.split(":"))
    if not 0 <= lo < hi <= n:
        sys.exit(f"lockstep_bins: --exclude {a.exclude} is not inside steps 0..{n}")
    outside, excess_ms = [], []
    for m, r in gs:
        o = geo(statistics.mean(s[:lo] + s[hi:]) for s in m) / geo(statistics.mean(s[:lo] + s[hi:]) for s in r)
        outside.append(o)
        excess_ms.append(statistics.mean(sum(s[lo:hi]) for s in m) - o * statistics.mean(sum(s[lo:hi]) for s in r))
    g, cl, ch = pooled(outside)
    e, es = statistics.mean(excess_ms), statistics.stdev(excess_ms) / len(excess_ms) ** 0.5
    print(f"outside steps {lo}-{hi - 1}: {a.mode}/{a.ref} {g:.4f} [{cl:.4f}, {ch:.4f}] over {len(gs)} groups")
    print(f"inside steps {lo}-{hi - 1}: {e:+.1f} ms per {a.mode} process (s.e. {es:.1f}); once per {a.period_s:g} s "
          f"of a lone run: {100 * e / (a.period_s * 1000):+.3f} %")


if __name__ == "__main__":
    main()
