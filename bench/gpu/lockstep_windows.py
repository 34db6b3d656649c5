#!/usr/bin/env python3
"""Where a mode's cost sits in time relative to its sampling windows, from lock-step groups whose traces were kept.

  bench/gpu/lockstep.py ... --keep default --out O     (keeps the default processes' traces; steps' start times)
  bench/gpu/lockstep_windows.py O/lockstep-resnet.json [--mode default] [--ref untraced] [--bin-s 5]
                                [--railscope build/railscope] [--windows FILE]

Why (session 11): ResNet-50's default cost in lock step was +1.8 %, and by step bins it rose over a stretch of
~80 steps (~25 s of wall) after the +30 s window rather than at the window itself. Step bins cannot say whether the
cost follows a window: each process's windows fall at its own times. This lines every step of a --mode process up
with that process's own windows (cuda_kernel_window events of its kept trace, `railscope dump --abs`; both are
CLOCK_MONOTONIC ns) and sorts its excess over the group's --ref processes at the same step (their mean) into: steps
that overlap a window, steps before the first window, and steps starting 0-5 s, 5-10 s, ... after window k ended
(k counts the process's own windows: CUDA init, +3 s and +33 s by default, the first two usually in the warm-up).
A cost paid while CUPTI is attached shows in the window row; one left behind by a window (a stretch after it)
shows in the first rows after it; one left by the first window on steady steps and kept (session 11's lone run:
steps 28.5-36.6 ms before its +33 s window, 37.6-41.8 ms after) shows after window 3 and not after window 2; one
spread over every step shows in every row alike.
--windows FILE: windows given by hand instead, JSON {process tag: [[on_ns, off_ns], ...]} (the harness's self-test;
or windows read from a debug log). Per row: steps, processes, and the excess as sum(mode) / sum(ref) - 1 with a
standard error over processes (steps within one process are correlated)."""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def trace_windows(rs, path):
    """[(on_ns, off_ns)] of a trace directory, from its cuda_kernel_window events (an unclosed one ends at +inf)."""
    try:
        out = subprocess.run([rs, "dump", "--abs", path], capture_output=True, text=True, timeout=300).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        sys.exit(f"lockstep_windows: cannot dump {path}: {e}")
    ev = []
    for line in out.splitlines():
        f = line.split()
        if len(f) > 3 and f[2] == "cuda_kernel_window" and f[3] in ("on=0", "on=1"):
            ev.append((int(f[0]), f[3] == "on=1"))
    ev.sort()
    wins, start = [], None
    for t, on in ev:
        if on and start is None:
            start = t
        elif not on and start is not None:
            wins.append((start, t))
            start = None
    if start is not None:
        wins.append((start, math.inf))
    return wins


def place(t0, t1, wins, bin_s):
    """The row of a step [t0, t1): 'window', 'before', or (k, bin): the bin of the time since window k (1-based, the
    process's own windows in order) ended, k being the last one that ended before the step."""
    last = None
    for k, (on, off) in enumerate(wins, 1):
        if on < t1 and t0 < off:
            return "window"
        if off <= t0:
            last = (k, off)
    if last is None:
        return "before"
    return (last[0], int((t0 - last[1]) / 1e9 // bin_s))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--mode", default="default")
    ap.add_argument("--ref", default="untraced")
    ap.add_argument("--bin-s", type=float, default=5.0)
    ap.add_argument("--railscope", default=os.path.join(os.environ.get("RS_BUILD", os.path.join(TOP, "build")),
                                                         "railscope"))
    ap.add_argument("--windows", help="JSON {tag: [[on_ns, off_ns], ...]} instead of the kept traces")
    a = ap.parse_args()
    given = None
    if a.windows:
        with open(a.windows) as fh:
            given = {k: [(on, off) for on, off in v] for k, v in json.load(fh).items()}
    rows = {}  # row -> per process: [sum mode ms, sum ref ms, steps]
    nproc = 0
    for f in a.files:
        with open(f) as fh:
            d = json.load(fh)
        for g in d["pairs"]:
            if not g.get("ok") or "procs" not in g:
                continue
            refs = [r["steps_ms"] for r in g["procs"] if r["mode"] == a.ref and r.get("steps_ms")]
            if not refs:
                continue
            for r in g["procs"]:
                if r["mode"] != a.mode or not r.get("steps_t_ns"):
                    continue
                if given is not None:
                    wins = given.get(r.get("tag"))
                elif r.get("trace"):
                    wins = trace_windows(a.railscope, r["trace"])
                else:
                    wins = None
                if wins is None:
                    continue
                nproc += 1
                n = min(len(r["steps_ms"]), min(len(x) for x in refs))
                mine = {}
                for i in range(n):
                    t0 = r["steps_t_ns"][i]
                    row = place(t0, t0 + r["steps_ms"][i] * 1e6, wins, a.bin_s)
                    acc = mine.setdefault(row, [0.0, 0.0, 0])
                    acc[0] += r["steps_ms"][i]
                    acc[1] += statistics.mean(x[i] for x in refs)
                    acc[2] += 1
                for row, acc in mine.items():
                    rows.setdefault(row, []).append(acc)
    if not nproc:
        sys.exit(f"lockstep_windows: no {a.mode} process with step times and windows (lockstep.py --keep {a.mode}) "
                 f"in a group with {a.ref}")
    print(f"{a.mode} vs {a.ref} by time since the process's own last window, {nproc} {a.mode} processes "
          f"(excess = sum of its steps / the {a.ref} processes' mean at the same steps - 1; s.e. over processes):")
    order = ["before", "window"] + sorted(k for k in rows if isinstance(k, tuple))
    for row in order:
        if row not in rows:
            continue
        accs = rows[row]
        steps = sum(x[2] for x in accs)
        ex = 100 * (sum(x[0] for x in accs) / sum(x[1] for x in accs) - 1)
        per = [100 * (x[0] / x[1] - 1) for x in accs]
        se = statistics.stdev(per) / len(per) ** 0.5 if len(per) > 1 else float("nan")
        if row == "before":
            label = "before the first window"
        elif row == "window":
            label = "overlapping a window"
        else:
            label = f"{row[1] * a.bin_s:g}-{(row[1] + 1) * a.bin_s:g} s after window {row[0]}"
        print(f"  {label:26s} {steps:5d} steps {len(accs):3d} procs  {ex:+6.2f} % +- {se:4.2f}")


if __name__ == "__main__":
    main()
