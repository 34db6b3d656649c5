#!/usr/bin/env python3
"""Tracer overhead measured in lock step: two processes of one workload share the GPU and take turns, one step each.

  bench/gpu/lockstep.py --workload transformer --steps 600 \
      --pairs untraced:untraced,untraced:default,default:untraced,min-full:full,full:min-full,untraced:torchprof

Each pair A:B starts both processes (modes as in bench/gpu/ablate.py: `railscope record` or not, environment),
each warms up alone, then the harness lets them run one timed step at a time: step i of A and step i of B are
neighbours in time (the order flips every step), so the host's drift (~10 % within minutes on the H200 VM) hits
both alike. Per pair: ratio = mean step of B / mean step of A, and a 95 % interval from 20 blocks of consecutive
steps (t-distribution over the blocks' ratios). An untraced:untraced pair measures what the method itself leaves
(its ratio should be 1 within its interval). Each side is pinned to its own CPU set (--cpus-a/--cpus-b; a pair
and its mirror swap sides). Exit time after the result file (as ablate.py) is kept per run.

A group of three or more (`--pairs untraced:default:untraced:default`) takes turns the same way (the order
rotates every step) on one shared CPU set (`--cpus-shared`, default 2-13 for groups: only one process runs at a
time, so a CPU set of its own per process would only add that set's bias); it starts up once for several
comparisons, and two processes of one mode in it measure the method's own noise (A/A) in the same minutes.

Writes $OUT/lockstep-<workload>.json (every step's duration) and prints a table; bench/gpu/lockstep_summary.py
pools pairs and groups."""
import argparse
import json
import math
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ablate  # noqa: E402  (MODES, workload_cmd, B)

T975 = {19: 2.093, 9: 2.262, 4: 2.776}
LIVE = []  # every workload process started (killed if the harness itself ends early)


def block_ci(a, b, nblocks=20):
    n = min(len(a), len(b))
    k = n // nblocks
    if k < 1:
        return float("nan"), float("nan")
    rs = [sum(b[i * k:(i + 1) * k]) / sum(a[i * k:(i + 1) * k]) for i in range(nblocks)]
    m = statistics.mean(rs)
    half = T975.get(nblocks - 1, 2.1) * statistics.stdev(rs) / math.sqrt(nblocks)
    return m, half


def spawn(mode, side, a, work, pair_tag):
    traced, env_extra, wargs = ablate.MODES[mode]
    tag = f"{pair_tag}-{side}-{mode}"
    res = os.path.join(work, tag + ".json")
    prefix = os.path.join(work, tag)
    for f in (".go", ".done"):
        if os.path.exists(prefix + f):
            os.unlink(prefix + f)
        os.mkfifo(prefix + f, 0o600)
    go = os.open(prefix + ".go", os.O_RDWR)  # O_RDWR: never blocks, and the child's open does not either
    done = os.open(prefix + ".done", os.O_RDWR)
    if mode == "torchprof" and a.workload == "resnet":
        wargs = ["--profile", f"{max(a.warmup - 5, 0)}:999999"]
    cmd = ablate.workload_cmd(a.workload, a, res) + wargs
    if traced:
        keep = mode in a.keep.split(",")
        cmd = [os.path.join(ablate.B, "railscope"), "record", "-q", "-o",
               os.path.join(work, tag if keep else tag + ".trace"), "--"] + cmd
    cpus = a.cpus_shared or (a.cpus_a if side == "A" else a.cpus_b)
    if cpus:
        cmd = ["taskset", "-c", cpus] + cmd
    env = dict(os.environ)
    env.update(env_extra)
    env.update(a.env_for.get(mode, {}))
    env["RS_LOCKSTEP"] = prefix
    ablate.crash_env(env)
    err = open(os.path.join(work, tag + ".err"), "w")
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    c = dict(mode=mode, side=side, tag=tag, p=p, go=go, done=done, res=res, err=err, traced=traced)
    LIVE.append(c)
    return c


def read1(c, timeout):
    """The process's next byte, or None after timeout seconds or once it has ended (a crashed process is seen at
    once, not after the whole timeout)."""
    end = time.monotonic() + timeout
    while True:
        r, _, _ = select.select([c["done"]], [], [], max(min(0.5, end - time.monotonic()), 0))
        if r:
            return os.read(c["done"], 1)
        if c["p"].poll() is not None or time.monotonic() >= end:
            return None


def kill(c):
    try:
        os.killpg(c["p"].pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_group(modes, k, a):
    """Two or more processes in turns. Each step every process runs once; the order rotates by one every step and
    is reversed every other round of rotations, so each process takes every position equally often."""
    tag = f"{a.workload}-p{k}"
    t0 = time.monotonic()
    cs = [spawn(m, chr(ord("A") + i), a, a.work, tag) for i, m in enumerate(modes)]
    n = len(cs)
    ok, unready = True, False
    for c in cs:  # warm-up, each on its own (they overlap on the GPU; not timed)
        left = a.run_cap - (time.monotonic() - t0)
        if read1(c, max(left, 1)) != b"r":
            print(f"{tag}: {c['mode']} never got ready (rc {c['p'].poll()})", flush=True)
            ok, unready = False, True
    t_ready = time.monotonic()
    if ok:
        for i in range(a.steps):
            order = cs[i % n:] + cs[:i % n]
            if (i // n) % 2:
                order = order[::-1]
            for c in order:
                os.write(c["go"], b"g")
                if read1(c, 60) != b"d":
                    print(f"{tag}: {c['mode']} stopped at step {i} (rc {c['p'].poll()})", flush=True)
                    ok = False
                    break
            if not ok:
                break
    t_steps = time.monotonic()
    t_res = {}
    ended = {}
    while len(ended) < n:  # all at once: each one's exit time counted from its own result file (as ablate.py)
        now = time.monotonic()
        for c in cs:
            if c["tag"] in ended:
                continue
            if c["tag"] not in t_res and os.path.exists(c["res"]) and os.path.getsize(c["res"]) > 0:
                t_res[c["tag"]] = now
            tr = t_res.get(c["tag"])
            if c["p"].poll() is not None:
                ended[c["tag"]] = now
            elif not ok or (tr and now - tr > a.exit_cap) or now - t_steps > a.exit_cap + 60:
                kill(c)
                c["p"].wait()
                ended[c["tag"]] = now
                c["killed"] = True
        time.sleep(0.01)
    out = []
    for c in cs:
        c["err"].close()
        tr = t_res.get(c["tag"])
        killed = c.get("killed", False)  # an exit cut short by the harness is no exit time
        r = dict(mode=c["mode"], side=c["side"], tag=c["tag"], rc=c["p"].returncode,
                 exit_s=(ended[c["tag"]] - tr) if tr and not killed else None, exit_valid=not killed, killed=killed)
        try:
            j = json.load(open(c["res"]))
            r["steps_ms"] = [d / 1e6 for _, d in j["steps_ns"]]
            # each step's start, CLOCK_MONOTONIC ns (the tracer's clock): lockstep_windows.py lines steps up with a
            # kept trace's sampling windows
            r["steps_t_ns"] = [t for t, _ in j["steps_ns"]]
            r["step_ms"] = j["step_ms"][0]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            r["steps_ms"] = None
        lines = open(os.path.join(a.work, c["tag"] + ".err")).read().splitlines()
        r["stderr"] = [s for s in lines if "railscope" in s or "mincupti" in s or "Error" in s][-12:]
        if r["rc"] != 0 and not killed:
            tdir = os.path.join(a.work, c["tag"] if c["mode"] in a.keep.split(",") else c["tag"] + ".trace")
            r["stderr_tail"] = ablate.crash_report(c["tag"], r["rc"], os.path.join(a.work, c["tag"] + ".err"),
                                                   tdir if c["traced"] else "", a.out)
        if c["traced"] and c["mode"] in a.keep.split(","):
            r["trace"] = os.path.join(a.work, c["tag"])
        os.close(c["go"])
        os.close(c["done"])
        shutil.rmtree(os.path.join(a.work, c["tag"] + ".trace"), ignore_errors=True)
        out.append(r)
    ok = ok and not any(r["steps_ms"] is None for r in out)
    row = dict(pair=":".join(modes), warm_s=t_ready - t0, steps_s=t_steps - t_ready, ok=ok, unready=unready)
    ex = [f"{r['exit_s']:.2f}" if r["exit_s"] is not None else "-" for r in out]
    if n == 2:  # the pair's layout (lockstep_summary.py reads both)
        ra, rb = out
        row.update(a=ra, b=rb)
        if ok:
            sa, sb = ra["steps_ms"][a.skip:], rb["steps_ms"][a.skip:]
            row["ratio"] = sum(sb) / sum(sa)
            row["ratio_ci_mean"], row["ratio_ci_half"] = block_ci(sa, sb)
            row["median_ratio"] = statistics.median(sb) / statistics.median(sa)
            row["mean_ms"] = [statistics.mean(sa), statistics.mean(sb)]
            print(f"{row['pair']:22s} A {row['mean_ms'][0]:7.3f} B {row['mean_ms'][1]:7.3f} ms  B/A {row['ratio']:.4f} "
                  f"+-{row['ratio_ci_half']:.4f} (blocks)  median-step ratio {row['median_ratio']:.4f}  "
                  f"exit s {ex[0]} {ex[1]}  [{row['warm_s']:.0f}+{row['steps_s']:.0f} s]", flush=True)
    else:
        row["procs"] = out
        if ok:
            for r in out:
                st = r["steps_ms"][a.skip:]
                r["mean_ms"], r["median_ms"] = statistics.mean(st), statistics.median(st)
            print(f"{row['pair']}: " + "  ".join(f"{r['side']} {r['mode']} {r['mean_ms']:.3f}" for r in out)
                  + f" ms  exit s {' '.join(ex)}  [{row['warm_s']:.0f}+{row['steps_s']:.0f} s]", flush=True)
    if not ok:
        print(f"{row['pair']:22s} FAILED  rc {' '.join(str(r['rc']) for r in out)}  "
              + " ".join(str(r["stderr"][-2:]) for r in out), flush=True)
    for r in out:
        for s in r["stderr"]:
            if "warn" in s.lower() or "error" in s.lower():
                print(f"    {r['side']} {s[:200]}")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="transformer")
    ap.add_argument("--pairs", default="untraced:untraced,untraced:default,default:untraced")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--skip", type=int, default=0, help="timed steps left out of the ratio (first ones)")
    ap.add_argument("--cpus-a", default="2-7")
    ap.add_argument("--cpus-b", default="8-13")
    ap.add_argument("--cpus-shared", default="", help="one CPU set for every process (groups of 3+: default 2-13)")
    ap.add_argument("--exit-cap", type=float, default=20)
    ap.add_argument("--run-cap", type=float, default=120, help="seconds a pair may take to get ready")
    ap.add_argument("--budget", type=float, default=1e9, help="start no new pair after this many seconds")
    ap.add_argument("--keep", default="", help="modes whose traces are kept under --work")
    ap.add_argument("--retry-unready", type=int, default=1,
                    help="groups run again, in all, when a process never got ready (start-up failure)")
    ap.add_argument("--env", action="append", default=[], help="MODE:VAR=VALUE, extra environment for one mode")
    ap.add_argument("--work", default="/tmp/rs-lockstep")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/rs-lockstep-out"))
    a = ap.parse_args()
    a.env_for = {}
    for e in a.env:
        m, kv = e.split(":", 1)
        k, v = kv.split("=", 1)
        a.env_for.setdefault(m, {})[k] = v
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    pairs = [p.split(":") for p in a.pairs.split(",")]
    if any(len(p) > 2 for p in pairs) and not a.cpus_shared:
        a.cpus_shared = "2-13"  # only one process runs at a time: a CPU set of its own would only add its bias
    for p in pairs:
        if len(p) < 2:
            sys.exit(f"lockstep: a group needs two modes or more: {':'.join(p)}")
        for m in p:
            if m not in ablate.MODES:
                sys.exit(f"lockstep: unknown mode {m}")
    t0 = time.monotonic()
    rows = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # so that the finally below runs
    try:
        run_all(pairs, a, rows, t0)
    finally:  # a harness that dies leaves no workload behind (they run in their own sessions)
        for c in LIVE:
            kill(c)
        save(a, rows)
    print(f"lockstep {a.workload}: {len(rows)} pairs in {time.monotonic() - t0:.0f} s", flush=True)


def save(a, rows):
    """After every group too: a device call cut off by its time limit still returns the groups it finished."""
    path = os.path.join(a.out, f"lockstep-{a.workload}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(dict(workload=a.workload, args={k: v for k, v in vars(a).items()}, pairs=rows), f)
    os.replace(path + ".tmp", path)


def run_all(pairs, a, rows, t0):
    """Each group's processes are named by its row in the result (<workload>-p<row>-...: done_when.py finds a kept
    report's group by it). A group that failed before its timed steps (a process never got ready) is run again, up
    to --retry-unready times in all: session 15's call lost a round of three to one process's start-up."""
    retries = a.retry_unready
    for modes in pairs:
        while True:
            if time.monotonic() - t0 > a.budget:
                print(f"budget: pairs from {':'.join(modes)} on not run", flush=True)
                return
            row = run_group(modes, len(rows), a)
            rows.append(row)
            save(a, rows)
            if row["ok"] or not row.get("unready") or retries <= 0:
                break
            retries -= 1
            print(f"{a.workload}-p{len(rows) - 1} failed before its timed steps: running {':'.join(modes)} again as "
                  f"p{len(rows)} (--retry-unready; {retries} more allowed)", flush=True)


if __name__ == "__main__":
    main()
