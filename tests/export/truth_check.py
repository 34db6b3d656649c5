#!/usr/bin/env python3
"""Checks a Chrome JSON export of a GPU scenario fixture (tests/gpu/fixtures/<scen>) against its planted truth.

    truth_check.py FIXTURE_DIR EXPORT.json

Per rank (the process named "rank R (host pid P)", R checked against truth.json's pid map): the NVTX step
ranges are all there (truth "steps"), each within 0.5 ms of the rank's own step bounds (truth.rank<R>.json,
CLOCK_MONOTONIC ns) after one constant offset per rank; the offsets of all ranks agree within 100 us (one
host: the export's clock merge maps every rank the same); a rank that sleeps before its forward
(truth "stragglers": planted_ms) shows that idle time between its step start and its first event on a thread
track (median within 15 % of the sleep), the other ranks less than 2 ms; each rank's NCCL AllReduce slices
(profiler plugin, seq-joined) are all present. Prints the numbers; exit 1 on the first failures.
"""
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
    return int(round(decimal.Decimal(v) * 1000))


def main():
    fx, path = sys.argv[1], sys.argv[2]
    truth = json.load(open(os.path.join(fx, "truth.json")))
    doc = json.load(open(path, encoding="utf-8"), parse_float=decimal.Decimal)
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
    offsets = {}
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
        for a, b in steps:
            firsts = [t for t, d, n, tr, _ in xs[p] if a <= t < b and not tr.startswith("NCCL") and "nvtx" not in tr]
            if firsts:
                gaps.append((min(firsts) - a) / 1e6)
        g = statistics.median(gaps) if gaps else -1
        if r in sleep:
            check(abs(g - sleep[r]) < 0.15 * sleep[r], "rank %d: idle %.3f ms before its forward (slept %s ms)" % (r, g, sleep[r]))
        elif r not in gpu_busy:
            check(0 <= g < 2, "rank %d: %.3f ms from step start to its first thread event (no sleep planted)" % (r, g))
        seqs = [int(a["seq"]) for t, d, n, tr, a in xs[p] if tr.startswith("NCCL comm") and n == "AllReduce"]
        calls = sum(1 for x in xs[p] if x[2] == "ncclAllReduce")
        check(len(seqs) == len(set(seqs)) == calls > 0, "rank %d: %d AllReduce collectives, %d ncclAllReduce calls" % (r, len(seqs), calls))
    if offsets:
        spread = max(offsets.values()) - min(offsets.values())
        check(spread < 100000, "ranks' clocks merged: truth->export offsets agree within %.1f us" % (spread / 1e3))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
