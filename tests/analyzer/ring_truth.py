#!/usr/bin/env python3
"""What the report of a late_ring run must say, from what the program itself measured: each rank's first data
send per iteration (CLOCK_MONOTONIC ms, "rank R: result OK, first send ms: ..."), compared by the report's
documented rule (docs/report.md, "Stragglers"): in a step, a rank is late when it arrives more than max(20 us, 1 %
of the mean step) after the bulk of the ranks (the lower median of the arrivals: with the ring's 3 ranks the
next-latest, so only the last rank can be late); every other rank then waits from its own arrival to the late
rank's; a rank late in more than half of the steps is persistent.

On a loaded host any rank can be descheduled for ms after the barrier, so which rank is late, and how long the
others wait, is whatever happened in that run: this computes it from the program's own clock instead of
assuming the planted rank. A step whose margin is close to the threshold (within 2x either way: the program
reads its clock just before ibv_post_send, the tracer just after) may go either way: it counts in the upper
bound of a wait and in the "may" set of persistent stragglers, not in the lower bound or the "must" set.

    ring_truth.py PROGRAM_OUTPUT REPORT_JSON

Prints one line per mismatch (nothing when the report agrees) and the measured truth as TAP diagnostics on
stderr."""
import json
import re
import sys

arr = {}
for line in open(sys.argv[1]):
    m = re.match(r"rank (\d+): result OK, first send ms: (.*)", line)
    if m:
        arr[int(m.group(1))] = [float(x) for x in m.group(2).split()]
rep = json.load(open(sys.argv[2]))
n = min(len(v) for v in arr.values()) if arr else 0
if len(arr) < 2 or not n or rep.get("nsteps") != n:
    print(f"cannot compare: {len(arr)} ranks printed their arrivals, {n} steps, report nsteps {rep.get('nsteps')}")
    sys.exit(0)
thr = max(0.020, 0.01 * rep["step_mean_s"] * 1e3)  # ms
lo_band, hi_band = thr / 2, 2 * thr + 0.05
wait_lo = {r: 0.0 for r in arr}
wait_hi = {r: 0.0 for r in arr}
must, may = {}, {}
steps = []
for k in range(n):
    order = sorted(arr, key=lambda r: arr[r][k])
    last, nxt = order[-1], order[(len(order) - 1) // 2]  # the bulk: with 3 ranks the next-latest
    margin = arr[last][k] - arr[nxt][k]
    steps.append(f"{last}+{margin:.3f}")
    if margin <= lo_band:
        continue
    may[last] = may.get(last, 0) + 1
    clear = margin > hi_band
    if clear:
        must[last] = must.get(last, 0) + 1
    for r in arr:
        if r != last:
            w = (arr[last][k] - arr[r][k]) / 1e3
            wait_hi[r] += w
            if clear:
                wait_lo[r] += w
print(f"# program: threshold {thr:.3f} ms, per step the last rank + its margin (ms): {' '.join(steps)}", file=sys.stderr)
bad = []
got_wait = {x["rank"]: x["attribution"]["peer_wait"] for x in rep["ranks"]}
for r in sorted(arr):
    g = got_wait.get(r, 0.0)
    print(f"# rank {r}: waits {g:.4f} s in the report, {wait_lo[r]:.4f}..{wait_hi[r]:.4f} s by the program's clock",
          file=sys.stderr)
    if not (0.9 * wait_lo[r] - 0.001 <= g <= 1.1 * wait_hi[r] + 0.001):
        bad.append(f"rank {r} waits {g:.4f} s, measured {wait_lo[r]:.4f}..{wait_hi[r]:.4f}")
pers = {x["rank"] for x in rep.get("stragglers", []) if x.get("persistent")}
must_p = {r for r, c in must.items() if 2 * c > n}
may_p = {r for r, c in may.items() if 2 * c > n}
print(f"# persistent stragglers: report {sorted(pers)}, by the program's clock must {sorted(must_p)}, "
      f"may {sorted(may_p)}", file=sys.stderr)
if not must_p <= pers:
    bad.append(f"persistent {sorted(pers)} misses {sorted(must_p - pers)}")
if not pers <= may_p:
    bad.append(f"persistent {sorted(pers)} names {sorted(pers - may_p)}, late in at most half of the steps")
print("; ".join(bad))
