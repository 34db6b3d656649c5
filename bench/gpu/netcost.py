#!/usr/bin/env python3
"""What the default capture costs NCCL's network path: AllReduce between ranks that NCCL believes are on different
hosts (each rank on cuda:0 with its own NCCL_HOSTID, so every byte goes through NCCL's NET transport and its proxy
thread: NET/Socket here, NET/IB on a cluster). ResNet-50 DDP at world size 1 (issue 16's workload) never runs a
proxy, so the profiler plugin's busiest events (ProxyStep: a start, state updates and a stop per network chunk, on
the proxy thread that drives the network) had never been timed on a real NCCL.

  bench/gpu/netcost.py --rounds 6 --modes untraced,default,noproxystep,nonccl --sizes 67108864,1048576

A job = WORLD ranks (default 2) started together, each warming up, then ITERS timed AllReduces of each size in
turn (each synchronised, timed on the host: CLOCK_MONOTONIC around all_reduce + cuda.synchronize). The modes
alternate job by job, the order reversed every other round, so that the host's drift hits every mode alike; per
round and size, ratio = a mode's mean op time / the untraced job's of the same round; pooled: the mean of the
rounds' ratios with a t interval. The first trace of each traced mode is summarised with `railscope info`
(events by kind: ProxySteps per AllReduce), then removed. Writes OUT/netcost.json.

--dry: the ranks sleep instead of calling NCCL (the harness itself, without torch or a GPU; tests/gpu/netcost.t)."""
import argparse
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
B = os.environ.get("RS_BUILD", os.path.join(TOP, "build/gpu"))

# name: (under railscope record?, extra environment)
MODES = {
    "untraced": (False, {}),
    "default": (True, {}),
    # the default without ProxyStep events (Colls and ProxyOps kept). Not `net` either: NCCL starts a ProxyStep
    # when ProxyStep or NetPlugin is enabled (a net event's parent; src/plugin/profiler.cc), so session 25's first
    # noproxystep (mask group,coll,p2p,proxyop,net) recorded every ProxyStep
    "noproxystep": (True, {"RAILSCOPE_NCCL_MASK": "group,coll,p2p,proxyop"}),
    "nonccl": (True, {"RAILSCOPE_EVENTS": "all,-nccl"}),  # the NCCL family off (no plugin events, no INFO log)
    "stub-slow20": (False, {"NETCOST_DRY_SLOW": "0.2"}),  # --dry only: every op 20 % longer (the harness's self-test)
}
T975 = {1: 12.71, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


def worker(a):
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    sizes = [int(s) for s in a.sizes.split(",")]
    times = {s: [] for s in sizes}
    if a.dry:
        slow = 1 + float(os.environ.get("NETCOST_DRY_SLOW", "0"))
        for _ in range(a.iters):
            for s in sizes:
                t0 = time.monotonic_ns()
                # 10 ms a base op: a loaded host's wake-up delay (several ms under the test suite's ASan runs) is
                # added to every sleep alike and shrank a planted 20 % on 2 ms ops to 8 % (session 26)
                time.sleep((0.010 + s / 2e10) * slow)
                times[s].append(time.monotonic_ns() - t0)
    else:
        import torch
        import torch.distributed as dist
        os.environ["NCCL_HOSTID"] = f"rsnet-host{rank}"  # one "host" per rank: NCCL's NET transport
        torch.cuda.set_device(0)
        dev = torch.device("cuda", 0)
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
        bufs = {s: torch.ones(s // 4, device=dev, dtype=torch.float32) for s in sizes}
        for _ in range(a.warmup):
            for s in sizes:
                dist.all_reduce(bufs[s])
        torch.cuda.synchronize()
        dist.barrier()
        for _ in range(a.iters):
            for s in sizes:
                t0 = time.monotonic_ns()
                dist.all_reduce(bufs[s])
                torch.cuda.synchronize()
                times[s].append(time.monotonic_ns() - t0)
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0:
        with open(a.out, "w") as f:
            json.dump({"sizes": sizes, "times_ns": {str(s): v for s, v in times.items()}}, f)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def job(a, mode, tag):
    """One job of a.world ranks in this mode; returns ({size: [ns...]}, trace dir or None, wall seconds)."""
    traced, env_extra = MODES[mode]
    res = os.path.join(a.work, tag + ".json")
    tdir = os.path.join(a.work, tag + ".trace")
    inner = [sys.executable, os.path.abspath(__file__), "--ranks", "--world", str(a.world), "--sizes", a.sizes,
             "--iters", str(a.iters), "--warmup", str(a.warmup), "--out", res] + (["--dry"] if a.dry else [])
    cmd = ([os.path.join(B, "railscope"), "record", "-q", "-o", tdir, "--"] if traced else []) + inner
    env = dict(os.environ)
    env.update(env_extra)
    t0 = time.monotonic()
    err = open(os.path.join(a.work, tag + ".err"), "w")
    try:
        rc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, timeout=a.job_cap).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    err.close()
    wall = time.monotonic() - t0
    try:
        j = json.load(open(res))
        return {int(s): v for s, v in j["times_ns"].items()}, (tdir if traced else None), wall, rc
    except (OSError, ValueError, KeyError):
        tail = open(os.path.join(a.work, tag + ".err")).read().splitlines()[-5:]
        print(f"{tag}: no result (rc {rc}): " + " | ".join(tail), flush=True)
        return None, (tdir if traced else None), wall, rc


def ranks(a):
    """The job itself: a.world rank processes on one port, all waited for (rank 0 writes the result)."""
    port = str(free_port())
    ps = []
    for r in range(a.world):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(a.world), LOCAL_RANK=str(r), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port)
        ps.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "--sizes", a.sizes,
                                    "--iters", str(a.iters), "--warmup", str(a.warmup), "--out", a.out]
                                   + (["--dry"] if a.dry else []), env=env))
    rcs = [p.wait() for p in ps]
    sys.exit(max(rcs) if all(rc >= 0 for rc in rcs) else 1)


def summarise(path):
    """`railscope info` of a kept trace: its totals, drops and NCCL event counts by kind (lower-case kind names)."""
    try:
        out = subprocess.run([os.path.join(B, "railscope"), "info", path], capture_output=True, text=True,
                             timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return [f"railscope info failed: {e}"]
    return [ln.strip() for ln in out.splitlines() if any(k in ln.lower() for k in ("nccl", "drop", "events:", "ibv_"))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default="untraced,default,noproxystep,nonccl")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--sizes", default="67108864,1048576", help="AllReduce sizes in bytes (fp32), comma list")
    ap.add_argument("--iters", type=int, default=150)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--budget", type=float, default=420, help="seconds: no round starts after this")
    ap.add_argument("--job-cap", type=float, default=120, help="seconds before a job is killed")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/rs-netcost-out"))
    ap.add_argument("--work", default="/tmp/rs-netcost")
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--ranks", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    if a.ranks:
        return ranks(a)
    modes = a.modes.split(",")
    for m in modes:
        if m not in MODES:
            ap.error(f"unknown mode {m} (known: {', '.join(MODES)})")
    if "untraced" not in modes:
        ap.error("--modes must include untraced (the reference)")
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    t_start = time.monotonic()
    rounds, info = [], {}
    for r in range(a.rounds):
        if r and time.monotonic() - t_start > a.budget:
            print(f"budget reached after {r} rounds", flush=True)
            break
        order = modes if r % 2 == 0 else modes[::-1]
        row = {}
        for m in order:
            times, tdir, wall, rc = job(a, m, f"r{r}-{m}")
            row[m] = {"rc": rc, "wall_s": wall,
                      "mean_us": {str(s): statistics.mean(v) / 1e3 for s, v in times.items()} if times else None,
                      "median_us": {str(s): statistics.median(v) / 1e3 for s, v in times.items()} if times else None}
            if tdir and m not in info and times:
                info[m] = summarise(tdir)
            if tdir:
                subprocess.run(["rm", "-rf", tdir])
        rounds.append(row)
        print(f"round {r}: " + "  ".join(
            f"{m} " + "/".join(f"{row[m]['mean_us'][str(s)]:.0f}" for s in map(int, a.sizes.split(",")))
            if row[m]["mean_us"] else f"{m} -" for m in modes) + " us", flush=True)
    print(f"\nmean AllReduce time against the untraced job of the same round ({len(rounds)} rounds, "
          f"world {a.world}, {'dry' if a.dry else 'NCCL NET'})")
    summary = {}
    for s in a.sizes.split(","):
        for m in modes:
            if m == "untraced":
                continue
            rs = [row[m]["mean_us"][s] / row["untraced"]["mean_us"][s] for row in rounds
                  if row[m]["mean_us"] and row["untraced"]["mean_us"]]
            if not rs:
                continue
            mean = statistics.mean(rs)
            half = T975.get(len(rs) - 1, 2.2) * statistics.stdev(rs) / math.sqrt(len(rs)) if len(rs) > 1 else math.nan
            summary[f"{m}/{s}"] = dict(n=len(rs), ratio=mean, ci_half=half, per_round=rs)
            print(f"  {int(s):>10d} B  {m:12s} {mean:.4f} [{mean - half:.4f}, {mean + half:.4f}]  "
                  + " ".join(f"{x:.3f}" for x in rs))
    for m, lines in info.items():
        print(f"\nthe first {m} job's trace (railscope info):")
        for ln in lines[:40]:
            print("  " + ln)
    json.dump(dict(args=vars(a), rounds=rounds, summary=summary, info=info),
              open(os.path.join(a.out, "netcost.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
