#!/usr/bin/env python3
"""What a mode adds to the host's work per training step, counted in instructions (bench/gpu/hostcost.c).

  bench/gpu/hostcost.py --workload transformer --modes untraced,default,nocuda --rounds 3 --short 40 --long 240

Each mode runs the workload twice per round, with --short and with --long timed steps (same warm-up), under
hostcost (instructions and CPU time of every thread of the command, children included: `railscope record`, the
workload, its threads, railscope's writer thread, CUPTI's thread). Per step = (long - short) / (long - short
steps): start-up, model building, exit and trace finishing cancel out. The workloads wait for the GPU in
blocking-sync mode (--blocking-sync: cudaDeviceScheduleBlockingSync), so waiting costs no instructions and the
count is the host's work. Modes as in bench/gpu/ablate.py; rounds alternate the modes.

Prints per mode: instructions per step (mean and spread over rounds), ratio to untraced, CPU ms per step, wall ms
per step (from the workload's own timing; this host's noise), and writes $OUT/hostcost-<workload>.json."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ablate  # noqa: E402  (MODES, workload_cmd, B)


def run_one(mode, steps, a, rnd):
    traced, env_extra, wargs = ablate.MODES[mode]
    tag = f"{a.workload}-{mode}-{steps}-{rnd}"
    res = os.path.join(a.work, tag + ".json")
    hc = os.path.join(a.work, tag + ".hc.json")
    sa = argparse.Namespace(steps=steps, warmup=a.warmup)
    cmd = ablate.workload_cmd(a.workload, sa, res) + wargs + ["--blocking-sync"]
    if traced:
        cmd = [os.path.join(ablate.B, "railscope"), "record", "-q", "-o", os.path.join(a.work, tag + ".trace"), "--"] + cmd
    cmd = ["taskset", "-c", a.cpus, a.hostcost, hc, "--"] + cmd
    env = dict(os.environ)
    env.update(env_extra)
    env["PYTHONHASHSEED"] = "0"
    with open(os.path.join(a.work, tag + ".err"), "w") as err:
        rc = subprocess.call(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, timeout=a.run_cap)
    subprocess.call(["rm", "-rf", os.path.join(a.work, tag + ".trace")])
    try:
        h = json.load(open(hc))
        w = json.load(open(res))
    except (OSError, ValueError) as e:
        print(f"{tag}: no result (rc {rc}, {e})", flush=True)
        return None
    return dict(mode=mode, steps=steps, round=rnd, rc=rc, ins=h["instructions"], ins_ok=h["instructions_ok"],
                kernel=h["kernel_counted"], clk_ns=h["task_clock_ns"], wall_ms=w["step_ms"][0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="transformer")
    ap.add_argument("--modes", default="untraced,default,nocuda")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--short", type=int, default=40)
    ap.add_argument("--long", type=int, default=240)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--cpus", default="2-13")
    ap.add_argument("--run-cap", type=float, default=180)
    ap.add_argument("--budget", type=float, default=1e9, help="start no new round after this many seconds")
    ap.add_argument("--hostcost", default=os.path.join(ablate.B, "hostcost"), help="the counter (hostcost.c), built")
    ap.add_argument("--work", default="/tmp/rs-hostcost")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    modes = a.modes.split(",")
    t0 = time.monotonic()
    runs = []
    for rnd in range(a.rounds):
        if time.monotonic() - t0 > a.budget:
            break
        order = modes if rnd % 2 == 0 else modes[::-1]
        for m in order:
            for n in ((a.short, a.long) if rnd % 2 == 0 else (a.long, a.short)):
                r = run_one(m, n, a, rnd)
                if r:
                    runs.append(r)
        print(f"round {rnd} done at {time.monotonic() - t0:.0f} s", flush=True)
    per = {}
    for m in modes:
        for rnd in range(a.rounds):
            s = [r for r in runs if r["mode"] == m and r["round"] == rnd and r["steps"] == a.short]
            l_ = [r for r in runs if r["mode"] == m and r["round"] == rnd and r["steps"] == a.long]
            if s and l_:
                d = a.long - a.short
                per.setdefault(m, []).append(dict(ins=(l_[0]["ins"] - s[0]["ins"]) / d,
                                                  clk_ms=(l_[0]["clk_ns"] - s[0]["clk_ns"]) / d / 1e6,
                                                  wall_ms=l_[0]["wall_ms"]))
    with open(os.path.join(a.out, f"hostcost-{a.workload}.json"), "w") as f:
        json.dump(dict(workload=a.workload, args=vars(a), runs=runs, per_step=per), f)
    ok = bool(runs) and all(r["ins_ok"] for r in runs)
    print(f"hostcost {a.workload}: per timed step, from {a.long}-step minus {a.short}-step runs; "
          f"instructions {'user+kernel' if runs and runs[0]['kernel'] else 'user only'}"
          f"{'' if ok else ' NOT AVAILABLE on this host (no CPU performance counter): CPU time only'}")
    base = per.get("untraced")
    for m, v in per.items():
        ins = [x["ins"] for x in v]
        clk = [x["clk_ms"] for x in v]
        wall = [x["wall_ms"] for x in v]
        line = f"  {m:16s} "
        if ok:
            sd = statistics.stdev(ins) if len(ins) > 1 else float("nan")
            line += f"{statistics.mean(ins) / 1e6:9.3f} M instr/step (sd {sd / 1e6:.3f} M, n {len(ins)})  "
        line += f"CPU {statistics.mean(clk):6.3f} ms/step  wall {statistics.mean(wall):6.2f} ms/step"
        if base and m != "untraced":
            bc = statistics.mean(x["clk_ms"] for x in base)
            if ok:
                bi = statistics.mean(x["ins"] for x in base)
                line += (f"  x{statistics.mean(ins) / bi:.4f} instructions "
                         f"({(statistics.mean(ins) - bi) / 1e6:+.3f} M)")
            line += f"  x{statistics.mean(clk) / bc:.4f} CPU time"
        print(line, flush=True)


if __name__ == "__main__":
    main()
