#!/usr/bin/env python3
"""Merge one scenario's per-rank truth files (scen_train.py) and NCCL's own INFO log into SCEN/truth.json.

usage: scen_truth.py SCEN_DIR NAME LAUNCH NVTX_FORM CPU_STRAGGLER GPU_STRAGGLER EXPECT_TRANSPORT
CPU_STRAGGLER is scen_train.py's --cpu-straggler ('R:MS', or 'R:MS,R:MS...' for several late ranks, '' none).
One planted rank: truth.json "straggler" {rank, kind, planted_ms, measured_ms, arrival_lag_ms, first_bucket_lag_ms}
(as the fixtures have it). Every scenario: "measured_late", each rank's lateness at the AllReduces from the
hook times alone (measured_late below), planted or not. Several: "straggler" null and "stragglers" (one entry per planted rank, rank order) and
"straggler_model", what the analyzer's documented rule (docs/report.md "Stragglers", analyzer/analyze_join.c
late_ranks) must make of the measured arrivals (see multi_truth below).
The transport truth is what NCCL itself logged ("Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0"), read
from SCEN/nccl/*.log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET, NCCL_DEBUG_FILE set by the driver)."""
import glob
import json
import os
import re
import statistics
import sys

VIA = re.compile(r"Channel (\d+)/(\d+) : (\d+)\[\d+\] -> (\d+)\[\d+\](?: \[(send|receive)\])? via (\S+)")


TIE = 0.05   # analyzer/analysis.h RS_AN_STRAGGLER_TIE


def predict_verdict(cost, tie=TIE, half=0.5):
    """The peer-wait finding's verdict (analyzer/analyze_verdict.c finding_straggler, docs/report.md) for late ranks
    costing cost {rank: ms per step} when they are all of the category (no wait under the lateness threshold):
    the ranks within `tie` of the costliest tie when they make at least half of the category; else the costliest is
    named when it costs at least `half` of it; else none. -> {verdict, rank, tied_ranks}."""
    c = sorted(((v, r) for r, v in cost.items() if v > 0), key=lambda x: (-x[0], x[1]))
    total = sum(v for v, _ in c)
    if not c:
        return dict(verdict="none", rank=-1, tied_ranks=[])
    tied = [r for v, r in c if v >= (1 - tie) * c[0][0]]
    if len(tied) > 1 and 2 * sum(cost[r] for r in tied) < total:
        tied = tied[:1]
    if len(tied) == 1 and c[0][0] >= half * total:
        return dict(verdict="rank", rank=c[0][1], tied_ranks=[])
    if len(tied) > 1:
        return dict(verdict="tie", rank=-1, tied_ranks=sorted(tied))
    return dict(verdict="none", rank=-1, tied_ranks=[])


def shapley(waits_for):
    """One waiting rank's wait split among the late ranks it waited for (analyze_join.c wait_segments): waits_for
    {late rank: how long after this rank's arrival it arrived, ms}; each segment between two late arrivals is shared
    by the late ranks still to come. -> {late rank: its share, ms}."""
    a = sorted((v, r) for r, v in waits_for.items() if v > 0)
    share, prev = {r: 0.0 for r in waits_for}, 0.0
    for i, (v, _) in enumerate(a):
        for _, r in a[i:]:
            share[r] += (v - prev) / (len(a) - i)
        prev = v
    return share


def multi_truth(ranks, planted, sleeps):
    """Several planted late ranks (planted {rank: planted ms}; sleeps {rank: measured sleep ms}), from the DDP
    comm-hook times (bucket_hook_ns: when each rank handed each gradient bucket to NCCL), per step after the first
    two (as the single case), averaged over those steps:
      per planted rank: arrival_lag_ms {on-time rank: per step the largest lag over the step's buckets}, as the
        single case but against the ranks NOT planted only; first_bucket_lag_ms; lag_vs_bulk_ms: per bucket its
        hook time after the bulk's (the lower median of all the ranks' hook times at that bucket: the analyzer's
        bulk, late_ranks), mean over the buckets; waits_for_ms {other planted rank: how long it waits for it};
        cost_ms: its Shapley share of every rank's wait, summed over the waiting ranks and divided by the run's
        ranks (the analyzer's stragglers[].cost_per_step_s basis, docs/report.md "Stragglers").
      straggler_model: wait_ms {every rank: its wait per step, until the last planted rank it waited for arrived:
        the report's steps[].attribution.peer_wait}, cost_ms {planted rank: cost}, and the verdict the documented
        rule gives for those costs (predict_verdict), from the measured lags ("verdict") and from the planted
        sleeps alone ("verdict_planted": every planted rank late by exactly its sleep)."""
    world = max(len(ranks), 1)
    by = {x["rank"]: x for x in ranks}
    P = sorted(p for p in planted if p in by)   # planted ranks that wrote their truth (all, in a complete run)
    O = sorted(r for r in by if r not in planted)
    hooks = {r: x.get("bucket_hook_ns") or [] for r, x in by.items()}
    nst = min((len(h) for h in hooks.values()), default=0)
    # steps after the first two where every rank stamped the same number of buckets
    used = [s for s in range(2, nst) if all(hooks[r][s] for r in by) and len({len(hooks[r][s]) for r in by}) == 1]
    if not P:
        used = []

    def lag(y, x, s):   # how late y arrived after x at step s: the largest difference over the step's buckets, ms
        return max(a - b for a, b in zip(hooks[y][s], hooks[x][s])) / 1e6

    out, cost, wait = [], {p: [] for p in P}, {r: [] for r in by}
    for s in used:
        c = {p: 0.0 for p in P}
        for x in by:
            wf = {p: lag(p, x, s) for p in P if p != x}
            wait[x].append(max([0.0] + list(wf.values())))
            for p, v in shapley(wf).items():
                c[p] += v
        for p in P:
            cost[p].append(c[p] / world)
    mean = lambda v: round(statistics.mean(v), 3) if v else None   # noqa: E731
    for p in sorted(planted):
        e = dict(rank=p, kind="cpu", planted_ms=planted[p], measured_ms=sleeps.get(p))
        if used and p in by:
            e["arrival_lag_ms"] = {str(o): mean([lag(p, o, s) for s in used]) for o in O}
            e["first_bucket_lag_ms"] = {str(o): mean([(hooks[p][s][0] - hooks[o][s][0]) / 1e6 for s in used])
                                        for o in O}
            bl = []
            for s in used:
                for b in range(len(hooks[p][s])):
                    at = sorted(hooks[r][s][b] for r in by)
                    bl.append((hooks[p][s][b] - at[(len(at) - 1) // 2]) / 1e6)
            e["lag_vs_bulk_ms"] = mean(bl)
            e["waits_for_ms"] = {str(q): mean([max(0.0, lag(q, p, s)) for s in used]) for q in P if q != p}
            e["cost_ms"] = mean(cost[p])
        out.append(e)
    model = dict(steps_used=len(used), first_step_used=used[0] if used else None)
    if used:
        model["wait_ms"] = {str(r): mean(wait[r]) for r in sorted(by)}
        model["cost_ms"] = {str(p): mean(cost[p]) for p in P}
        model["verdict"] = predict_verdict({p: statistics.mean(cost[p]) for p in P})
    # from the planted sleeps alone: every on-time rank waits for every planted rank by exactly its sleep
    pc = {p: 0.0 for p in planted}
    for x in by:
        for p, v in shapley({q: planted[q] - planted.get(x, 0) for q in planted if q != x}).items():
            pc[p] += v / world
    model["cost_planted_ms"] = {str(p): round(v, 3) for p, v in pc.items()}
    model["verdict_planted"] = predict_verdict(pc)
    return out, model


def measured_late(ranks, lo=0):
    """How late each rank really arrived at the AllReduces, from the DDP comm-hook times alone (every scenario,
    planted or not: two processes sharing one GPU need not arrive together when nothing is planted), by the
    analyzer's documented rule (docs/report.md "Stragglers", analyzer/analyze_join.c stragglers()): at each bucket
    a rank is late when it arrives more than max(20 us, 1 % of the mean step) after the bulk (the lower median of
    the arrivals); its cost in a step is the others' wait for it (each earlier rank's, its largest over the step's
    buckets: they run one after another on NCCL's stream), its cost per step that summed over the steps and
    divided by steps and ranks (one late rank at a time: the unplanted case; several planted ones are
    multi_truth's); persistent when late in more than half of the steps, costing >= 2 % of the mean step on
    average AND in more than half of the steps (the lower median of its per-step costs, 0 where it was not late:
    start-up waits alone make no straggler). Steps from `lo` on, every step by default, as the analyzer counts
    them. Returns {rank: {late, of, late_steps, steps, mean_late_ms, cost_ms, median_cost_ms, persistent}} ({}
    without hook times)."""
    if len(ranks) < 2 or any("bucket_hook_ns" not in r for r in ranks):
        return {}
    step_ms = statistics.mean(r["step_ms_mean"] for r in ranks)
    thr = max(0.02, 0.01 * step_ms)
    hooks = {r["rank"]: r["bucket_hook_ns"] for r in ranks}
    R = sorted(hooks)
    nsteps = min(len(h) for h in hooks.values())
    late = {r: [] for r in R}
    of = {r: 0 for r in R}
    late_steps = {r: 0 for r in R}
    step_cost = {r: [] for r in R}  # per used step: the others' wait for r, over the run's ranks
    used = 0
    for s in range(lo, nsteps):
        nb = {len(hooks[r][s]) for r in R}
        if len(nb) != 1 or not nb.pop():
            continue
        used += 1
        waits = {r: {o: 0.0 for o in R} for r in R}  # this step: how long o waited for r, its longest over buckets
        was_late = set()
        for b in range(len(hooks[R[0]][s])):
            arr = {r: hooks[r][s][b] / 1e6 for r in R}
            bulk = sorted(arr.values())[(len(R) - 1) // 2]
            for r in R:
                of[r] += 1
                if arr[r] - bulk > thr:
                    late[r].append(arr[r] - bulk)
                    was_late.add(r)
                    for o in R:
                        waits[r][o] = max(waits[r][o], arr[r] - arr[o])
        for r in R:
            late_steps[r] += r in was_late
            step_cost[r].append(sum(waits[r].values()) / len(R))
    if not used:
        return {}
    out = {}
    for r in R:
        c = sum(step_cost[r]) / used
        med = sorted(step_cost[r])[(used - 1) // 2]
        out[str(r)] = dict(late=len(late[r]), of=of[r], late_steps=late_steps[r], steps=used,
                           mean_late_ms=round(statistics.mean(late[r]), 3) if late[r] else 0.0, cost_ms=round(c, 3),
                           median_cost_ms=round(med, 3),
                           persistent=late_steps[r] * 2 > used and c >= 0.02 * step_ms and med >= 0.02 * step_ms)
    return out


def main():
    d, name, launch, form, cpu, gpu, expect = sys.argv[1:8]
    ranks = []
    for p in sorted(glob.glob(os.path.join(d, "truth.rank*.json"))):
        with open(p) as f:
            ranks.append(json.load(f))
    ranks.sort(key=lambda r: r["rank"])
    t = dict(scenario=name, launcher=launch, world=len(ranks), nvtx_form=form,
             steps=ranks[0]["steps"] if ranks else 0, step_names=ranks[0]["step_names"] if ranks else [],
             pids={str(r["pid"]): r["rank"] for r in ranks}, straggler=None,
             pageable_ranks=[r["rank"] for r in ranks if r["pageable"]],
             pinned_ranks=[r["rank"] for r in ranks if not r["pageable"]],
             h2d_bytes_per_step=ranks[0]["h2d_bytes_per_step"] if ranks else 0,
             grad_bytes=ranks[0]["grad_bytes"] if ranks else 0,
             step_ms_mean={str(r["rank"]): round(r["step_ms_mean"], 3) for r in ranks})
    plist = [tuple(int(v) for v in x.split(":")) for x in cpu.split(",") if x.strip()] if cpu else []
    if len(plist) > 1:
        planted = dict(plist)
        sleeps = {x["rank"]: round(statistics.mean(x["cpu_sleep_ms"]), 3) for x in ranks
                  if x["rank"] in planted and x.get("cpu_sleep_ms")}
        t["stragglers"], t["straggler_model"] = multi_truth(ranks, planted, sleeps)
    elif cpu:
        r, ms = (int(v) for v in cpu.split(":"))
        got = [x for x in ranks if x["rank"] == r]
        t["straggler"] = dict(rank=r, kind="cpu", planted_ms=ms,
                              measured_ms=round(statistics.mean(got[0]["cpu_sleep_ms"]), 3) if got else None)
    elif gpu:
        r, n = (int(v) for v in gpu.split(":"))
        got = [x for x in ranks if x["rank"] == r]
        ms = round(statistics.median(got[0]["gpu_extra_ms"][2:] or got[0]["gpu_extra_ms"]), 3) if got else None
        t["straggler"] = dict(rank=r, kind="gpu", planted_matmuls=n, measured_ms=ms)
    if t["straggler"]:
        # How late the straggler really arrived at the AllReduces, per other rank: per step the largest lag
        # over the step's buckets (the others wait for its last bucket), mean over the steps after the first
        # two. On one shared GPU this differs from the planted sleep (the ranks' kernels compete).
        sr = t["straggler"]["rank"]
        S = [x for x in ranks if x["rank"] == sr]
        lags, firsts = {}, {}
        for o in ranks:
            if o["rank"] == sr or not S or "bucket_hook_ns" not in o:
                continue
            per, fst = [], []
            for a, b in list(zip(S[0]["bucket_hook_ns"], o["bucket_hook_ns"]))[2:]:
                if a and len(a) == len(b):
                    per.append(max(x - y for x, y in zip(a, b)) / 1e6)
                    fst.append((a[0] - b[0]) / 1e6)
            if per:
                lags[str(o["rank"])] = round(statistics.mean(per), 3)
                firsts[str(o["rank"])] = round(statistics.mean(fst), 3)
        if lags:
            t["straggler"]["arrival_lag_ms"] = lags
            t["straggler"]["first_bucket_lag_ms"] = firsts
    # the arrivals as measured, every rank: what an unplanted scenario must be judged against (check_scen.py)
    t["measured_late"] = measured_late(ranks)
    links = set()
    nets = set()
    for p in glob.glob(os.path.join(d, "nccl", "*.log")):
        with open(p, errors="replace") as f:
            for line in f:
                m = VIA.search(line)
                if m:
                    links.add((int(m.group(1)), int(m.group(3)), int(m.group(4)), m.group(5) or "", m.group(6)))
                m = re.search(r"Using network (\S+)", line)
                if m:
                    nets.add(m.group(1))
    kinds = sorted({v.split("/")[0] + ("/" + v.split("/")[1] if v.startswith("NET/") else "") for *_, v in links})
    t["transport"] = dict(expected=expect, nccl_logged=kinds, network=sorted(nets), links=len(links),
                          inter_node=all(k.startswith("NET/") for k in kinds) if kinds else None,
                          sample=sorted(f"ch{c} {a}->{b} {s} via {v}" for c, a, b, s, v in links)[:8])
    t["gpudirect"] = "NOT USED"   # one GPU, no GPUDirect RDMA possible: Socket, or IB on host memory (softnic)
    ok = bool(ranks) and len(ranks) == int(os.environ.get("SCEN_WORLD", len(ranks)))
    t["complete"] = ok
    with open(os.path.join(d, "truth.json"), "w") as f:
        json.dump(t, f, indent=1, sort_keys=True)
    if t.get("stragglers"):
        m = t.get("straggler_model", {})
        print(f"truth {name}: late ranks " + ", ".join(
            f"{e['rank']} ({e['planted_ms']} ms planted, {e.get('lag_vs_bulk_ms')} ms after the bulk, costs "
            f"{e.get('cost_ms')} ms/step)" for e in t["stragglers"]) +
            f"; expected verdict {m.get('verdict')}, from the planted sleeps alone {m.get('verdict_planted')}")
    print(f"truth {name}: world={t['world']} steps={t['steps']} straggler={t['straggler']} "
          f"transport={kinds} net={sorted(nets)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
