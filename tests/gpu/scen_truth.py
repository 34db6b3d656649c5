#!/usr/bin/env python3
"""Merge one scenario's per-rank truth files (scen_train.py) and NCCL's own INFO log into SCEN/truth.json.

usage: scen_truth.py SCEN_DIR NAME LAUNCH NVTX_FORM CPU_STRAGGLER GPU_STRAGGLER EXPECT_TRANSPORT
The transport truth is what NCCL itself logged ("Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0"), read
from SCEN/nccl/*.log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET, NCCL_DEBUG_FILE set by the driver)."""
import glob
import json
import os
import re
import statistics
import sys

VIA = re.compile(r"Channel (\d+)/(\d+) : (\d+)\[\d+\] -> (\d+)\[\d+\](?: \[(send|receive)\])? via (\S+)")


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
    if cpu:
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
    print(f"truth {name}: world={t['world']} steps={t['steps']} straggler={t['straggler']} "
          f"transport={kinds} net={sorted(nets)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
