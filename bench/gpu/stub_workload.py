#!/usr/bin/env python3
"""A GPU-less stand-in for the workloads of bench/gpu/ablate.py and lockstep.py (their self-tests, tests/bench/):
each "step" spins the CPU for --step-ms (times 1 + STUB_SLOW, a planted cost; with STUB_SLOW_STEPS=LO:HI only the
timed steps LO..HI-1 carry it, as a kernel window's steps do; STUB_CRASH=1: dies of SIGSEGV in its warm-up, as
one lock-step process did on the H200 in session 13; STUB_CRASH_ONCE=FILE: the same while FILE does not exist yet,
creating it), with the same result file and lock-step protocol (bench/gpu/lockstep_gate.py) as transformer.py."""
import argparse
import json
import os
import signal
import time

import cpuclock
from lockstep_gate import Gate


def spin(ns):
    """Burn ns of wall time (default: a step's wall time stays exactly its planted length on a loaded machine, which
    the lock-step checks compare) or, with STUB_SPIN=cpu, of this thread's CPU time (a preempted step still does
    the same work: what hostcost.py's CPU-time checks compare)."""
    clock = time.thread_time_ns if os.environ.get("STUB_SPIN") == "cpu" else time.monotonic_ns
    end = clock() + ns
    while clock() < end:
        pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--step-ms", type=float, default=float(os.environ.get("STUB_STEP_MS", "2")))
    p.add_argument("--blocking-sync", action="store_true", help="accepted as the GPU workloads do; nothing to do here")
    # torchprof mode's argument (bench/gpu/ablate.py): accepted so that a dry run of a whole group gets through
    p.add_argument("--profile", nargs="?", const="", help="accepted as the GPU workloads do; no profiler here")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    base = int(a.step_ms * 1e6)
    ns = int(a.step_ms * 1e6 * (1 + float(os.environ.get("STUB_SLOW", "0"))))
    lo, hi = (int(x) for x in os.environ.get("STUB_SLOW_STEPS", f"0:{a.steps}").split(":"))
    gate = Gate.from_env()
    for _ in range(a.warmup):
        spin(base)
    if os.environ.get("STUB_CRASH"):
        os.kill(os.getpid(), signal.SIGSEGV)
    once = os.environ.get("STUB_CRASH_ONCE")  # a marker file: dies the first time only (lockstep.py's retry test)
    if once and not os.path.exists(once):
        open(once, "w").close()
        os.kill(os.getpid(), signal.SIGSEGV)
    if gate:
        gate.ready()
    c0 = cpuclock.snap()
    t0 = time.monotonic_ns()
    per = []
    for i in range(a.steps):
        if gate:
            gate.wait()
        s0 = time.monotonic_ns()
        spin(ns if lo <= i < hi else base)
        per.append((s0, time.monotonic_ns() - s0))
        if gate:
            gate.step_done()
    t1 = time.monotonic_ns()
    cpu = cpuclock.diff(c0, cpuclock.snap())
    durs = sorted(d for _, d in per)
    res = dict(pid=os.getpid(), step_ms=[(sum(durs) if gate else t1 - t0) / 1e6 / a.steps],
               step_ms_median=durs[len(durs) // 2] / 1e6, steps_ns=per, t_result=time.time())
    res.update(cpu)
    with open(a.out, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
