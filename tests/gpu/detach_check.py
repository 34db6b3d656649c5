#!/usr/bin/env python3
"""CUPTI detached between windows, on the real thing (GPU only; issue 16, session 8).

  tests/gpu/detach_check.py --rs-build build/gpu --out DIR [--seconds 14] [--profile-at 9]

Runs one workload untraced and twice under `railscope record` with short windows (300 ms every 1.5 s, ticks
every 100 ms, so a detach/attach cycle every 1.5 s) and RAILSCOPE_LOG=debug, then checks against what the workload
itself planted and counted:
  - the program's output is the same traced and untraced (every step's result, over the steps both made before
    the profiler: the loop runs for a time, not a number of steps);
  - each step makes 200 eager kernel launches (in-place add) and 50 multiplies, plus a pinned H2D copy and an
    .item(): in the `graph` run the multiplies are a CUDA graph captured at start-up (CUPTI must then stay
    attached: a finalize and re-attach with it failed with "unspecified launch failure" in device call 4), in the
    `eager` run they are launched one by one and CUPTI detaches between windows; every window after the first has
    kernel records of both kinds, in the planted proportion (a window whose steps all lie inside it must hold 200
    adds and 50 multiplies per step);
  - the tracer's debug line: detaches and re-attaches happened (eager: >= 4 each; graph: none), and the buffers CUPTI asked for all
    came back (requested - returned <= 1 at exit: no buffer lost per detach);
  - with --profile-at S: torch.profiler records 10 steps at S seconds (another CUPTI client arriving while
    railscope detaches and attaches); its table must list the add kernel, and the run must end normally.
Prints one line per check ("ok"/"FAIL") and exits 1 if any failed."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def workload(a):
    import torch
    dev = torch.device("cuda", 0)
    x = torch.zeros(256, device=dev)
    g_in = torch.ones(4096, device=dev)
    host = torch.ones(16384).pin_memory()
    hdev = torch.empty(16384, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up on a side stream before capture, as torch.cuda.graphs requires
        for _ in range(3):
            g_in.mul_(1.0)
    torch.cuda.current_stream().wait_stream(s)
    if a.no_graph:  # the same 50 multiplies, launched one by one

        class Eager:
            def replay(self):
                for _ in range(50):
                    g_in.mul_(1.0000001)
        graph = Eager()
    else:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(50):
                g_in.mul_(1.0000001)
    vals, steps, t_end = [], [], time.monotonic() + a.seconds
    prof_step = -1
    prof_done = a.profile_at <= 0
    t0 = time.monotonic()
    n_prof, prof_t = -1, 0
    while time.monotonic() < t_end:
        if not prof_done and time.monotonic() - t0 >= a.profile_at:
            prof_done = True
            prof_t, prof_step = time.monotonic_ns(), len(vals)
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(10):
                    for _ in range(200):
                        x.add_(1.0)
                    graph.replay()
                    x[0].item()
            table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=50)
            n_prof = sum(1 for ln in table.splitlines() if "add" in ln.lower() or "elementwise" in ln.lower())
            continue
        ts = time.monotonic_ns()
        for _ in range(200):
            x.add_(1.0)
        graph.replay()
        hdev.copy_(host, non_blocking=True)
        vals.append(x[0].item() + float(g_in[0].item()))
        steps.append((ts, time.monotonic_ns()))
    torch.cuda.synchronize()
    json.dump({"vals": vals, "prof_step": prof_step, "steps": steps, "profiler_rows": n_prof, "profiler_t": prof_t}, open(a.result, "w"))


def check(a):
    env = dict(os.environ, NCCL_NVLS_ENABLE="0")
    me = [sys.executable, os.path.abspath(__file__), "--child", "--seconds", str(a.seconds)]
    tenv = dict(env, RAILSCOPE_CUDA_KERNEL_WINDOW="300/1500/500", RAILSCOPE_FLUSH_MS="100", RAILSCOPE_LOG="debug")
    fails = 0

    def say(cond, what, diag=""):
        nonlocal fails
        fails += not cond
        print(("ok   " if cond else "FAIL ") + what + (f"   [{diag}]" if diag else ""))

    res_u = os.path.join(a.out, "detach-untraced.json")
    pu = subprocess.run(me + ["--profile-at", "0", "--result", res_u], env=env, capture_output=True, text=True,
                        timeout=300)
    say(pu.returncode == 0, "untraced run (CUDA graph) ends normally", pu.stderr[-800:])
    ru = json.load(open(res_u)) if pu.returncode == 0 else None
    sys.path.insert(0, os.path.join(HERE, "..", "nccl"))
    import tq
    # graph: a CUDA graph captured at start-up (inside the kernel window at CUDA init): CUPTI must stay attached
    # (a finalize and re-attach with that graph failed with "unspecified launch failure", device call 4).
    # eager: the same work without a graph, torch.profiler for 10 steps at --profile-at: detach/attach cycles.
    for tag, extra in (("graph", ["--profile-at", "0"]), ("eager", ["--no-graph", "--profile-at", str(a.profile_at)])):
        print(f"-- {tag}")
        res_t, tdir = os.path.join(a.out, f"detach-{tag}.json"), os.path.join(a.work, f"trace-{tag}")
        subprocess.run(["rm", "-rf", tdir], check=False)
        t1 = time.monotonic()
        pt = subprocess.run([os.path.join(a.rs_build, "railscope"), "record", "-o", tdir, "--"] + me + extra +
                            ["--result", res_t], env=tenv, capture_output=True, text=True, timeout=300)
        wall = time.monotonic() - t1
        open(os.path.join(a.out, f"detach-{tag}.stderr"), "w").write(pt.stderr)
        say(pt.returncode == 0, f"{tag}: traced run ends normally",
            f"rc {pt.returncode} ({wall:.1f} s) {pt.stderr[-800:] if pt.returncode else ''}")
        if pt.returncode or not ru:
            continue
        rt = json.load(open(res_t))
        n = min(len(ru["vals"]), len(rt["vals"]))
        if rt["prof_step"] >= 0:
            n = min(n, rt["prof_step"])
        diff = [i for i in range(n) if ru["vals"][i] != rt["vals"][i]]
        say(n > 100 and not diff, f"{tag}: same output as the untraced run (first {n} steps)", diff[:5])
        m = re.search(r"detached (\d+) times \(armed to finalized ([\d.]+) ms mean, ([\d.]+) max; finalize ([\d.]+) "
                      r"ms max; (\d+) cancelled by a window, (\d+) by a graph or another "
                      r"client, (\d+) at exit\), re-attached (\d+) times \(([\d.]+) "
                      r"ms mean, ([\d.]+) max\);[^;]*; buffers requested (\d+), returned (\d+)", pt.stderr)
        if m:
            nd, dmean, dmax, fmax, ncancel, nforgood, nexit, na, amean, amax, req, ret = m.groups()
            print(f"     detach {nd} (armed->finalized {dmean} ms mean, {dmax} max; finalize {fmax} ms max; "
                  f"cancelled {ncancel} by a window, {nforgood} by a graph or client, {nexit} at "
                  f"exit), attach {na} x {amean} ms (max {amax}), buffers {req}/{ret}")
        stays = re.findall(r"CUPTI stays attached[^\n]*", pt.stderr)
        if tag == "graph":
            # The init window may close and detach before the capture (device call 5: 1 detach, then the capture
            # while detached, 1 re-attach, none after): what matters is that none follows the capture.
            say(m and int(m.group(1)) <= int(m.group(8)) and any("CUDA graphs (cudaStreamBeginCapture)" in x for x in stays),
                "graph: the capture is seen and no detach follows it (detaches <= re-attaches)",
                (m.group(0) if m else "no line", stays))
        else:
            say(m and int(m.group(1)) >= 4 and int(m.group(8)) >= 4, "eager: CUPTI detached and re-attached >= 4 times",
                (m.group(0) if m else "no debug line", stays))
        say(m and int(m.group(11)) - int(m.group(12)) <= 1,
            f"{tag}: every activity buffer came back (requested - returned <= 1)", m.group(0) if m else "")
        evs = tq.load(tdir, os.path.join(a.rs_build, "railscope"))
        wins, on_at = [], None
        for e in evs:
            if e["kind"] == "cuda_kernel_window":
                if e["on"] and on_at is None:
                    on_at = e["ts_ns"]
                elif not e["on"] and on_at is not None:
                    wins.append((on_at, e["ts_ns"]))
                    on_at = None
        kern = [(e["ts_ns"], e.get("name", "")) for e in evs if e["kind"] == "cuda_kernel"]
        per = []
        for lo, hi in wins:
            ks = [k for t, k in kern if lo <= t <= hi]
            full = sum(1 for s0, s1 in rt["steps"] if lo <= s0 and s1 <= hi)
            per.append((sum(1 for k in ks if "add" in k.lower()), sum(1 for k in ks if "mul" in k.lower()), full))
        print("     windows (adds, multiplies, whole steps inside):", per)
        later = [w for w, (lo, hi) in zip(per, wins) if not rt["profiler_t"] or hi < rt["profiler_t"]][1:]
        say(len(later) >= 4 and all(ad > 0 and mu > 0 for ad, mu, _ in later),
            f"{tag}: every window after the first has add and multiply kernel records")
        say(all(ad >= 200 * f and mu >= 50 * f for ad, mu, f in later),
            f"{tag}: windows hold >= 200 adds and 50 multiplies a step")
        if rt["prof_step"] >= 0:
            say(rt["profiler_rows"] > 0, f"{tag}: torch.profiler mid-run lists the add kernel",
                f"rows {rt['profiler_rows']}")
            say("another CUPTI client" in pt.stderr, f"{tag}: railscope saw torch.profiler arrive and said so")
    print(f"detach_check: {fails} failed")
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--seconds", type=float, default=14)
    ap.add_argument("--profile-at", type=float, default=0)
    ap.add_argument("--no-graph", action="store_true")
    ap.add_argument("--result", default="")
    ap.add_argument("--rs-build", default="build/gpu")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    ap.add_argument("--work", default="/tmp/rs-detach")
    a = ap.parse_args()
    if a.child:
        return workload(a)
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    return check(a)


if __name__ == "__main__":
    sys.exit(main() or 0)
