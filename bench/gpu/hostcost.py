#!/usr/bin/env python3
"""What a mode adds to the host's work per training step: process CPU time over the timed steps (bench/gpu/cpuclock.py).

  bench/gpu/hostcost.py --workload transformer --modes untraced,default,nocuda --rounds 4 --steps 200

Each round runs every mode once (separate processes, the order reversed every other round), the workload waiting
for the GPU in blocking-sync mode (--blocking-sync: cudaDeviceScheduleBlockingSync), so a thread that waits sleeps
and the CPU time of the timed steps is the host's work: the training loop's, PyTorch's threads', and what a tracer
adds on any thread (its wrappers, its writer thread, CUPTI's worker and driver-side work). Why CPU time: on the H200
VM a step's wall time wanders by 5-20 % between processes and from second to second (lock-step pairs of untraced
processes gave 0.98-1.10), and it has no CPU performance counter to count instructions.

Prints per mode: CPU ms per step, the ratio to untraced (geometric mean over rounds, each round's pair of runs as
one sample, 95 % t-interval), the added CPU as a share of the untraced wall step, the wall step (noisy), and CPU
ms per step by thread name; writes $OUT/hostcost-<workload>.json."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ablate  # noqa: E402  (MODES, workload_cmd, B)
from benchstats import pooled  # noqa: E402



def run_one(mode, a, rnd):
    traced, env_extra, wargs = ablate.MODES[mode]
    tag = f"{a.workload}-{mode}-{rnd}"
    res = os.path.join(a.work, tag + ".json")
    cmd = ablate.workload_cmd(a.workload, a, res) + wargs + ["--blocking-sync"]
    if traced:
        cmd = [os.path.join(ablate.B, "railscope"), "record", "-q", "-o", os.path.join(a.work, tag + ".trace"), "--"] + cmd
    cmd = ["taskset", "-c", a.cpus] + cmd
    env = dict(os.environ)
    env.update(env_extra)
    with open(os.path.join(a.work, tag + ".err"), "w") as err:
        try:
            rc = subprocess.call(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, timeout=a.run_cap)
        except subprocess.TimeoutExpired:
            rc = "timeout"
    subprocess.call(["rm", "-rf", os.path.join(a.work, tag + ".trace")])
    try:
        w = json.load(open(res))
        n = len(w["steps_ns"])
        return dict(mode=mode, round=rnd, rc=rc, cpu_ms=w["cpu_ns"] / 1e6 / n, wall_ms=w["step_ms"][0],
                    threads_ms={k: v / n for k, v in w["threads_ms"].items()})
    except (OSError, ValueError, KeyError, ZeroDivisionError) as e:
        print(f"{tag}: no result (rc {rc}, {e!r})", flush=True)
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="transformer")
    ap.add_argument("--modes", default="untraced,default,nocuda")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--cpus", default="2-13")
    ap.add_argument("--run-cap", type=float, default=180)
    ap.add_argument("--budget", type=float, default=1e9, help="start no new round after this many seconds")
    ap.add_argument("--work", default="/tmp/rs-hostcost")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    a = ap.parse_args()
    if a.workload not in ("transformer", "launch", "stub"):  # the workloads that take --blocking-sync, time CPU
        sys.exit(f"hostcost: workload {a.workload} not supported (transformer, launch, stub)")
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    modes = a.modes.split(",")
    t0 = time.monotonic()
    runs = []
    for rnd in range(a.rounds):
        if time.monotonic() - t0 > a.budget:
            break
        for m in (modes if rnd % 2 == 0 else modes[::-1]):
            r = run_one(m, a, rnd)
            if r:
                runs.append(r)
        print(f"round {rnd} done at {time.monotonic() - t0:.0f} s", flush=True)
    with open(os.path.join(a.out, f"hostcost-{a.workload}.json"), "w") as f:
        json.dump(dict(workload=a.workload, args=vars(a), runs=runs), f)
    by = {m: [r for r in runs if r["mode"] == m] for m in modes}
    base = {r["round"]: r for r in by.get("untraced", [])}
    bwall = statistics.mean(r["wall_ms"] for r in base.values()) if base else None
    done = len({r["round"] for r in runs})
    print(f"hostcost {a.workload}: process CPU time per timed step ({a.steps} steps, blocking sync), "
          f"{done} rounds of {a.rounds}")
    for m in modes:
        rs = by[m]
        if not rs:
            print(f"  {m:14s} no runs")
            continue
        cpu = statistics.mean(r["cpu_ms"] for r in rs)
        line = f"  {m:14s} CPU {cpu:7.3f} ms/step  wall {statistics.mean(r['wall_ms'] for r in rs):6.2f} ms/step"
        if base and m != "untraced":
            pr = [r["cpu_ms"] / base[r["round"]]["cpu_ms"] for r in rs if r["round"] in base]
            g, lo, hi = pooled(pr)
            bcpu = statistics.mean(r["cpu_ms"] for r in base.values())
            line += (f"  x{g:.4f} [{lo:.4f}, {hi:.4f}] CPU vs untraced; added {cpu - bcpu:+.3f} ms/step"
                     f" = {100 * (cpu - bcpu) / bwall:+.2f} % of the untraced wall step")
        print(line)
        names = {}
        for r in rs:
            for k, v in r["threads_ms"].items():
                names[k] = names.get(k, 0) + v / len(rs)
        top = sorted(names.items(), key=lambda kv: -kv[1])[:6]
        print("      by thread: " + ", ".join(f"{k} {v:.3f}" for k, v in top), flush=True)


if __name__ == "__main__":
    main()
