#!/usr/bin/env python3
"""Check a railscope trace of tests/gpu/train.py against the script's own counts.

usage: check.py MODE TRACE_DIR TRAIN_JSON [TRAIN_JSON...]
  MODE correct   pinned/pageable H2D copies and bytes, AllReduce calls per bucket per step, plugin init per
                 communicator, NCCL's NVTX ranges and payloads, NVTX step ranges, kernels only inside the
                 sampled windows, no drops, NCCL in a local scope handled
  MODE profiler  torch.profiler ran inside the traced process: railscope warned once (stderr file given as
                 $RS_STDERR), the run finished, API-level events kept coming
  MODE kernels   a full-kernel (RAILSCOPE_CUDA_KERNELS=all) trace: kernels per step, stable, correlated with
                 their launch API records
  MODE join      several ranks (world size >= 2): NCCL Coll events of every rank joined by (comm hash, func,
                 seq), AllReduce API calls and Coll events agree, ProxyOp/ProxyStep events when NCCL went
                 through the network transport (RS_EXPECT_PROXY=1)
Prints one line per check (PASS/FAIL name: got ... expected ...), then a JSON summary line; exit 1 on FAIL.
Written for any world size (one JSON per rank); run at world size 1 on one GPU so far."""
import json
import os
import statistics
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nccl"))
import tq  # noqa: E402

RESULTS = []


def check(name, ok, got, want=""):
    RESULTS.append(dict(name=name, ok=bool(ok), got=got, want=want))
    print(f"{'PASS' if ok else 'FAIL'} {name}: got {got}" + (f"  expected {want}" if want != "" else ""), flush=True)


def within(ev, a, b):
    return a <= ev["ts_ns"] <= b


def by_pid(evs):
    d = defaultdict(list)
    for e in evs:
        d[e["pid"]].append(e)
    return d


def steps_ranges(evs):
    """[(step, push_ts, pop_ts)] from the NVTX 'step N' ranges (default domain) of one process."""
    out, stack = [], []
    for e in sorted((e for e in evs if e["kind"] in ("nvtx_push", "nvtx_pop") and not e.get("domain")),
                    key=lambda e: e["ts_ns"]):
        if e["kind"] == "nvtx_push":
            stack.append(e)
        elif stack:
            p = stack.pop()
            if str(p.get("message", "")).startswith("step "):
                out.append((int(p["message"].split()[1]), p["ts_ns"], e["ts_ns"]))
    return sorted(out)


def windows(evs):
    """Kernel-tracing on-intervals from CUDA_KERNEL_WINDOW events."""
    ws, on = [], None
    for e in sorted((e for e in evs if e["kind"] == "cuda_kernel_window"), key=lambda e: e["ts_ns"]):
        if e["on"] and on is None:
            on = e["ts_ns"]
        elif not e["on"] and on is not None:
            ws.append((on, e["ts_ns"]))
            on = None
    if on is not None:
        ws.append((on, float("inf")))
    return ws


def correct(evs, runs):
    procs = by_pid(evs)
    for r in runs:
        ev = procs.get(r["pid"], [])
        tag = f"rank{r['rank']}"
        check(f"{tag}: trace file of the training process found", len(ev) > 0, len(ev), "> 0 events")
        mc = [e for e in ev if e["kind"] == "cuda_memcpy" and e["copy_kind"] == 1]
        for ph in r["phases"]:
            want_src = {"pinned": 2, "pageable": 1}.get(ph["kind"])
            if want_src is None:
                continue
            inph = [e for e in mc if within(e, ph["start_ns"], ph["end_ns"])]
            img = [e for e in inph if e["bytes"] == r["image_bytes"]]
            check(f"{tag}: {ph['kind']} phase: one H2D copy of each image batch ({r['image_bytes']} B)",
                  len(img) == ph["steps"], len(img), ph["steps"])
            check(f"{tag}: {ph['kind']} phase: image copies come from {ph['kind']} memory (src_kind {want_src})",
                  img and all(e["src_kind"] == want_src and e["dst_kind"] == 3 for e in img),
                  sorted(Counter(e["src_kind"] for e in img).items()), f"all {want_src}")
            lab = [e for e in inph if e["bytes"] == r["label_bytes"] and e["src_kind"] == want_src]
            check(f"{tag}: {ph['kind']} phase: label copies ({r['label_bytes']} B)", len(lab) >= ph["steps"],
                  len(lab), f">= {ph['steps']}")
            # Pageable copies get their host call stack, written once per call site: the batches' pageable
            # H2D copies are a new site in the pageable phase (pinned copies get none).
            cs = [e for e in ev if e["kind"] == "call_stack" and within(e, ph["start_ns"], ph["end_ns"])]
            if ph["kind"] == "pageable":
                check(f"{tag}: pageable phase: call stacks recorded for the new pageable copy site(s)", len(cs) >= 1,
                      [(e.get("site"), e.get("depth")) for e in cs], ">= 1")
            else:
                check(f"{tag}: {ph['kind']} phase: call stacks (info: sites first seen here, e.g. D2H to pageable)",
                      True, len(cs))
            tot = sum(e["bytes"] for e in inph)
            want_b = ph["steps"] * (r["image_bytes"] + r["label_bytes"])
            check(f"{tag}: {ph['kind']} phase: H2D bytes", tot >= want_b, tot, f">= {want_b}")
        t0, t1 = r["phases"][0]["start_ns"], r["phases"][-1]["end_ns"]
        calls = [e for e in ev if e["kind"] == "nccl_call"]
        ar = [e for e in calls if e["func"] == 0 and within(e, t0, t1)]
        check(f"{tag}: ncclAllReduce API calls = DDP bucket hook calls", len(ar) == r["hook_calls"], len(ar),
              r["hook_calls"])
        per_step = Counter(r["hook_calls_per_step"])
        check(f"{tag}: buckets per step (from the hook)", True, dict(per_step))
        check(f"{tag}: AllReduce calls succeed, carry rank/nranks, comm and stream",
              ar and all(e["ret"] == 0 and e["rank"] == r["rank"] and e["nranks"] == r["world"] and e["comm"] != "0x0"
                         and e["stream"] != "0x0" for e in ar), len(ar))
        seqs = defaultdict(list)
        for e in sorted((e for e in calls if e["func"] == 0), key=lambda e: e["ts_ns"]):
            seqs[e["comm"]].append(e["seq"])
        check(f"{tag}: per-communicator AllReduce sequence numbers 0,1,2,...",
              all(s == list(range(len(s))) for s in seqs.values()), {k: (s[:3], len(s)) for k, s in seqs.items()})
        check(f"{tag}: other NCCL calls (info)", True, dict(Counter(e["func"] for e in calls)))
        inits = [e for e in ev if e["kind"] == "nccl_comm_init" and e["ret"] == 0]
        pinit = [e for e in ev if e["kind"] == "nccl_prof_init"]
        check(f"{tag}: profiler plugin init once per communicator", len(pinit) == len(inits) and len(inits) >= 1,
              f"{len(pinit)} plugin inits, {len(inits)} ncclCommInit*", "equal, >= 1")
        check(f"{tag}: plugin loaded as ncclProfiler_v5 (NCCL 2.28)", pinit and all(e["version"] == 5 for e in pinit),
              [e["version"] for e in pinit])
        hashes = {e["comm_hash"] for e in pinit}
        check(f"{tag}: the API wrappers learned each communicator's hash from the plugin's init",
              inits and all(e["comm_hash"] in hashes for e in inits), [e["comm_hash"] for e in inits], sorted(hashes))
        colls = [e for e in ev if e["kind"] == "nccl_coll"]
        if r["world"] == 1:
            check(f"{tag}: world size 1: NCCL emits no Coll events (a one-rank AllReduce is a local copy)",
                  len(colls) == 0, len(colls), 0)
        else:
            check(f"{tag}: one Coll event per AllReduce", len([c for c in colls if c["func"] == "AllReduce"]) >= len(ar),
                  len(colls), f">= {len(ar)}")
        nv = steps_ranges(ev)
        check(f"{tag}: NVTX 'step N' ranges (torch.cuda.nvtx)", [s for s, _, _ in nv] == list(range(r["steps"])),
              len(nv), r["steps"])
        ncr = [e for e in ev if e["kind"] == "nvtx_push" and e.get("domain") == "NCCL" and e.get("message") == "ncclAllReduce"
               and within(e, t0, t1)]
        check(f"{tag}: NCCL's own NVTX ranges, one per ncclAllReduce", len(ncr) == len(ar), len(ncr), len(ar))
        want_bytes = sum(e["count"] * 4 for e in ar if e["datatype"] == 7)
        check(f"{tag}: NCCL NVTX payloads: bytes sum = AllReduce counts x 4 (fp32 grads)",
              sum(e["payload2"] for e in ncr) == want_bytes, sum(e["payload2"] for e in ncr), want_bytes)
        check(f"{tag}: NCCL NVTX payloads: communicator = the plugin's comm hash",
              ncr and all(hex(e["payload"]) in hashes for e in ncr), sorted({hex(e["payload"]) for e in ncr}), sorted(hashes))
        ks = [e for e in ev if e["kind"] == "cuda_kernel"]
        ws = windows(ev)
        slack = 300_000_000
        outside = [k for k in ks if not any(a - slack <= k["ts_ns"] <= b + slack for a, b in ws)]
        check(f"{tag}: kernels recorded (sampled windows)", len(ks) > 0, len(ks), "> 0")
        check(f"{tag}: kernels only inside sampled windows", not outside, f"{len(outside)} outside {len(ws)} windows", 0)
        inwin = [s for s, a, b in nv if any(wa <= a and b <= wb for wa, wb in ws)]
        check(f"{tag}: steps fully inside a kernel window (info)", True, len(inwin))
        drops = sum(e.get("events", 0) for e in ev if e["kind"] == "drops")
        cd = sum(e["count"] for e in ev if e["kind"] == "cupti_dropped")
        check(f"{tag}: no events dropped (tracer, CUPTI)", drops == 0 and cd == 0, f"tracer {drops}, CUPTI {cd}", 0)
        check(f"{tag}: NCCL in PyTorch's local scope, wrappers found it (info)", True, r["nccl_scope"])
        check(f"{tag}: no CUDA_COPY_CALL fallback while CUPTI delivers",
              not [e for e in ev if e["kind"] == "cuda_copy_call"], len([e for e in ev if e["kind"] == "cuda_copy_call"]), 0)


def profiler(evs, runs):
    err = open(os.environ["RS_STDERR"]).read() if os.environ.get("RS_STDERR") else ""
    procs = by_pid(evs)
    for r in runs:
        ev = procs.get(r["pid"], [])
        tag = f"rank{r['rank']}"
        warn = [l for l in err.splitlines() if "another CUPTI client" in l]
        check(f"{tag}: torch.profiler took CUPTI over: railscope warned once", len(warn) == 1, len(warn), 1)
        want = sum(p["steps"] for p in r["phases"])
        check(f"{tag}: training finished under both", r["steps"] >= want, r["steps"], f">= {want} (+ warm-up)")
        a, b = r.get("profile_start_ns", 0), r.get("profile_end_ns", 0)
        ar = [e for e in ev if e["kind"] == "nccl_call" and e["func"] == 0 and within(e, a, b)]
        check(f"{tag}: NCCL API calls recorded while torch.profiler ran", len(ar) > 0, len(ar), "> 0")
        nv = steps_ranges(ev)
        check(f"{tag}: NVTX step ranges recorded throughout", len(nv) == r["steps"], len(nv), r["steps"])
        cc = [e for e in ev if e["kind"] == "cuda_copy_call" and e["bytes"] == r["image_bytes"]]
        check(f"{tag}: after the take-over, image copies come from the cudart wrappers", len(cc) > 0, len(cc), "> 0")
        st = [e["state"] for e in ev if e["kind"] == "cuda_kernel_window"]
        check(f"{tag}: the trace marks the take-over (CUDA_KERNEL_WINDOW state 2)", 2 in st, st[-3:])


def kernels(evs, runs):
    procs = by_pid(evs)
    for r in runs:
        ev = procs.get(r["pid"], [])
        tag = f"rank{r['rank']}"
        ph = [p for p in r["phases"] if "timed_start_ns" in p][0]
        nv = [(s, a, b) for s, a, b in steps_ranges(ev) if a >= ph["timed_start_ns"] and b <= ph["timed_end_ns"]]
        # Kernels run after their launch, so count them per step through their launch API record (host time,
        # correlation id) rather than by GPU time, which drifts across the CPU's step boundaries.
        launch = sorted((e["ts_ns"], e["correlation"]) for e in ev if e["kind"] == "cuda_api")
        kcorr = Counter(e["correlation"] for e in ev if e["kind"] == "cuda_kernel")
        import bisect
        lts = [t for t, _ in launch]
        per = []
        for i in range(len(nv) - 1):
            lo, hi = bisect.bisect_left(lts, nv[i][1]), bisect.bisect_left(lts, nv[i + 1][1])
            per.append(sum(kcorr[c] for _, c in launch[lo:hi]))
        med = statistics.median(per) if per else 0
        check(f"{tag}: kernels per step (full mode, attributed through their launch records)", med >= 100, med, ">= 100")
        spread = (max(per) - min(per)) / med if med else 1
        check(f"{tag}: same kernel count every step", spread <= 0.05, f"min {min(per) if per else 0} max {max(per) if per else 0}",
              "within 5%")
        kc = [e for e in ev if e["kind"] == "cuda_kernel" and within(e, ph["timed_start_ns"], ph["timed_end_ns"])]
        api = {e["correlation"] for e in ev if e["kind"] == "cuda_api"}
        frac = sum(1 for k in kc if k["correlation"] in api) / max(1, len(kc))
        # cuBLAS/cuDNN launch some kernels through the driver API, which has no runtime record (0.907 measured).
        check(f"{tag}: kernels matched to a runtime launch record by correlation id", frac >= 0.85, f"{frac:.3f}", ">= 0.85")
        names = Counter(e["name"] for e in kc)
        check(f"{tag}: distinct kernel names (info)", True, len(names))
        nccl_k = [n for n in names if "nccl" in (n or "")]
        check(f"{tag}: NCCL kernels (none at world size 1)", (len(nccl_k) == 0) == (r["world"] == 1), nccl_k[:3])


def join(evs, runs):
    world = runs[0]["world"]
    procs = by_pid(evs)
    check("world size >= 2", world >= 2, world, ">= 2")
    keys = defaultdict(set)
    for r in runs:
        ev = procs.get(r["pid"], [])
        tag = f"rank{r['rank']}"
        colls = [e for e in ev if e["kind"] == "nccl_coll"]
        ar = [e for e in ev if e["kind"] == "nccl_call" and e["func"] == 0]
        arc = [e for e in colls if e["func"] == "AllReduce"]
        check(f"{tag}: one AllReduce Coll per ncclAllReduce call", len(arc) == len(ar), len(arc), len(ar))
        check(f"{tag}: Coll events carry algo/proto/nChannels", arc and all(e["algo"] and e["proto"] and e["nchannels"] > 0
                                                                          for e in arc), Counter((e["algo"], e["proto"]) for e in arc).most_common(3))
        for e in colls:
            keys[(e["comm_hash"], e["func"], e["seq"])].add(r["rank"])
        api_seq = sorted((e["comm_hash"], e["seq"]) for e in ar)
        coll_seq = sorted((e["comm_hash"], e["seq"]) for e in arc)
        check(f"{tag}: API (comm hash, seq) = Coll (comm hash, seq)", api_seq == coll_seq, len(set(api_seq) ^ set(coll_seq)), 0)
        ks = [e for e in ev if e["kind"] == "cuda_kernel" and "ncclDevKernel" in (e["name"] or "")]
        check(f"{tag}: NCCL kernels recorded (in kernel windows)", len(ks) > 0, len(ks), "> 0")
        if os.environ.get("RS_EXPECT_PROXY") == "1":
            ops = [e for e in ev if e["kind"] == "nccl_proxy_op"]
            steps = [e for e in ev if e["kind"] == "nccl_proxy_step"]
            states = Counter(e["state"] for e in ev if e["kind"] == "nccl_proxy_state")
            check(f"{tag}: network path: ProxyOp and ProxyStep events", len(ops) > 0 and len(steps) > 0,
                  f"{len(ops)} ops, {len(steps)} steps")
            check(f"{tag}: network path: send and receive wait states", all(states[s] for s in (8, 9, 10, 12)), dict(states))
    full = [k for k, v in keys.items() if len(v) == world]
    check("every Coll joins across all ranks by (comm hash, func, seq)", len(full) == len(keys), f"{len(full)}/{len(keys)}")


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    mode, trace = sys.argv[1], sys.argv[2]
    runs = [json.load(open(p)) for p in sys.argv[3:]]
    evs = tq.load(trace)
    {"correct": correct, "profiler": profiler, "kernels": kernels, "join": join}[mode](evs, runs)
    bad = [r for r in RESULTS if not r["ok"]]
    print("SUMMARY " + json.dumps(dict(mode=mode, checks=len(RESULTS), failed=[r["name"] for r in bad])), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
