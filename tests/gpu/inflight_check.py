#!/usr/bin/env python3
"""The detach after a kernel window waits for the window's last kernels, on the real CUPTI (GPU only; session 32).

  tests/gpu/inflight_check.py --rs-build build/gpu --out DIR [--seconds 14]

Since session 32 the tracer arms CUPTI's detach as soon as CUPTI holds no activity buffer of the window (a
non-forced flush returns only buffers whose records are all complete), 20-300 ms after the close, instead of a
whole tick (500 ms) later. That is only right if a kernel still running at the close keeps its buffer in CUPTI.
This workload keeps one: each step is a ~120 ms spin kernel (torch.cuda._sleep), ten small adds and an .item(),
so at nearly every window close a spin kernel is running. Two traced runs, the default arm and
RAILSCOPE_CUDA_ABLATE=tickarm (the arm at the tick, sessions 20-31), each checked against what the workload itself
counted and timed:
  - the run ends normally and its output (the adds) equals the untraced run's;
  - no activity record came without timestamps (the tracer's warning), and at each window close where the
    workload had a spin kernel in flight (by its own host times) the trace holds that kernel, timed, spanning
    the close; every step launched inside a window has its ten add kernels in the trace (those queued behind a
    spin that runs past the close too): nothing of the window was cut by an early forced flush;
  - default: the arms say "its records in" and come sooner after the close than tickarm's (printed).
Prints one line per check ("ok"/"FAIL") and exits 1 if any failed."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ARMED = r"detach armed at [0-9.]+ s, ([0-9.]+) ms after the window's close \((its records in|at the tick)\)"


def workload(a):
    import torch
    x = torch.zeros(256, device="cuda")
    # cycles for ~120 ms at this clock
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    torch.cuda._sleep(50_000_000)
    e1.record()
    torch.cuda.synchronize()
    cycles = int(50_000_000 * 120.0 / max(e0.elapsed_time(e1), 1e-3))
    vals, spins, t_end = [], [], time.monotonic() + a.seconds
    while time.monotonic() < t_end:
        t0 = time.monotonic_ns()
        torch.cuda._sleep(cycles)
        for _ in range(10):
            x.add_(1.0)
        vals.append(x[0].item())
        spins.append((t0, time.monotonic_ns()))  # the spin ran within [launch, the .item()'s return]
    json.dump({"vals": vals, "spins": spins, "cycles": cycles}, open(a.result, "w"))


def check(a):
    env = dict(os.environ, NCCL_NVLS_ENABLE="0")
    me = [sys.executable, os.path.abspath(__file__), "--child", "--seconds", str(a.seconds)]
    tenv = dict(env, RAILSCOPE_CUDA_KERNEL_WINDOW="500/2000/1000", RAILSCOPE_LOG="debug")
    fails = 0

    def say(cond, what, diag=""):
        nonlocal fails
        fails += not cond
        print(("ok   " if cond else "FAIL ") + what + (f"   [{diag}]" if diag else ""))

    res_u = os.path.join(a.out, "inflight-untraced.json")
    pu = subprocess.run(me + ["--result", res_u], env=env, capture_output=True, text=True, timeout=300)
    say(pu.returncode == 0, "untraced run ends normally", pu.stderr[-800:])
    ru = json.load(open(res_u)) if pu.returncode == 0 else None
    sys.path.insert(0, os.path.join(HERE, "..", "nccl"))
    import tq
    med = {}
    for tag, extra in (("default", {}), ("tickarm", {"RAILSCOPE_CUDA_ABLATE": "tickarm"})):
        print(f"-- {tag}")
        res_t, tdir = os.path.join(a.out, f"inflight-{tag}.json"), os.path.join(a.work, f"trace-{tag}")
        subprocess.run(["rm", "-rf", tdir], check=False)
        pt = subprocess.run([os.path.join(a.rs_build, "railscope"), "record", "-o", tdir, "--"] + me +
                            ["--result", res_t], env=dict(tenv, **extra), capture_output=True, text=True, timeout=300)
        open(os.path.join(a.out, f"inflight-{tag}.stderr"), "w").write(pt.stderr)
        say(pt.returncode == 0, f"{tag}: traced run ends normally", f"rc {pt.returncode} {pt.stderr[-600:]}")
        if pt.returncode or not ru:
            continue
        rt = json.load(open(res_t))
        n = min(len(ru["vals"]), len(rt["vals"]))
        say(n > 20 and ru["vals"][:n] == rt["vals"][:n], f"{tag}: same output as the untraced run (first {n} steps)")
        arms = [(float(ms), how) for ms, how in re.findall(ARMED, pt.stderr)]
        ms = sorted(x for x, _ in arms)
        med[tag] = ms[len(ms) // 2] if ms else None
        print(f"     arms (ms after the close, why): {arms}")
        say("without timestamps" not in pt.stderr, f"{tag}: no activity record came without timestamps",
            [ln for ln in pt.stderr.splitlines() if "timestamps" in ln])
        evs = tq.load(tdir, os.path.join(a.rs_build, "railscope"))
        closes = sorted(e["ts_ns"] for e in evs if e["kind"] == "cuda_kernel_window" and not e["on"] and
                        not int(str(e.get("flags", 0)), 0) & 2)
        spins = [(e["ts_ns"], e["end"]) for e in evs if e["kind"] == "cuda_kernel" and "spin" in e.get("name", "")]
        # the trace's clock is CLOCK_MONOTONIC (tracer/clock.c), as time.monotonic_ns(): the workload's own spans
        busy = [c for c in closes if any(s0 + 2_000_000 < c < s1 - 5_000_000 for s0, s1 in rt["spins"])]
        held = [c for c in busy if any(k0 < c < k1 for k0, k1 in spins)]
        print(f"     closes {len(closes)}, with a spin kernel running (workload's times) {len(busy)}, "
              f"its record in the trace spanning the close {len(held)}; spin records {len(spins)}")
        say(len(busy) >= 3 and held == busy,
            f"{tag}: every window close with a spin kernel running has that kernel's record, timed, in the trace",
            (len(closes), len(busy), len(held)))
        # every kernel the window's steps launched, not only the spin: the ten adds queued behind a spin that runs
        # past the close run after it too (helper-94: the spin kernels alone do not show that nothing was cut)
        wins, on_at = [], None
        for e in sorted((e for e in evs if e["kind"] == "cuda_kernel_window" and
                         not int(str(e.get("flags", 0)), 0) & 2), key=lambda e: e["ts_ns"]):
            if e["on"] and on_at is None:
                on_at = e["ts_ns"]
            elif not e["on"] and on_at is not None:
                wins.append((on_at, e["ts_ns"]))
                on_at = None
        adds = sorted(e["ts_ns"] for e in evs if e["kind"] == "cuda_kernel" and "add" in e.get("name", "").lower())
        short = []
        for lo, hi in wins[1:]:  # the window at CUDA init holds the calibration, not steps
            for s0, s1 in rt["spins"]:
                if lo + 1_000_000 < s0 < hi - 1_000_000:  # launched inside the window (its adds within ~0.1 ms)
                    n = sum(1 for t in adds if s0 < t < s1 + 1_000_000)
                    if n != 10:
                        short.append((s0, n))
        nsteps = sum(1 for lo, hi in wins[1:] for s0, _ in rt["spins"] if lo + 1_000_000 < s0 < hi - 1_000_000)
        print(f"     steps launched inside windows {nsteps}, with fewer or more than their 10 add records {len(short)}")
        say(nsteps >= 3 and not short, f"{tag}: every step launched inside a window has its 10 add kernels, timed, "
            "in the trace (those queued behind a spin running past the close included)", short[:5])
        if tag == "default":
            say(arms and all(how == "its records in" for _, how in arms),
                "default: every detach armed once the window's records were in (not at the tick)", arms)
    if med.get("default") is not None and med.get("tickarm") is not None:
        say(med["default"] < med["tickarm"], "the default arms sooner after the close than at the tick (median ms)",
            med)
    print(f"inflight_check: {fails} failed")
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--seconds", type=float, default=14)
    ap.add_argument("--result", default="")
    ap.add_argument("--rs-build", default="build/gpu")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    ap.add_argument("--work", default="/tmp/rs-inflight")
    a = ap.parse_args()
    if a.child:
        return workload(a)
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    return check(a)


if __name__ == "__main__":
    sys.exit(main() or 0)
