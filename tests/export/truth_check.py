#!/usr/bin/env python3
"""Checks a Chrome JSON export of a GPU scenario fixture (tests/gpu/fixtures/<scen>) against its planted truth.

    truth_check.py FIXTURE_DIR EXPORT.json

Per rank (the process named "rank R (host pid P)", R checked against truth.json's pid map): the NVTX step
ranges are all there (truth "steps"), each within 0.5 ms of the rank's own step bounds (truth.rank<R>.json,
CLOCK_MONOTONIC ns) after one constant offset per rank; the offsets of all ranks agree within 100 us (one
host: the export's clock merge maps every rank the same); a rank that sleeps before its forward
(truth "stragglers": planted_ms) shows that idle time between its step start and its first event on a thread
track (median within 15 % of the sleep), the other ranks less than 2 ms; each rank's NCCL AllReduce slices
(profiler plugin, seq-joined) are all present, each saying where its end came from (end_from: "proxy" on these
NET/Socket runs, where every collective has ProxyOp children).
The collectives span the wait for a late rank: NCCL's own Coll event stops at enqueue (a few us), the export ends
the slice at its last child. Per rank waiting for the planted late ranks (truth "straggler" arrival_lag_ms, or
"straggler_model" wait_ms with several), per AllReduce seq the part of the rank's slice before the latest planted
rank's enqueue (min(end, latest enqueue) - own enqueue), the largest over a step's buckets, averaged over the
truth's steps (from its first_step_used, 2): within 10 % (+0.5 ms) of the truth's wait. Ranks that wait less than
2 ms are not checked.
"""
import bisect
import collections
import decimal
import json
import os
import re
import statistics
import sys

fails = []


def check(cond, msg):
    print(("ok    " if cond else "FAIL  ") + msg)
    if not cond:
        fails.append(msg)


def ns(v):
    """Microseconds as the JSON wrote them (json's parse_float=str below keeps a number's text) to exact integer ns:
    a number with at most 3 decimals by string arithmetic, anything else through Decimal (as every number went
    before: 460 k Decimals were half of this script's time on s2_ib's 54 MB export)."""
    if isinstance(v, int):
        return v * 1000
    i, dot, f = v.partition(".")
    if len(f) <= 3 and i.lstrip("-").isdigit() and (not f or f.isdigit()):
        return int(i + f.ljust(3, "0"))
    return int(round(decimal.Decimal(v) * 1000))


def main():
    fx, path = sys.argv[1], sys.argv[2]
    truth = json.load(open(os.path.join(fx, "truth.json")))
    doc = json.load(open(path, encoding="utf-8"), parse_float=str)   # ns() reads ts and dur exactly
    pname, tname = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            pname[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            tname[(e["pid"], e["tid"])] = e["args"]["name"]
    rank_of = {}
    for p, n in pname.items():
        m = re.match(r"rank (\d+) \(\S+ pid (\d+)\)$", n)
        u = re.match(r"\S+ pid (\d+)$", n)   # no rank in the trace (mp.spawn): the truth's pid map says it
        if u and u.group(1) in truth["pids"]:
            rank_of[p] = truth["pids"][u.group(1)]
        elif m:
            check(truth["pids"].get(m.group(2)) == int(m.group(1)), "process %r: rank as the truth's pid map says" % n)
            rank_of[p] = int(m.group(1))
    check(sorted(rank_of.values()) == list(range(truth["world"])), "one process per rank: %s" % sorted(rank_of.values()))
    stacks, ranges, xs = collections.defaultdict(list), collections.defaultdict(list), collections.defaultdict(list)
    for e in doc["traceEvents"]:
        k = (e["pid"], e.get("tid"))
        if e["ph"] == "B":
            stacks[k].append((ns(e["ts"]), e["name"]))
        elif e["ph"] == "E":
            t0, n = stacks[k].pop()
            ranges[e["pid"]].append((t0, ns(e["ts"]), n))
        elif e["ph"] == "X":
            xs[e["pid"]].append((ns(e["ts"]), ns(e["dur"]), e["name"], tname.get(k, ""), e.get("args", {})))
    form = truth["nvtx_form"]
    pat = re.compile("^" + re.escape(form).replace(re.escape("{i}"), r"\d+") + "$")
    if form == "profstep":   # record_function under emit_nvtx: "ProfilerStep#3, op_id = 573"
        pat = re.compile(r"^ProfilerStep#\d+(, |$)")
    planted = truth.get("stragglers") or ([truth["straggler"]] if truth.get("straggler") else [])
    sleep = {s["rank"]: s["planted_ms"] for s in planted if s.get("kind") == "cpu"}
    gpu_busy = {s["rank"] for s in planted if s.get("kind") == "gpu"}   # launches its extra matmuls first
    # NCCL_PROFILER_PLUGIN=none (s2_noplugin): the NCCL API calls alone, no profiler Coll slice to span the wait
    # (the report estimates it from the arrival lag: docs/report.md); the calls must be there, the slices not
    noplugin = truth.get("scenario") == "s2_noplugin"
    offsets, allr, stepr = {}, {}, {}
    for p, r in sorted(rank_of.items(), key=lambda kv: kv[1]):
        steps = sorted((a, b) for a, b, n in ranges[p] if pat.match(n))
        check(len(steps) == truth["steps"], "rank %d: %d step ranges (truth %d)" % (r, len(steps), truth["steps"]))
        tf = os.path.join(fx, "truth.rank%d.json" % r)
        if os.path.exists(tf):
            b = json.load(open(tf))["step_bounds_ns"]
            off = [s[0] - t[1] for s, t in zip(steps, b)] + [s[1] - t[2] for s, t in zip(steps, b)]
            med = int(statistics.median(off))
            worst = max(abs(o - med) for o in off)
            check(worst < 500000, "rank %d: step bounds within %.3f ms of the truth's (one offset)" % (r, worst / 1e6))
            offsets[r] = med
        gaps = []
        # the earliest thread event of each step (a bisection: a scan of every event per step was 3.4 s on s2_ib)
        starts = sorted(t for t, d, n, tr, _ in xs[p] if not tr.startswith("NCCL") and "nvtx" not in tr)
        for a, b in steps:
            i = bisect.bisect_left(starts, a)
            if i < len(starts) and starts[i] < b:
                gaps.append((starts[i] - a) / 1e6)
        g = statistics.median(gaps) if gaps else -1
        if r in sleep:
            check(abs(g - sleep[r]) < 0.15 * sleep[r], "rank %d: idle %.3f ms before its forward (slept %s ms)" % (r, g, sleep[r]))
        elif r not in gpu_busy:
            check(0 <= g < 2, "rank %d: %.3f ms from step start to its first thread event (no sleep planted)" % (r, g))
        colls = [(t, d, a) for t, d, n, tr, a in xs[p] if tr.startswith("NCCL comm") and n == "AllReduce"]
        seqs = [int(a["seq"]) for t, d, a in colls]
        calls = sum(1 for x in xs[p] if x[2] == "ncclAllReduce")
        if noplugin:
            check(not seqs and calls > 0, "rank %d: %d ncclAllReduce calls, %d profiler AllReduce slices (none: no plugin)" % (r, calls, len(seqs)))
            stepr[r] = steps
            continue
        check(len(seqs) == len(set(seqs)) == calls > 0, "rank %d: %d AllReduce collectives, %d ncclAllReduce calls" % (r, len(seqs), calls))
        froms = collections.Counter(a.get("end_from") for t, d, a in colls)
        check(froms["proxy"] == len(colls), "rank %d: AllReduce slices end at their last ProxyOp (end_from %s)" % (r, dict(froms)))
        allr[r] = {int(a["seq"]): (t, t + d) for t, d, a in colls}
        stepr[r] = steps
    # the collectives span the wait for the planted late ranks
    late = sorted(sleep)
    wait = {}
    if truth.get("straggler") and truth["straggler"].get("kind") == "cpu":
        wait = {int(k): v for k, v in truth["straggler"].get("arrival_lag_ms", {}).items()}
    elif truth.get("straggler_model"):
        wait = {int(k): v for k, v in truth["straggler_model"].get("wait_ms", {}).items()}
    first = (truth.get("straggler_model") or {}).get("first_step_used") or 2
    for r, w in sorted(wait.items()):
        if w < 2 or r not in allr or any(q not in allr for q in late):
            continue
        per_step = []
        for a, b in stepr[r][first:]:
            cov = []
            for q, (t0, t1) in allr[r].items():
                others = [allr[o][q][0] for o in late if o != r and q in allr[o]]
                if a <= t0 < b and others:
                    cov.append(max(0, min(t1, max(others)) - t0) / 1e6)
            if cov:
                per_step.append(max(cov))
        got = statistics.mean(per_step) if per_step else 0
        check(abs(got - w) <= 0.1 * w + 0.5, "rank %d: its AllReduce slices span %.3f ms of waiting for the late rank(s) %s (truth %.3f ms, %d steps)" % (r, got, late, w, len(per_step)))
    if offsets:
        spread = max(offsets.values()) - min(offsets.values())
        check(spread < 100000, "ranks' clocks merged: truth->export offsets agree within %.1f us" % (spread / 1e3))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
