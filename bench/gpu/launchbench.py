#!/usr/bin/env python3
"""A host-bound step for railscope's per-call overhead (bench/gpu/lockstep.py --workload launch).

The transformer's step (bench/gpu/transformer.py) spends most of its time on the GPU, so a tracer's per-call cost
shows there only as a small share, under several % of noise between processes. This step is the same kinds of
calls with almost no GPU work: each step makes --kernels tiny kernel launches (an in-place add on 256 floats),
--d2d device-to-device copies (cudaMemcpyAsync, 4 KiB), one pinned host-to-device copy (non_blocking, 64 KiB) and
one .item() (a small device-to-host copy that waits), then synchronises. Its time is the host's: what a tracer adds
to a launch or a copy appears in full, so ratio - 1 here is an upper bound, per call, of what the same calls cost in
a real step (where the GPU hides part of the host's time).

Same protocol and result file as transformer.py (RS_LOCKSTEP gate; step_ms, steps_ns, t_result), plus the counts
per step, so that (ratio - 1) x step time / calls gives ns per call."""
import argparse
import json
import os
import time

import torch

from cudaflags import blocking_sync
import cpuclock
from lockstep_gate import Gate


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--kernels", type=int, default=600)
    p.add_argument("--d2d", type=int, default=30)
    p.add_argument("--blocking-sync", action="store_true", help="threads waiting for the GPU sleep (hostcost.py)")
    p.add_argument("--out", default="launch.json")
    a = p.parse_args()
    if a.blocking_sync:
        blocking_sync()
    dev = torch.device("cuda", 0)
    x = torch.zeros(256, device=dev)
    src = torch.ones(1024, device=dev)
    dst = torch.empty(1024, device=dev)
    host = torch.ones(16384).pin_memory()
    hdev = torch.empty(16384, device=dev)
    vals = []

    def step():
        for _ in range(a.kernels):
            x.add_(1.0)
        for _ in range(a.d2d):
            dst.copy_(src)
        hdev.copy_(host, non_blocking=True)
        vals.append(x[0].item())

    gate = Gate.from_env()
    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    if gate:
        gate.ready()
    c0 = cpuclock.snap()
    t0 = time.monotonic_ns()
    per = []
    for _ in range(a.steps):
        if gate:
            gate.wait()
        s0 = time.monotonic_ns()
        step()
        torch.cuda.synchronize()
        per.append((s0, time.monotonic_ns() - s0))
        if gate:
            gate.step_done()
    t1 = time.monotonic_ns()
    cpu = cpuclock.diff(c0, cpuclock.snap())
    durs = sorted(d for _, d in per)
    res = dict(pid=os.getpid(), steps=a.steps, warmup=a.warmup,
               step_ms=[(sum(d for _, d in per) if gate else t1 - t0) / 1e6 / a.steps],
               step_ms_median=durs[len(durs) // 2] / 1e6, steps_ns=per, timed_start_ns=t0, timed_end_ns=t1,
               kernels_per_step=a.kernels, d2d_per_step=a.d2d, h2d_per_step=1, d2h_per_step=1,
               finite=vals[-1] == float(a.kernels * (a.warmup + a.steps)))
    res.update(cpu)
    res["t_result"] = time.time()
    with open(a.out, "w") as f:
        json.dump(res, f)
    print(f"launchbench.py: steps={a.steps} step_ms={res['step_ms'][0]:.3f}", flush=True)


if __name__ == "__main__":
    main()
