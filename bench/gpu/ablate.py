#!/usr/bin/env python3
"""railscope's GPU overhead and exit-time harness (runs on the H200 through bench/gpu/ablate.sh).

Each run is a separate process; modes alternate inside a round and every even round runs them in reverse, so
a drift over the call cancels in the round-paired ratios. Per run it records the workload's steady-state
step time (its JSON result) and how long the process took to END after writing that result ("exit", from the
moment the result file appears to the moment the whole command, `railscope record` included, has exited) —
the number the issue's "every mode exits within 2 s of its untraced twin" is about.

A run whose exit exceeds --diag-after seconds is looked at once (per harness): per-thread CPU time over
2 s, wait channels and system calls from /proc, then `cuda-gdb -batch` backtraces of every thread; it is
killed after --exit-cap seconds.

  bench/gpu/ablate.py --workload transformer --rounds 3 --modes untraced,default,full,min-full --out $OUT
Modes (MODES below): the environment each one sets and whether it runs under `railscope record`.
"""
import argparse
import glob
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
B = os.environ.get("RS_BUILD", os.path.join(TOP, "build/gpu"))
MINCUPTI = os.environ.get("MINCUPTI", os.path.join(B, "mincupti.so"))

# name: (runs under railscope record?, extra environment, extra workload args)
MODES = {
    "untraced": (False, {}, []),
    "torchprof": (False, {}, ["--profile"]),
    "nocuda": (True, {"RAILSCOPE_EVENTS": "all,-cuda"}, []),
    # ResNet-50 DDP's default cost by part (session 12 plan): without the NCCL family (API wrappers, profiler plugin,
    # NCCL's INFO log that RAILSCOPE_NCCL_LOG=auto turns on), without NVTX
    "nonccl": (True, {"RAILSCOPE_EVENTS": "all,-nccl"}, []),
    "default-nolog": (True, {"RAILSCOPE_NCCL_LOG": "off"}, []),  # no NCCL_DEBUG=INFO log to read (s21)
    "nonvtx": (True, {"RAILSCOPE_EVENTS": "all,-nvtx"}, []),
    "ncclnolog": (True, {"RAILSCOPE_NCCL_LOG": "off"}, []),  # the NCCL family without NCCL's INFO log
    "default": (True, {}, []),
    # ResNet-50 DDP only: cuDNN's heuristics instead of its autotuner (session 25). Lock-step processes warm up
    # together on one GPU, so each one's autotuned algorithms depend on what its neighbours ran meanwhile: does that
    # make the ~2.5 % per-process spread of the ResNet groups, and does tracing during the autotuning shift it?
    "untraced-nb": (False, {}, ["--no-cudnn-benchmark"]),
    "default-nb": (True, {}, ["--no-cudnn-benchmark"]),
    # ResNet's ~1 % that no part's ablation located (session 23): railscope present but tracing nothing, under
    # `railscope record` (preload, CUDA/NVTX injection, NCCL profiler plugin all set; RAILSCOPE_DISABLE makes each
    # entry return at once), and with the writer running but every event family off
    "disabled": (True, {"RAILSCOPE_DISABLE": "1"}, []),
    "coreonly": (True, {"RAILSCOPE_EVENTS": "core"}, []),
    "default-nodetach": (True, {"RAILSCOPE_CUDA_DETACH": "off"}, []),  # CUPTI attached idle between windows (s7)
    "kernels-off-nodetach": (True, {"RAILSCOPE_CUDA_KERNELS": "off", "RAILSCOPE_CUDA_DETACH": "off"}, []),
    "old-default": (True, {"RAILSCOPE_CUDA_COPIES": "cupti"}, []),
    "cupti-copies": (True, {"RAILSCOPE_CUDA_COPIES": "cupti", "RAILSCOPE_CUDA_KERNELS": "off"}, []),
    "default-noinit": (True, {"RAILSCOPE_CUDA_ABLATE": "noinitwindow"}, []),  # no kernel window at CUDA init
    "kernels-off-nots": (True, {"RAILSCOPE_CUDA_KERNELS": "off", "RAILSCOPE_CUDA_ABLATE": "notscallback"}, []),
    "kernels-off": (True, {"RAILSCOPE_CUDA_KERNELS": "off"}, []),  # CUPTI registered, nothing ever enabled
    "api-copies": (True, {"RAILSCOPE_CUDA_COPIES": "api", "RAILSCOPE_CUDA_KERNELS": "off"}, []),
    "api-sampled": (True, {"RAILSCOPE_CUDA_COPIES": "api", "RAILSCOPE_CUDA_KERNELS": "sampled"}, []),
    "api-win20": (True, {"RAILSCOPE_CUDA_COPIES": "api", "RAILSCOPE_CUDA_KERNEL_WINDOW": "300/1500"}, []),
    "default-w7": (True, {"RAILSCOPE_CUDA_KERNEL_WINDOW": "500/30000/7000"}, []),  # first window on steady steps
    "default-w10": (True, {"RAILSCOPE_CUDA_KERNEL_WINDOW": "500/30000/10000"}, []),  # another position (s11)
    # the same window with CUPTI left attached between windows: does re-attaching lose kernels? (session 11)
    "default-w7-nodetach": (True, {"RAILSCOPE_CUDA_KERNEL_WINDOW": "500/30000/7000", "RAILSCOPE_CUDA_DETACH": "off"},
                            []),
    # ResNet-50's steady steps start ~7 s after CUDA init (session 11; its 10-16 s first step in sessions 10-11 was
    # a fresh machine's JIT cache being filled, which overhead.sh now does first)
    "default-w15": (True, {"RAILSCOPE_CUDA_KERNEL_WINDOW": "500/30000/15000"}, []),
    # only the window at CUDA init and the first at 3 s (the next is due after the run): in a lock-step group of N a
    # process gets 1/N of the wall time, so a wall-clock window schedule gives it N times a lone run's windows per
    # step; a window's fixed costs (attach, enable on loaded modules, detach) scale with that (session 23)
    "default-w240": (True, {"RAILSCOPE_CUDA_KERNEL_WINDOW": "500/240000/3000"}, []),
    # windows every 5 s (session 20's tailcost: the report measures its windows' and detach tails' steps), with the
    # detach armed one tick after a window's close (since session 20) or two (before)
    "default-w5s": (True, {"RAILSCOPE_CUDA_KERNEL_WINDOW": "500/5000/3000"}, []),
    "default-w5s-detach2": (True, {"RAILSCOPE_CUDA_KERNEL_WINDOW": "500/5000/3000", "RAILSCOPE_CUDA_ABLATE": "detach2"},
                            []),
    # the arm at the tick after the close (sessions 20-31) against the arm once the window's records are in (32)
    "default-w5s-tickarm": (True, {"RAILSCOPE_CUDA_KERNEL_WINDOW": "500/5000/3000", "RAILSCOPE_CUDA_ABLATE": "tickarm"},
                            []),
    "default-tickarm": (True, {"RAILSCOPE_CUDA_ABLATE": "tickarm"}, []),
    "full": (True, {"RAILSCOPE_CUDA_KERNELS": "all"}, []),
    "full-noconvert": (True, {"RAILSCOPE_CUDA_KERNELS": "all", "RAILSCOPE_CUDA_ABLATE": "noconvert"}, []),
    "full-notick": (True, {"RAILSCOPE_CUDA_KERNELS": "all", "RAILSCOPE_CUDA_ABLATE": "notickflush"}, []),
    # full mode's cost above CUPTI's floor on ResNet-50 DDP (+2 to +7.5 points a group, session 16): by part
    "full-nonccl": (True, {"RAILSCOPE_CUDA_KERNELS": "all", "RAILSCOPE_EVENTS": "all,-nccl"}, []),
    "full-nots": (True, {"RAILSCOPE_CUDA_KERNELS": "all", "RAILSCOPE_CUDA_ABLATE": "notscallback"}, []),
    # session 18: with the tick's flush made rare, full stayed 1.6-2.1 points above the floor; CUPTI's buffer size?
    "full-buf8m": (True, {"RAILSCOPE_CUDA_KERNELS": "all", "RAILSCOPE_CUDA_ABLATE": "buf8m"}, []),
    "full-nonvtx": (True, {"RAILSCOPE_CUDA_KERNELS": "all", "RAILSCOPE_EVENTS": "all,-nvtx"}, []),
    "min-none": (False, {"CUDA_INJECTION64_PATH": MINCUPTI, "MINCUPTI_KINDS": "none"}, []),
    "min-memcpy": (False, {"CUDA_INJECTION64_PATH": MINCUPTI, "MINCUPTI_KINDS": "memcpy"}, []),
    "min-kernel": (False, {"CUDA_INJECTION64_PATH": MINCUPTI, "MINCUPTI_KINDS": "kernel"}, []),
    "min-full": (False, {"CUDA_INJECTION64_PATH": MINCUPTI, "MINCUPTI_KINDS": "memcpy,memcpy2,memset,kernel"}, []),
    # CUPTI's activity attributes on the floor (session 21; bench/gpu/mincupti.c MINCUPTI_ATTRS): does any lower
    # CUPTI's own per-kernel cost? pinned host profiling memory; 16 device buffers of 32 MiB pre-allocated; CUPTI's
    # own flush every 100 ms (device buffers back to the reuse pool sooner)
    "min-full-pinned": (False, {"CUDA_INJECTION64_PATH": MINCUPTI, "MINCUPTI_KINDS": "memcpy,memcpy2,memset,kernel",
                                "MINCUPTI_ATTRS": "pinned=1"}, []),
    "min-full-pre": (False, {"CUDA_INJECTION64_PATH": MINCUPTI, "MINCUPTI_KINDS": "memcpy,memcpy2,memset,kernel",
                             "MINCUPTI_ATTRS": "prealloc=16,devbuf=32"}, []),
    "min-full-fp": (False, {"CUDA_INJECTION64_PATH": MINCUPTI, "MINCUPTI_KINDS": "memcpy,memcpy2,memset,kernel",
                            "MINCUPTI_ATTRS": "flushperiod=100"}, []),
    "stub-slow5": (False, {"STUB_SLOW": "0.05"}, []),  # the stub workload with a planted 5 % cost (self-test)
    "stub-slow20": (False, {"STUB_SLOW": "0.2"}, []),  # a planted 20 % (hostcost.py's self-test)
    "stub-crash": (False, {"STUB_CRASH": "1"}, []),  # dies of SIGSEGV in its warm-up (the crash report's test)
    "stub-crash-once": (False, {"STUB_CRASH_ONCE": "stub-crash-once.marker"}, []),  # the first run only (in cwd)
    # steps twice as long on timed steps 100-119 only: a window-like cost in a few steps (lockstep_bins.py's test)
    "stub-slowwin": (False, {"STUB_SLOW": "1", "STUB_SLOW_STEPS": "100:120"}, []),
}


def crash_env(env):
    """A workload that dies of a signal says where (session 13: a lock-step default process died of SIGSEGV in its
    warm-up, and its stderr held nothing): Python's faulthandler, and bench/gpu/segvbt.so (native backtrace) when
    overhead.sh built it (RS_SEGVBT). Signal handlers only, the same in every mode; railscope record keeps it in
    LD_PRELOAD behind its own library."""
    env["PYTHONFAULTHANDLER"] = "1"
    sb = os.environ.get("RS_SEGVBT", "")
    if sb and os.path.exists(sb):
        env["LD_PRELOAD"] = sb + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    return env


def crash_report(tag, rc, errpath, tracedir, outdir):
    """A run that ended other than 0 (not killed by the harness): the end of its stderr printed, and its trace
    (if any) kept as OUTDIR/crash-TAG.tgz, one file (a device call returns few)."""
    try:
        tail = open(errpath, errors="replace").read().splitlines()[-40:]
    except OSError:
        tail = []
    print(f"{tag}: ended with {rc}; the end of its stderr ({len(tail)} lines):", flush=True)
    for s in tail:
        print("    | " + s[:240])
    if tracedir and os.path.isdir(tracedir):
        subprocess.run(["tar", "czf", os.path.join(outdir, f"crash-{tag}.tgz"), "-C", os.path.dirname(tracedir),
                        os.path.basename(tracedir), "-C", os.path.dirname(errpath), os.path.basename(errpath)],
                       check=False)
        print(f"{tag}: its trace -> crash-{tag}.tgz", flush=True)
    return tail


def workload_cmd(w, a, out):
    if w == "transformer":
        return ["python3", os.path.join(TOP, "bench/gpu/transformer.py"), "--steps", str(a.steps), "--warmup",
                str(a.warmup), "--out", out]
    if w == "launch":  # host-bound calls: per-call cost (bench/gpu/launchbench.py)
        return ["python3", os.path.join(TOP, "bench/gpu/launchbench.py"), "--steps", str(a.steps), "--warmup",
                str(a.warmup), "--out", out]
    if w == "stub":  # harness self-test without a GPU (tests/bench/)
        return ["python3", os.path.join(TOP, "bench/gpu/stub_workload.py"), "--steps", str(a.steps), "--warmup",
                str(a.warmup), "--out", out]
    if w == "resnet":
        return ["python3", os.path.join(TOP, "tests/gpu/train.py"), "--phases", f"bench:{a.steps}", "--warmup",
                str(a.warmup), "--out", out]
    sys.exit(f"unknown workload {w}")


diagnosed = [False]


def stacks(pgid, outdir, tag):
    """Native backtraces of every thread of the workload (the python3 process in the run's session), by cuda-gdb."""
    pids = []
    for st in glob.glob("/proc/[0-9]*/stat"):
        try:
            f = open(st).read().rsplit(")", 1)[1].split()
            comm = open(os.path.dirname(st) + "/comm").read().strip()
        except OSError:
            continue
        if int(f[2]) == pgid and comm.startswith("python"):
            pids.append(int(os.path.basename(os.path.dirname(st))))
    if not pids or not shutil.which("cuda-gdb"):
        print(f"{tag}: no stacks (pids {pids}, cuda-gdb {shutil.which('cuda-gdb')})", flush=True)
        return
    r = subprocess.run(["timeout", "60", "cuda-gdb", "-p", str(min(pids)), "-batch", "-ex", "thread apply all bt 25"],
                       capture_output=True, text=True)
    open(os.path.join(outdir, f"stacks-{tag}.txt"), "w").write(r.stdout + r.stderr)
    print(f"{tag}: stacks of pid {min(pids)}: {len(r.stdout.splitlines())} lines -> stacks-{tag}.txt", flush=True)


def diag(pid, outdir, tag):
    """Where is a process that does not end? Per-thread CPU over 2 s, wchan, syscall; cuda-gdb backtraces."""
    lines = [f"== {tag}: pid {pid}"]

    def cpu():
        d = {}
        for t in glob.glob(f"/proc/{pid}/task/*"):
            try:
                f = open(t + "/stat").read().rsplit(")", 1)[1].split()
                d[os.path.basename(t)] = int(f[11]) + int(f[12])
            except OSError:
                pass
        return d
    c0 = cpu()
    time.sleep(2)
    c1 = cpu()
    for tid in sorted(c1, key=lambda k: -(c1[k] - c0.get(k, 0))):
        try:
            comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            wchan = open(f"/proc/{pid}/task/{tid}/wchan").read().strip()
            sc = open(f"/proc/{pid}/task/{tid}/syscall").read().strip()[:40]
        except OSError:
            continue
        lines.append(f"  tid {tid} {comm:16s} cpu+{c1[tid] - c0.get(tid, 0):4d} ticks wchan={wchan} syscall={sc}")
    if not diagnosed[0] and shutil.which("cuda-gdb"):
        diagnosed[0] = True
        try:
            r = subprocess.run(["timeout", "60", "cuda-gdb", "-p", str(pid), "-batch", "-ex", "info threads", "-ex",
                                "thread apply all bt 30"], capture_output=True, text=True, timeout=70)
            open(os.path.join(outdir, f"gdb-{tag}.txt"), "w").write(r.stdout + r.stderr)
            lines.append(f"  cuda-gdb: {len(r.stdout.splitlines())} lines -> gdb-{tag}.txt")
        except Exception as e:  # noqa: BLE001 - diagnostics only
            lines.append(f"  cuda-gdb failed: {e}")
    txt = "\n".join(lines)
    print(txt, flush=True)
    with open(os.path.join(outdir, "exit-diag.txt"), "a") as f:
        f.write(txt + "\n")


def run_one(mode, rnd, a, work):
    traced, env_extra, wargs = MODES[mode]
    tag = f"{a.workload}-{mode}-{rnd}"
    res_path = os.path.join(work, tag + ".json")
    if mode == "torchprof" and a.workload == "resnet":
        wargs = ["--profile", f"{max(a.warmup - 5, 0)}:999999"]
    if a.workload == "stub":
        wargs = []
    cmd = workload_cmd(a.workload, a, res_path) + wargs
    if traced:
        quiet = [] if mode in a.debug_modes.split(",") else ["-q"]
        cmd = [os.path.join(B, "railscope"), "record"] + quiet + ["-o", os.path.join(work, tag), "--"] + cmd
    if a.cpus:
        cmd = ["taskset", "-c", a.cpus] + cmd
    env = dict(os.environ)
    env.update(env_extra)
    if mode in a.debug_modes.split(","):
        env["RAILSCOPE_LOG"] = "debug"
    crash_env(env)
    errf = open(os.path.join(work, tag + ".err"), "w")
    t_start = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True)
    t_res = None
    diag_done = False
    stacks_at = [float(x) for x in a.stacks_at.split(",") if x] if mode == a.stacks_mode and rnd == 1 else []
    while True:
        rc = p.poll()
        now = time.monotonic()
        if t_res is None and os.path.exists(res_path) and os.path.getsize(res_path) > 0:
            t_res = now
        if rc is not None:
            break
        if now - t_start > a.run_cap or (t_res is not None and now - t_res > a.exit_cap):
            print(f"{tag}: killed ({now - t_start:.0f} s, result {'yes' if t_res else 'no'})", flush=True)
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = "killed"
            break
        if stacks_at and now - t_start >= stacks_at[0]:  # where a slow phase spends its time (session 11)
            stacks(p.pid, a.out, f"{tag}-at{stacks_at.pop(0):g}s")
        if t_res is not None and not diag_done and now - t_res > a.diag_after:
            diag_done = True
            try:
                pid = json.load(open(res_path))["pid"]
                diag(pid, a.out, tag)
            except (OSError, ValueError, KeyError) as e:
                print(f"{tag}: no diagnosis ({e})")
        time.sleep(0.02)
    t_end = time.monotonic()
    errf.close()
    r = dict(mode=mode, round=rnd, rc=rc, wall_s=t_end - t_start, exit_s=(t_end - t_res) if t_res else None)
    try:
        j = json.load(open(res_path))
        r["step_ms"] = j["step_ms"][0]
        r["step_ms_median"] = j.get("step_ms_median")
        r["steps_ns"] = j.get("steps_ns")
        r["finite"] = j.get("finite", True)
        ph = (j.get("phases") or [{}])[0]  # train.py: launch to the first timed step (start-up and warm-up steps)
        if "timed_start_ns" in ph and "start_ns" in ph:
            r["warmup_s"] = (ph["timed_start_ns"] - ph["start_ns"]) * 1e-9
    except (OSError, ValueError, KeyError, IndexError):
        r["step_ms"] = None
    err = open(os.path.join(work, tag + ".err")).read().splitlines()
    r["stderr"] = [s for s in err if "railscope" in s or "mincupti" in s][-12:]
    if rc not in (0, "killed"):
        r["stderr_tail"] = crash_report(tag, rc, os.path.join(work, tag + ".err"),
                                        os.path.join(work, tag) if traced else "", a.out)
    step = f"{r['step_ms']:.3f} ms" if r["step_ms"] else "-"
    ex = f"{r['exit_s']:.2f} s" if r["exit_s"] is not None else "-"
    wu = f"  warm-up {r['warmup_s']:5.2f} s" if "warmup_s" in r else ""
    print(f"{tag:34s} step {step:>10s}  exit {ex:>8s}  wall {r['wall_s']:5.1f} s  rc {rc}{wu}", flush=True)
    for s in r["stderr"]:
        if "debug" in s or "mincupti" in s or "warn" in s.lower():
            print("    " + s[:200])
    if traced and not (rnd == 1 and mode in a.keep.split(",")):
        shutil.rmtree(os.path.join(work, tag), ignore_errors=True)
    return r


def summary(runs, modes):
    by = {}
    for r in runs:
        by.setdefault(r["mode"], {})[r["round"]] = r
    base = by.get("untraced", {})
    rows = []
    hdr = f"{'mode':16s} {'step ms (per round)':34s} {'ratio med':>9s} {'paired ratios':28s} {'exit s (per round)':24s}"
    print(hdr)
    for m in modes:
        d = by.get(m, {})
        steps = [d[k]["step_ms"] for k in sorted(d) if d[k]["step_ms"]]
        paired = [d[k]["step_ms"] / base[k]["step_ms"] for k in sorted(d)
                  if d[k]["step_ms"] and k in base and base[k]["step_ms"]]
        exits = [d[k]["exit_s"] for k in sorted(d) if d[k]["exit_s"] is not None]
        bexit = {k: base[k]["exit_s"] for k in base if base[k]["exit_s"] is not None}
        dexit = [d[k]["exit_s"] - bexit[k] for k in sorted(d) if d[k]["exit_s"] is not None and k in bexit]
        med = statistics.median(paired) if paired else float("nan")
        pm = [d[k]["step_ms_median"] / base[k]["step_ms_median"] for k in sorted(d)
              if d[k].get("step_ms_median") and k in base and base[k].get("step_ms_median")]
        rows.append(dict(mode=m, step_ms=steps, paired=paired, ratio_median=med, exit_s=exits, exit_minus_untraced=dexit,
                         paired_stepmedian=pm))
        print(f"{m:16s} {' '.join(f'{x:7.3f}' for x in steps):34s} {med:9.4f} "
              f"{' '.join(f'{x:.4f}' for x in paired):28s} {' '.join(f'{x:5.2f}' for x in exits):24s}"
              + (f" per-step-median ratios {' '.join(f'{x:.4f}' for x in pm)}" if pm else ""))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="transformer")
    ap.add_argument("--modes", default="untraced,default,full,min-full")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--exit-cap", type=float, default=40)
    ap.add_argument("--diag-after", type=float, default=8)
    ap.add_argument("--run-cap", type=float, default=150)
    ap.add_argument("--budget", type=float, default=1e9, help="start no new round after this many seconds")
    ap.add_argument("--debug-modes", default="", help="modes run with RAILSCOPE_LOG=debug")
    ap.add_argument("--stacks-at", default="", help="seconds after launch (comma list) to take cuda-gdb stacks...")
    ap.add_argument("--stacks-mode", default="", help="...of this mode's first round")
    ap.add_argument("--keep", default="", help="modes whose round-1 trace is kept (in --work)")
    ap.add_argument("--cpus", default="", help="taskset -c CPUS for every run (the same cores each time)")
    ap.add_argument("--work", default="/tmp/rs-ablate")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/rs-ablate-out"))
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    modes = a.modes.split(",")
    for m in modes:
        if m not in MODES:
            sys.exit(f"unknown mode {m}")
    t0 = time.monotonic()
    runs = []
    for rnd in range(1, a.rounds + 1):
        if time.monotonic() - t0 > a.budget:
            print(f"budget: no round {rnd}")
            break
        order = modes if rnd % 2 else modes[::-1]
        for m in order:
            runs.append(run_one(m, rnd, a, a.work))
    rows = summary(runs, modes)
    with open(os.path.join(a.out, f"ablate-{a.workload}.json"), "w") as f:
        json.dump(dict(workload=a.workload, args=vars(a), runs=runs, summary=rows), f, indent=1)
    kept = [f"{a.workload}-{m}-1" for m in a.keep.split(",") if m and os.path.isdir(os.path.join(a.work, f"{a.workload}-{m}-1"))]
    if kept:
        subprocess.run(["tar", "czf", os.path.join(a.out, f"traces-{a.workload}.tgz"), "-C", a.work] + kept)


if __name__ == "__main__":
    main()
