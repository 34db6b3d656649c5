#!/usr/bin/env python3
"""Check a railscope trace of tests/gpu/train.py against the script's own counts.

usage: check.py MODE TRACE_DIR TRAIN_JSON [TRAIN_JSON...]
  MODE correct   (default capture, sampled kernel windows) every image/label batch copy recorded once: by the
                 cudart wrappers (CUDA_COPY_CALL, host time inside its step's NVTX range) outside kernel windows, by
                 CUPTI (CUDA_MEMCPY) inside them; pageable/pinned source per phase; call-stack sites on pageable
                 copies only; the window marks say "copies from the wrappers" and CUPTI detaches after windows;
                 AllReduce calls per bucket per step, plugin init per communicator, NCCL's NVTX ranges and
                 payloads, NVTX step ranges, kernels only inside the windows, no drops; then `railscope report
                 --json`: steps, pinned/pageable H2D bytes and copy time, GPUDirect verdict (world size 1: no
                 network traffic), sampling
  MODE profiler  torch.profiler ran inside the traced process: railscope warned once (stderr file given as
                 $RS_STDERR) when the profiler started, marked the take-over, recorded no GPU activity of its own
                 after it, and recorded every image copy of the profiled steps from the cudart wrappers; NCCL
                 AllReduce calls = DDP hook calls and NVTX step ranges kept coming
  MODE kernels   a full-kernel + API-records trace (RAILSCOPE_CUDA_KERNELS=all RAILSCOPE_CUDA_API=on): kernels per
                 step, stable, correlated with their launch API records; copies by CUPTI only (one image copy per
                 timed step through its API record, no CUDA_COPY_CALL)
  MODE join      several ranks (world size >= 2): NCCL Coll events of every rank joined by (comm hash, func,
                 seq), AllReduce API calls and Coll events agree, ProxyOp/ProxyStep events when NCCL went
                 through the network transport (RS_EXPECT_PROXY=1)
Prints one line per check (PASS/FAIL name: got ... expected ...; INFO lines are no checks: they assert nothing),
then a JSON summary line; exit 1 on FAIL. RS_CLI names the railscope binary (default build/railscope).
Written for any world size (one JSON per rank); run at world size 1 on one GPU so far.

Memory kinds: CUDA_COPY_CALL uses cudaMemoryType (src_mem/dst_mem: 0 pageable, 1 pinned, 2 device), CUDA_MEMCPY
uses CUpti_ActivityMemoryKind (src_kind/dst_kind: 1 pageable, 2 pinned, 3 device); copy kind 1 = H2D in both."""
import bisect
import json
import os
import statistics
import subprocess
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nccl"))
import tq  # noqa: E402

RESULTS = []
# memory kind of each phase's batches, in both numberings
CALL_MEM = {"pinned": 1, "pageable": 0}      # cudaMemoryType (CUDA_COPY_CALL)
CUPTI_MEM = {"pinned": 2, "pageable": 1}     # CUpti_ActivityMemoryKind (CUDA_MEMCPY)
EDGE_NS = 50_000_000   # a copy call this close to a window edge may fall on either side of the owner switch


def check(name, ok, got, want=""):
    RESULTS.append(dict(name=name, ok=bool(ok), got=got, want=want))
    print(f"{'PASS' if ok else 'FAIL'} {name}: got {got}" + (f"  expected {want}" if want != "" else ""), flush=True)


def info(name, got):
    print(f"INFO {name}: {got}", flush=True)


def within(ev, a, b):
    return a <= ev["ts_ns"] <= b


def by_pid(evs):
    d = defaultdict(list)
    for e in evs:
        d[e["pid"]].append(e)
    return d


def flags(e):
    return tq.hx(e.get("flags", 0))


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
    """Kernel-tracing on-intervals from CUDA_KERNEL_WINDOW events (the detach marks, flags bit 1, are an "off"
    while off and change nothing)."""
    ws, on = [], None
    for e in sorted((e for e in evs if e["kind"] == "cuda_kernel_window" and not flags(e) & 2),
                    key=lambda e: e["ts_ns"]):
        if e["on"] and on is None:
            on = e["ts_ns"]
        elif not e["on"] and on is not None:
            ws.append((on, e["ts_ns"]))
            on = None
    if on is not None:
        ws.append((on, float("inf")))
    return ws


def overlaps(a, b, ws, slack=0):
    return any(wa - slack <= b and a <= wb + slack for wa, wb in ws)


def in_step(ts, nv):
    """The step whose NVTX range holds host time ts, else None (nv sorted by push time)."""
    i = bisect.bisect_right([a for _, a, _ in nv], ts) - 1
    return nv[i][0] if i >= 0 and nv[i][1] <= ts <= nv[i][2] else None


def h2d(ev):
    """(copy calls, CUPTI copies) host-to-device, in time order."""
    calls = sorted((e for e in ev if e["kind"] == "cuda_copy_call" and e["copy_kind"] == 1), key=lambda e: e["ts_ns"])
    cupti = sorted((e for e in ev if e["kind"] == "cuda_memcpy" and e["copy_kind"] == 1), key=lambda e: e["ts_ns"])
    return calls, cupti


def phase_copies(tag, ph, calls, cupti, nv, ws, nbytes, what, exact):
    """One batch copy (image or label, nbytes) per step of the phase, each recorded once: by the wrappers
    outside windows (CUDA_COPY_CALL whose host time lies in the step's NVTX range), by CUPTI inside (CUDA_MEMCPY,
    GPU time; the phase starts and ends synchronised, so its GPU copies lie inside it); a copy at a window's edge
    may be recorded by both (docs/cuda-nccl.md). exact: the copies of this size are the batches' only (image);
    labels (512 B) may share their size with other small copies: then at least one per step."""
    kind = ph["kind"]
    a, b = ph["start_ns"], ph["end_ns"]
    steps = [s for s in nv if a <= s[1] and s[2] <= b]
    c = [e for e in calls if e["bytes"] == nbytes and within(e, a, b)]
    m = [e for e in cupti if e["bytes"] == nbytes and within(e, a, b)]
    per = Counter(in_step(e["ts_ns"], steps) for e in c)
    stray = per.pop(None, 0)
    without = [s for s in steps if per.get(s[0], 0) == 0]
    # a step without a wrapper-recorded copy must have made it while CUPTI owned the copies: a window overlaps it
    unexplained = [s for s, x, y in without if not overlaps(x, y, ws, EDGE_NS)]
    edges = sum(1 for wa, wb in ws for t in (wa, wb) if a - EDGE_NS <= t <= b + EDGE_NS)
    info(f"{tag}: {kind} phase: {what} copies ({nbytes} B): wrappers / CUPTI / steps / window edges",
         f"{len(c)} / {len(m)} / {len(steps)} / {edges}")
    if exact:
        check(f"{tag}: {kind} phase: NVTX step ranges of the phase", len(steps) == ph["steps"], len(steps), ph["steps"])
        check(f"{tag}: {kind} phase: {what} copy calls (CUDA_COPY_CALL) one per step at most, each inside a step range",
              stray == 0 and all(v == 1 for v in per.values()),
              f"{stray} outside step ranges, per step {sorted(Counter(per.values()).items())}", "0, all 1")
    check(f"{tag}: {kind} phase: every step without a {what} copy call overlaps a kernel window (CUPTI's turn)",
          not unexplained, f"{len(without)} without, {len(unexplained)} of them outside windows {[s for s in unexplained][:5]}",
          "0 outside windows")
    if exact:
        check(f"{tag}: {kind} phase: CUPTI {what} copies cover the steps the wrappers left (one double per window edge "
              f"at most)", len(without) <= len(m) <= len(without) + edges,
              len(m), f"{len(without)}..{len(without) + edges}")
        check(f"{tag}: {kind} phase: {what} copies recorded, wrappers + CUPTI",
              ph["steps"] <= len(c) + len(m) <= ph["steps"] + edges, len(c) + len(m), f"{ph['steps']}..{ph['steps'] + edges}")
    else:
        cm = [e for e in c if e["src_mem"] == CALL_MEM[kind]] + [e for e in m if e["src_kind"] == CUPTI_MEM[kind]]
        check(f"{tag}: {kind} phase: {what} copies from {kind} memory, wrappers + CUPTI", len(cm) >= ph["steps"],
              len(cm), f">= {ph['steps']}")
        return c, m
    kinds = Counter([("call", e["src_mem"], e["dst_mem"]) for e in c] + [("cupti", e["src_kind"], e["dst_kind"]) for e in m])
    want = {("call", CALL_MEM[kind], 2), ("cupti", CUPTI_MEM[kind], 3)}
    check(f"{tag}: {kind} phase: {what} copies from {kind} host memory to the device (wrappers: src_mem {CALL_MEM[kind]} "
          f"dst_mem 2; CUPTI: src_kind {CUPTI_MEM[kind]} dst_kind 3)", kinds and set(kinds) <= want,
          sorted(kinds.items()), f"only {sorted(want)}")
    return c, m


def report_json(trace):
    cli = os.environ.get("RS_CLI") or os.path.join(os.environ.get("RS_BUILD", "build"), "railscope")
    p = subprocess.run([cli, "report", "--json", "--quiet", trace], capture_output=True, text=True)
    try:
        return json.loads(p.stdout), p.returncode, p.stderr.strip()
    except ValueError:
        return None, p.returncode, p.stderr.strip()


def correct(evs, runs, trace):
    procs = by_pid(evs)
    for r in runs:
        ev = procs.get(r["pid"], [])
        tag = f"rank{r['rank']}"
        check(f"{tag}: trace file of the training process found", len(ev) > 0, len(ev), "> 0 events")
        nv = steps_ranges(ev)
        ws = windows(ev)
        kw = [e for e in ev if e["kind"] == "cuda_kernel_window"]
        check(f"{tag}: kernel window marks: sampled mode, CUPTI delivering, copies from the wrappers outside windows "
              f"(flags bit 0)", kw and all(e["mode"] == 1 and e["state"] == 0 and flags(e) & 1 for e in kw),
              sorted(Counter((e["mode"], e["state"], hex(flags(e))) for e in kw).items()),
              "all (mode 1, state 0, flags 0x1 or 0x3)")
        det = [e for e in kw if flags(e) & 2]
        closed = [w for w in ws if w[1] != float("inf")]
        check(f"{tag}: CUPTI detached after kernel windows (RS_KWIN_DETACHED marks)", len(det) >= 1 and len(det) <= len(closed),
              f"{len(det)} detaches after {len(closed)} closed windows", ">= 1, <= closed windows")
        calls, cupti = h2d(ev)
        stack_sites = {e["site"] for e in ev if e["kind"] == "call_stack"}
        for ph in r["phases"]:
            kind = ph["kind"]
            if kind not in CALL_MEM:
                continue
            ic, im = phase_copies(tag, ph, calls, cupti, nv, ws, r["image_bytes"], "image", True)
            phase_copies(tag, ph, calls, cupti, nv, ws, r["label_bytes"], "label", False)
            # Pageable copies carry their call site (CUDA_COPY_CALL.stack = a CALL_STACK site, written once per site);
            # pinned ones none.
            if kind == "pageable":
                check(f"{tag}: pageable phase: every image copy call names a recorded call-stack site",
                      ic and all(e["stack"] > 0 and e["stack"] in stack_sites for e in ic),
                      sorted(Counter(e["stack"] for e in ic).items())[:4], f"all in {sorted(stack_sites)[:8]}")
            else:
                check(f"{tag}: {kind} phase: pinned image copy calls carry no call stack",
                      ic and all(e["stack"] == 0 for e in ic), sorted(Counter(e["stack"] for e in ic).items())[:4], "all 0")
            a, b = ph["start_ns"], ph["end_ns"]
            tot = sum(e["bytes"] for e in calls + cupti if within(e, a, b))
            want_b = ph["steps"] * (r["image_bytes"] + r["label_bytes"])
            check(f"{tag}: {kind} phase: H2D bytes, wrappers + CUPTI", tot >= want_b, tot, f">= {want_b}")
        t0, t1 = r["phases"][0]["start_ns"], r["phases"][-1]["end_ns"]
        ncalls = [e for e in ev if e["kind"] == "nccl_call"]
        ar = [e for e in ncalls if e["func"] == 0 and within(e, t0, t1)]
        check(f"{tag}: ncclAllReduce API calls = DDP bucket hook calls", len(ar) == r["hook_calls"], len(ar),
              r["hook_calls"])
        hooks = r["hook_calls_per_step"]
        per = Counter(in_step(e["ts_ns"], nv) for e in ar)
        bad = [s for s in range(len(hooks)) if per.get(s, 0) != hooks[s]]
        check(f"{tag}: ncclAllReduce calls per step = the hook's count in that step", not bad and None not in per,
              f"{len(bad)} steps differ {[(s, per.get(s, 0), hooks[s]) for s in bad[:4]]}, {per.get(None, 0)} outside steps",
              f"buckets per step {dict(Counter(hooks))}")
        check(f"{tag}: AllReduce calls succeed, carry rank/nranks, comm and stream",
              ar and all(e["ret"] == 0 and e["rank"] == r["rank"] and e["nranks"] == r["world"] and e["comm"] != "0x0"
                         and e["stream"] != "0x0" for e in ar), len(ar))
        seqs = defaultdict(list)
        for e in sorted((e for e in ncalls if e["func"] == 0), key=lambda e: e["ts_ns"]):
            seqs[e["comm"]].append(e["seq"])
        check(f"{tag}: per-communicator AllReduce sequence numbers 0,1,2,...",
              seqs and all(s == list(range(len(s))) for s in seqs.values()), {k: (s[:3], len(s)) for k, s in seqs.items()})
        info(f"{tag}: NCCL calls by func", dict(Counter(e["func"] for e in ncalls)))
        inits = [e for e in ev if e["kind"] == "nccl_comm_init" and e["ret"] == 0]
        pinit = [e for e in ev if e["kind"] == "nccl_prof_init"]
        check(f"{tag}: profiler plugin init once per communicator", len(pinit) == len(inits) and len(inits) >= 1,
              f"{len(pinit)} plugin inits, {len(inits)} ncclCommInit*", "equal, >= 1")
        check(f"{tag}: plugin loaded as ncclProfiler_v5 or later (NCCL 2.28)", pinit and all(e["version"] >= 5 for e in pinit),
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
        check(f"{tag}: NVTX 'step N' ranges (torch.cuda.nvtx)", [s for s, _, _ in nv] == list(range(r["steps"])),
              len(nv), r["steps"])
        ncr = [e for e in ev if e["kind"] == "nvtx_push" and e.get("domain") == "NCCL" and e.get("message") == "ncclAllReduce"
               and within(e, t0, t1)]
        check(f"{tag}: NCCL's own NVTX ranges, one per ncclAllReduce", len(ncr) == len(ar), len(ncr), len(ar))
        want_bytes = sum(e["count"] * 4 for e in ar if e["datatype"] == 7)
        check(f"{tag}: NCCL NVTX payloads: bytes sum = AllReduce counts x 4 (fp32 grads)",
              want_bytes > 0 and sum(e["payload2"] for e in ncr) == want_bytes, sum(e["payload2"] for e in ncr), want_bytes)
        check(f"{tag}: NCCL NVTX payloads: communicator = the plugin's comm hash",
              ncr and all(hex(e["payload"]) in hashes for e in ncr), sorted({hex(e["payload"]) for e in ncr}), sorted(hashes))
        ks = [e for e in ev if e["kind"] == "cuda_kernel"]
        slack = 300_000_000
        outside = [k for k in ks if not any(a - slack <= k["ts_ns"] <= b + slack for a, b in ws)]
        check(f"{tag}: kernels recorded (sampled windows)", len(ks) > 0, len(ks), "> 0")
        check(f"{tag}: kernels only inside sampled windows", not outside, f"{len(outside)} outside {len(ws)} windows", 0)
        info(f"{tag}: steps fully inside a kernel window", len([s for s, a, b in nv if any(wa <= a and b <= wb for wa, wb in ws)]))
        drops = sum(e.get("events", 0) for e in ev if e["kind"] == "drops")
        cd = sum(e["count"] for e in ev if e["kind"] == "cupti_dropped")
        check(f"{tag}: no events dropped (tracer, CUPTI)", drops == 0 and cd == 0, f"tracer {drops}, CUPTI {cd}", 0)
        info(f"{tag}: NCCL scope in PyTorch (local: found by the wrappers through the loaded object)", r["nccl_scope"])
    report_checks(trace, runs, evs)


def report_checks(trace, runs, evs):
    """What `railscope report --json` makes of the run (docs/report.md): its steps, its pinned/pageable H2D bytes
    and copy times, the GPUDirect verdict and the sampling it says it rests on."""
    rep, rc, err = report_json(trace)
    check("report: --json output", rep is not None and rc in (0, 1), f"exit {rc}" + (f", {err[:200]}" if rep is None else ""),
          "a JSON report")
    if rep is None:
        return
    check("report: complete input (not partial)", not rep.get("partial"), rep.get("partial"), False)
    total = sum(r["steps"] for r in runs) // max(1, len(runs))
    check("report: steps found (the NVTX 'step N' ranges)", rep.get("nsteps") == total,
          f"{rep.get('nsteps')} ({rep.get('step_source')})", total)
    byp = {x.get("pid"): x for x in rep.get("ranks", [])}
    procs = by_pid(evs)
    for r in runs:
        tag = f"rank{r['rank']}"
        x = byp.get(r["pid"])
        check(f"{tag}: report: rank of the training process", x is not None, sorted(byp)[:8], r["pid"])
        if x is None:
            continue
        ws = windows(procs.get(r["pid"], []))
        edges = 2 * len(ws)
        per = r["image_bytes"] + r["label_bytes"]
        want = {k: sum(p["steps"] for p in r["phases"] if p["kind"] == k) * per for k in CALL_MEM}
        dup = edges * per            # a copy at a window edge may be counted twice (wrapper and CUPTI)
        model = 256 << 20            # the model's parameters and buffers go to the GPU once, pageable (~98 MiB)
        pg, pn = x.get("h2d_pageable_bytes", 0), x.get("h2d_pinned_bytes", 0)
        check(f"{tag}: report: pinned H2D bytes = the pinned phase's batches (+ window-edge doubles)",
              want["pinned"] <= pn <= want["pinned"] + dup, pn, f"{want['pinned']}..{want['pinned'] + dup}")
        check(f"{tag}: report: pageable H2D bytes = the pageable phase's batches (+ the model once, window-edge doubles)",
              want["pageable"] <= pg <= want["pageable"] + dup + model, pg,
              f"{want['pageable']}..{want['pageable'] + dup + model}")
        ps, ns = x.get("h2d_pageable_s", 0), x.get("h2d_pinned_s", 0)
        check(f"{tag}: report: pageable copies cost more copy time than pinned ones (staged vs enqueued)",
              ps > ns > 0, f"pageable {ps * 1e3:.1f} ms, pinned {ns * 1e3:.1f} ms", "pageable > pinned > 0")
    gd = rep.get("gpudirect", {})
    if all(r["world"] == 1 for r in runs):
        check("report: GPUDirect verdict at world size 1: UNKNOWN (no network traffic), not a fault",
              gd.get("verdict") == "UNKNOWN" and not gd.get("fault"), f"{gd.get('verdict')} fault={gd.get('fault')} "
              f"note={gd.get('note')!r}", "UNKNOWN fault=False")
    check("report: a GPU program (GPU activity, copy calls or NCCL traced)", gd.get("gpu_memory") is True,
          gd.get("gpu_memory"), True)
    smp = rep.get("sampling", {})
    check("report: kernels sampled in windows on every rank", smp.get("ranks") == len(runs), smp.get("ranks"), len(runs))
    info("report: sampling", {k: smp.get(k) for k in ("steps", "steps_in_windows", "steps_extrapolated",
                                                     "window_time_share")})
    info("report: findings", [(f.get("category"), round(f.get("step_fraction") or 0, 3)) for f in rep.get("findings", [])])


def profiler(evs, runs, trace):
    err = open(os.environ["RS_STDERR"]).read() if os.environ.get("RS_STDERR") else None
    procs = by_pid(evs)
    for r in runs:
        ev = procs.get(r["pid"], [])
        tag = f"rank{r['rank']}"
        if err is None:
            check(f"{tag}: stderr of the run given (RS_STDERR)", False, "unset", "a file")
        else:
            warn = [l for l in err.splitlines() if "another CUPTI client" in l]
            check(f"{tag}: torch.profiler took CUPTI over: railscope warned once", len(warn) == 1, len(warn), 1)
        want = sum(p["steps"] for p in r["phases"])
        check(f"{tag}: training finished under both", r["steps"] >= want, r["steps"], f">= {want} (+ warm-up)")
        a, b = r.get("profile_start_ns", 0), r.get("profile_end_ns", 0)
        check(f"{tag}: the profiler ran (its start and end times in the JSON)", 0 < a < b, f"{a}..{b}", "0 < start < end")
        nv = steps_ranges(ev)
        check(f"{tag}: NVTX step ranges recorded throughout", [s for s, _, _ in nv] == list(range(r["steps"])),
              len(nv), r["steps"])
        prof = [s for s in nv if a <= s[1] and s[2] <= b]
        ids = {s for s, _, _ in prof}
        check(f"{tag}: steps while torch.profiler ran", len(prof) > 0, len(prof), "> 0")
        # the take-over: marked (CUDA_KERNEL_WINDOW state 2) inside the profiler's start, after the previous step
        kw = sorted((e for e in ev if e["kind"] == "cuda_kernel_window"), key=lambda e: e["ts_ns"])
        to = [e for e in kw if e["state"] == 2]
        prev = [s for s in nv if s[2] <= a]
        lo = prev[-1][2] if prev else 0
        check(f"{tag}: the trace marks the take-over (CUDA_KERNEL_WINDOW state 2) when the profiler started",
              len(to) >= 1 and lo <= to[0]["ts_ns"] <= a,
              f"{len(to)} marks, the first {(to[0]['ts_ns'] - a) / 1e6:+.1f} ms from the profiler's start" if to else "none",
              f"between the previous step's end ({(lo - a) / 1e6:+.1f} ms) and the profiler's start")
        t2 = to[0]["ts_ns"] if to else a
        opened = [e for e in kw if e["on"] and not flags(e) & 2]
        info(f"{tag}: kernel windows opened before the take-over", len([e for e in opened if e["ts_ns"] < t2]))
        check(f"{tag}: no kernel window opens after the take-over", not [e for e in opened if e["ts_ns"] > t2],
              len([e for e in opened if e["ts_ns"] > t2]), 0)
        gpu = [e for e in ev if e["kind"] in ("cuda_kernel", "cuda_memcpy", "cuda_memset") and e["ts_ns"] > t2 + 500_000_000]
        check(f"{tag}: no GPU activity records of railscope's own after the take-over (CUPTI is the profiler's)",
              len(gpu) == 0, len(gpu), 0)
        calls, _ = h2d(ev)
        img = [e for e in calls if e["bytes"] == r["image_bytes"] and within(e, a, b)]
        per = Counter(in_step(e["ts_ns"], prof) for e in img)
        stray = per.pop(None, 0)
        check(f"{tag}: after the take-over, one image copy per profiled step from the cudart wrappers (CUDA_COPY_CALL)",
              stray == 0 and set(per) == ids and all(v == 1 for v in per.values()),
              f"{sum(per.values())} in {len(per)} of {len(prof)} steps, {stray} outside steps", f"1 in each of {len(prof)}")
        check(f"{tag}: those copies are pinned -> device (bench phase: pre-pinned batches)",
              img and all(e["src_mem"] == 1 and e["dst_mem"] == 2 for e in img),
              sorted(Counter((e["src_mem"], e["dst_mem"]) for e in img).items()), "all (1, 2)")
        ar = [e for e in ev if e["kind"] == "nccl_call" and e["func"] == 0]
        arp = Counter(in_step(e["ts_ns"], prof) for e in ar if within(e, a, b))
        arp.pop(None, None)
        hooks = r["hook_calls_per_step"]
        want_ar = sum(hooks[s] if s < len(hooks) else 0 for s in ids)
        check(f"{tag}: ncclAllReduce calls in the profiled steps = the hook's count", sum(arp.values()) == want_ar and want_ar > 0,
              sum(arp.values()), want_ar)


def kernels(evs, runs, trace):
    procs = by_pid(evs)
    for r in runs:
        ev = procs.get(r["pid"], [])
        tag = f"rank{r['rank']}"
        ph = [p for p in r["phases"] if "timed_start_ns" in p][0]
        ta, tb = ph["timed_start_ns"], ph["timed_end_ns"]
        nv = [(s, a, b) for s, a, b in steps_ranges(ev) if a >= ta and b <= tb]
        check(f"{tag}: timed steps' NVTX ranges", len(nv) == ph["steps"], len(nv), ph["steps"])
        kw = [e for e in ev if e["kind"] == "cuda_kernel_window" and not flags(e) & 2]
        check(f"{tag}: full mode: every window mark mode 2, one window over the whole timed phase",
              kw and all(e["mode"] == 2 for e in kw) and any(wa <= ta and tb <= wb for wa, wb in windows(ev)),
              f"(on, mode, state) {[(e['on'], e['mode'], e['state']) for e in kw][:4]}, windows {len(windows(ev))}",
              "mode 2, on from before the timed phase to after it")
        # Kernels run after their launch, so count them per step through their launch API record (host time,
        # correlation id) rather than by GPU time, which drifts across the CPU's step boundaries.
        api = sorted((e["ts_ns"], e["correlation"]) for e in ev if e["kind"] == "cuda_api")
        kcorr = Counter(e["correlation"] for e in ev if e["kind"] == "cuda_kernel")
        lts = [t for t, _ in api]
        per = []
        for i in range(len(nv) - 1):
            lo, hi = bisect.bisect_left(lts, nv[i][1]), bisect.bisect_left(lts, nv[i + 1][1])
            per.append(sum(kcorr[c] for _, c in api[lo:hi]))
        med = statistics.median(per) if per else 0
        check(f"{tag}: kernels per step (full mode, attributed through their launch records)", med >= 100, med, ">= 100")
        spread = (max(per) - min(per)) / med if med else 1
        check(f"{tag}: same kernel count every step", spread <= 0.05, f"min {min(per) if per else 0} max {max(per) if per else 0}",
              "within 5%")
        kc = [e for e in ev if e["kind"] == "cuda_kernel" and within(e, ta, tb)]
        apic = {e["correlation"] for e in ev if e["kind"] == "cuda_api"}
        frac = sum(1 for k in kc if k["correlation"] in apic) / max(1, len(kc))
        # cuBLAS/cuDNN launch some kernels through the driver API, which has no runtime record (0.907 measured).
        check(f"{tag}: kernels matched to a runtime launch record by correlation id", frac >= 0.85, f"{frac:.3f}", ">= 0.85")
        names = Counter(e["name"] for e in kc)
        info(f"{tag}: distinct kernel names", len(names))
        nccl_k = [n for n in names if "nccl" in (n or "")]
        check(f"{tag}: NCCL kernels (none at world size 1)", (len(nccl_k) == 0) == (r["world"] == 1), nccl_k[:3])
        # copies: CUPTI owns them while the window is on (all the run), the wrappers record none
        calls, cupti = h2d(ev)
        cc = [e for e in calls if within(e, ta, tb)]
        check(f"{tag}: full mode: no CUDA_COPY_CALL while CUPTI records copies", len(cc) == 0, len(cc), 0)
        api_ts = {e["correlation"]: e["ts_ns"] for e in ev if e["kind"] == "cuda_api"}
        img = [e for e in cupti if e["bytes"] == r["image_bytes"] and within(e, ta, tb)]
        cs = Counter(in_step(api_ts.get(e["correlation"], -1), nv) for e in img)
        stray = cs.pop(None, 0)
        check(f"{tag}: full mode: one CUPTI image copy (pinned -> device) per timed step, through its API record",
              stray == 0 and len(cs) == len(nv) and all(v == 1 for v in cs.values())
              and all(e["src_kind"] == 2 and e["dst_kind"] == 3 for e in img),
              f"{len(img)} copies in {len(cs)} of {len(nv)} steps, {stray} unattributed, "
              f"kinds {sorted(Counter((e['src_kind'], e['dst_kind']) for e in img).items())}", f"1 in each of {len(nv)}, (2, 3)")


def join(evs, runs, trace):
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


def load(trace):
    """Every event of the trace (`railscope dump --json`); a partial trace (exit 1: a file without its end record,
    truncated or damaged) is read as far as it goes and fails a check."""
    cli = os.environ.get("RS_CLI") or os.path.join(os.environ.get("RS_BUILD", "build"), "railscope")
    p = subprocess.run([cli, "dump", "--json", trace], capture_output=True, text=True)
    check("trace complete (railscope dump exit 0)", p.returncode == 0, f"exit {p.returncode}"
          + (f": {p.stderr.strip().splitlines()[-1][:200]}" if p.returncode and p.stderr.strip() else ""), 0)
    if p.returncode not in (0, 1):
        return []
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    mode, trace = sys.argv[1], sys.argv[2]
    runs = [json.load(open(p)) for p in sys.argv[3:]]
    evs = load(trace)
    modes = {"correct": correct, "profiler": profiler, "kernels": kernels, "join": join}
    if mode not in modes:
        print(__doc__, file=sys.stderr)
        return 2
    modes[mode](evs, runs, trace)
    bad = [r for r in RESULTS if not r["ok"]]
    print("SUMMARY " + json.dumps(dict(mode=mode, checks=len(RESULTS), failed=[r["name"] for r in bad])), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
