#!/usr/bin/env python3
"""The NCCL profiler plugin driven as NCCL 2.28 (v5 table) and 2.27 (v4 table) drive it (plugin_driver.c):
init per communicator, Group/Coll/P2p, ProxyOp/ProxyStep with NCCL's state sequences and sizes, IB QP
net-plugin events, KernelCh; the trace must hold every event with its parent links intact. And as NCCL 2.23-2.26
(v1-v3 tables): no communicator at init (its hash in each Coll/P2p), v1's enum codes, step sizes from the op's
running total."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

DRIVER = os.path.join(NCCL_BIN, "plugin_driver")
need(LIB, CLI, DRIVER)
plan(78)
NCOLL = 3


def drive(tag, version, env):
    out = os.path.join(T, tag)
    e = {"NCCL_PROFILER_PLUGIN": LIB}
    e.update(env)
    p = run([DRIVER, version, str(NCOLL)], out, e)
    ok(p.returncode == 0, f"{tag}: driver ran, every callback returned ncclSuccess", p.stdout + p.stderr)
    return p, events(out)


def check_tree(tag, evs, with_p2p, with_kch):
    colls = kind(evs, "nccl_coll")
    groups = {g["handle"]: g for g in kind(evs, "nccl_group")}
    ops = {o["handle"]: o for o in kind(evs, "nccl_proxy_op")}
    steps = {s["handle"]: s for s in kind(evs, "nccl_proxy_step")}
    coll_h = {c["handle"]: c for c in colls}
    is_(len(colls), 2 * NCOLL, f"{tag}: one Coll per collective per communicator")
    ok(all(c["func"] == "AllReduce" and c["algo"] == "RING" and c["proto"] == "SIMPLE" and c["nchannels"] == 2
           and c["nwarps"] == 16 and c["datatype"] == "ncclFloat32" and c["count"] == 1048576 and c["end"] >= c["ts_ns"]
           for c in colls), f"{tag}: Coll func/algo/proto/nChannels/nWarps/datatype/count as NCCL gave them", colls[:2])
    is_(sorted((c["comm_hash"], c["seq"]) for c in colls),
        sorted((h, s) for h in ("0x1111", "0x2222") for s in range(NCOLL)), f"{tag}: (comm_hash, seq) of every Coll")
    ok(all(c["parent"] in groups and groups[c["parent"]]["comm_hash"] == c["comm_hash"] for c in colls),
       f"{tag}: every Coll's parent is its Group", colls[:2])
    is_(len(ops), 2 * NCOLL * 2 * 2, f"{tag}: a send and a receive ProxyOp per channel")
    ok(all(o["parent"] in coll_h and o["nsteps"] == 4 and o["chunk_size"] == 4194304 for o in ops.values()),
       f"{tag}: ProxyOps hang under their Coll, with nSteps and chunkSize", list(ops.values())[:2])
    is_(len(steps), len(ops) * 4, f"{tag}: four ProxySteps per ProxyOp")
    ok(all(s["parent"] in ops and s["is_send"] == ops[s["parent"]]["is_send"] and s["trans_size"] == 524288
           for s in steps.values()), f"{tag}: ProxySteps under their op, direction and transSize kept",
       list(steps.values())[:2])
    states = kind(evs, "nccl_proxy_state")
    want = sorted([19] * len(ops) + [8, 20, 9, 10, 11, 12] * (len(steps) // 2))
    is_(sorted(s["state"] for s in states), want, f"{tag}: every state transition recorded once")
    ok(all(s["trans_size"] == (524288 if s["state"] in (9, 11) else 0) for s in states),
       f"{tag}: transSize read only where NCCL sets it (SendWait, RecvFlushWait)")
    ib = kind(evs, "nccl_net_ib")
    ok(len(ib) == len(steps) and all(n["parent"] in steps and n["qp_num"] == 0x77 and n["length"] == 524288 for n in ib),
       f"{tag}: one IB QP event per step, under its step", ib[:2])
    p2p = kind(evs, "nccl_p2p")
    is_(len(p2p), 2 * NCOLL if with_p2p else 0, f"{tag}: P2p events")
    kch = kind(evs, "nccl_kernel_ch")
    if with_kch:
        ok(len(kch) == 2 * NCOLL * 2 and all(k["parent"] in coll_h and k["gpu_stop"] - k["gpu_start"] == 1000
                                             for k in kch), f"{tag}: KernelCh with GPU timer start/stop", kch[:2])
    else:
        is_(len(kch), 0, f"{tag}: no KernelCh outside the mask")


p, evs = drive("v5", "v5", {})
inits = kind(evs, "nccl_prof_init")
is_(sorted((i["comm_hash"], i["rank"], i["nranks"], i["version"], i["comm_name"], i["mask"]) for i in inits),
    [("0x1111", 0, 2, 5, "world", "0x9f"), ("0x2222", 1, 4, 5, "split", "0x9f")], "v5: init once per communicator")
check_tree("v5", evs, True, False)

p, evs = drive("v4", "v4", {"RAILSCOPE_NCCL_MASK": "default,kernelch"})
ok("mask=0xdf" in p.stdout, "v4: RAILSCOPE_NCCL_MASK adds KernelCh to the mask", p.stdout)
check_tree("v4", evs, False, True)

p, evs = drive("static", "v5", {"NCCL_PROFILER_PLUGIN": "STATIC_PLUGIN"})
is_(len(kind(evs, "nccl_coll")), 2 * NCOLL, "STATIC_PLUGIN: the preloaded table is found through dlopen(NULL)")
out = os.path.join(T, "threads")
p = run([DRIVER, "v5", "40", "8"], out, {"NCCL_PROFILER_PLUGIN": LIB}, timeout=60)
evs = events(out)
colls = kind(evs, "nccl_coll")
ops = {o["handle"] for o in kind(evs, "nccl_proxy_op")}
steps = kind(evs, "nccl_proxy_step")
ok(p.returncode == 0 and len(colls) == 8 * 40 and len(steps) == 8 * 40 * 16 and all(s["parent"] in ops for s in steps)
   and sorted({c["comm_hash"] for c in colls}) == [hex(0x1000 + i) for i in range(8)],
   "8 communicators driven from 8 threads at once: every event, every parent link",
   f"{p.stdout} colls {len(colls)} steps {len(steps)}")

p, evs = drive("api", "v5", {"RAILSCOPE_NCCL_MASK": "default,api"})
api = kind(evs, "nccl_prof_api")
byh = {a["handle"]: a for a in api}
colls = kind(evs, "nccl_coll")
ok(sorted(a["type"] for a in api) == sorted([0x100, 0x200, 0x800] * 2 * NCOLL)
   and all(byh[c["parent"]]["type"] == 0x200 and byh[c["parent"]]["func"] == "AllReduce" for c in colls)
   and all(a["parent"] in byh for a in api if a["type"] != 0x100),
   "v5 API events: GroupApi -> CollApi -> Coll, KernelLaunch, with counts and streams", api[:3])


def check_legacy(tag, version, evs, with_kch):
    inits = kind(evs, "nccl_prof_init")
    is_(sorted((i["comm_hash"], i["rank"], i["nranks"], i["version"], i["comm_name"]) for i in inits),
        [("0x1111", 0, -1, version, "world"), ("0x2222", 1, -1, version, "split")],
        f"{tag}: each communicator announced once, with the hash and rank of its first Coll (no size without the wrapper)")
    colls = kind(evs, "nccl_coll")
    ok(all(i["ts_ns"] <= min(c["ts_ns"] for c in colls if c["comm_hash"] == i["comm_hash"]) for i in inits),
       f"{tag}: the announcement precedes the communicator's first Coll", inits)
    groups = {g["handle"]: g for g in kind(evs, "nccl_group")}
    is_(len(colls), 2 * NCOLL, f"{tag}: one Coll per collective per communicator")
    ok(all(c["func"] == "AllReduce" and c["algo"] == "RING" and c["proto"] == "SIMPLE" and c["nchannels"] == 2
           and c["nwarps"] == 16 and c["datatype"] == "ncclFloat32" and c["count"] == 1048576 for c in colls),
       f"{tag}: Coll func/algo/proto/nMaxChannels/nWarps/datatype/count" + (" (from v1's enum codes)" if version == 1 else ""),
       colls[:2])
    is_(sorted((c["comm_hash"], c["seq"]) for c in colls),
        sorted((h, s) for h in ("0x1111", "0x2222") for s in range(NCOLL)), f"{tag}: (comm_hash, seq) from the descriptors")
    ok(all(c["parent"] in groups and groups[c["parent"]]["comm_hash"] == c["comm_hash"] for c in colls),
       f"{tag}: every Coll's parent is its Group, with the hash learnt from the Coll", list(groups.values())[:2])
    p2p = kind(evs, "nccl_p2p")
    ok(len(p2p) == 2 * NCOLL and all(x["func"] == "Send" and x["datatype"] == "ncclBfloat16" and x["peer"] == 1
                                     and x["count"] == 4096 and x["parent"] in groups for x in p2p),
       f"{tag}: P2p send with its datatype, peer and Group", p2p[:2])
    ops = {o["handle"]: o for o in kind(evs, "nccl_proxy_op")}
    steps = kind(evs, "nccl_proxy_step")
    per = 2 if version == 1 else 1
    is_(len(steps), len(ops) * 4 * per, f"{tag}: {4 * per} ProxySteps per op ({per} per transmission)")
    tot = {}
    for st in steps:
        tot[st["parent"]] = tot.get(st["parent"], 0) + st["trans_size"]
    # NCCL 2.23 adds a send step's size after its SendTransmitted: each send step carries its predecessor's bytes
    lag = 1 if version == 1 else 0
    want = {h: (4 - lag * o["is_send"]) * 524288 for h, o in ops.items()}
    ok(len(ops) == 2 * NCOLL * 4 and all(tot.get(h, 0) == want[h] for h in ops)
       and all(st["trans_size"] in (0, 524288) for st in steps),
       f"{tag}: each transmission's 512 KiB counted once on a step of its op, from the op's never-reset running total"
       + (" (send steps one behind)" if lag else ""), sorted(tot.values())[:4])
    states = kind(evs, "nccl_proxy_state")
    want = sorted([8, 9] * (len(steps) // 2) + [10, 11, 12] * (len(steps) // 2))
    is_(sorted(s["state"] for s in states), want, f"{tag}: the steps' states recorded, the ops' legacy states not")
    ib = kind(evs, "nccl_net_ib")
    is_(len(ib), len(steps) if version == 3 else 0, f"{tag}: net plugin events " + ("under steps" if version == 3 else "none (before v3)"))
    kch = kind(evs, "nccl_kernel_ch")
    if with_kch:
        ok(len(kch) == 2 * NCOLL * 2 and all(k["gpu_start"] == 0 and k["gpu_stop"] == 0 for k in kch),
           f"{tag}: KernelCh without GPU timers (v3 has none)", kch[:2])


for v in (3, 2, 1):
    env = {"RAILSCOPE_NCCL_MASK": "default,kernelch"} if v == 3 else {}
    p, evs = drive(f"v{v}", f"v{v}", env)
    check_legacy(f"v{v}", v, evs, v == 3)

# A v1-v3 context learns its communicator's size (init gives none) from the init wrapper it ran inside, or else from
# the NCCL call its first Coll starts in: fake NCCL as 2.26, its init inline (ncclCommInitRank) and on a thread of
# its own (2.23-2.27 run Config/Split's init job so)
FAKE = os.path.join(NCCL_BIN, "fakenccl")
for how in ("v3", "v3-thread"):
    out = os.path.join(T, "bind-" + how)
    q = run([os.path.join(NCCL_BIN, "nccl_local"), FAKE, "2"], out, {"NCCL_PROFILER_PLUGIN": LIB, "FAKE_NCCL_PROFILER": how})
    ev = events(out)
    ini = kind(ev, "nccl_prof_init")
    colls = kind(ev, "nccl_coll")
    calls = [c["comm_hash"] for c in kind(ev, "nccl_call") if c["func"] == 0]
    ok(q.returncode == 0 and [(i["comm_hash"], i["rank"], i["nranks"], i["version"]) for i in ini]
       == [("0xabcdef12345", 3, 4, 3)] and len(colls) == 2 and all(c["comm_hash"] == "0xabcdef12345" for c in colls),
       f"NCCL 2.26 stand-in, {how}: rank 3 of 4 announced, the Colls carry NCCL's hash", q.stdout + q.stderr + str(ini))
    is_(calls, ["0xabcdef12345"] * 2, f"{how}: the API records carry NCCL's hash too, told by the first Coll")

p, evs = drive("none", "v5", {"RAILSCOPE_NCCL_MASK": "none"})
ok("mask=0x0" in p.stdout and not kind(evs, "nccl_coll"), "mask none: NCCL is asked for no events", p.stdout)
finish()
