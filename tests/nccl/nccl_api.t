#!/usr/bin/env python3
"""NCCL API wrappers with NCCL in a local scope (the PyTorch case that crashed a naive wrapper): a library
linked against a fake libnccl.so.2 is dlopen'ed RTLD_LOCAL; its calls reach the preloaded wrappers, which
must find pncclX in that scope and forward. The fake NCCL calls the profiler plugin's init inside
ncclCommInitRank, as NCCL does, so the wrapper learns the communicator's hash."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

PROG = os.path.join(NCCL_BIN, "nccl_local")
FAKE = os.path.join(NCCL_BIN, "fakenccl")
need(LIB, CLI, PROG, os.path.join(FAKE, "libfakeuser.so"))
plan(12)
ITERS = 5

base = run([PROG, FAKE, str(ITERS)], os.path.join(T, "none"), preload=False)
out = os.path.join(T, "pre")
p = run([PROG, FAKE, str(ITERS)], out, {"NCCL_PROFILER_PLUGIN": LIB})
ok(base.returncode == 0, "(untraced run works)", base.stdout + base.stderr)
is_(p.stdout, base.stdout, "traced: same results and the same calls reached NCCL")
ok(p.returncode == 0 and "bad=0" in p.stdout, "every call returned ncclSuccess through the wrappers", p.stdout + p.stderr)
evs = events(out)
calls = kind(evs, "nccl_call")
ar = [c for c in calls if c["func"] == 0]
is_([c["seq"] for c in ar], list(range(ITERS)), "AllReduce recorded with per-communicator sequence numbers")
ok(all(c["count"] == 1000 + i and c["datatype"] == 7 and c["op"] == 0 and c["rank"] == 3 and c["nranks"] == 4
       and c["stream"] == "0x99" and c["comm_hash"] == "0xabcdef12345" for i, c in enumerate(ar)),
   "AllReduce: count, datatype, op, rank/nranks, stream, comm hash", ar[:2])
sends = [c for c in calls if c["func"] == 6]
recvs = [c for c in calls if c["func"] == 7]
ok(len(sends) == ITERS and len(recvs) == ITERS and all(c["peer"] == 1 for c in sends)
   and all(c["peer"] == 2 for c in recvs), "Send/Recv with peers", sends[:1] + recvs[:1])
is_(sorted(c["func"] for c in calls if c["func"] in (8, 9)), [8] * ITERS + [9] * ITERS, "GroupStart/GroupEnd")
ga = [c for c in calls if c["func"] == 10]
sc = [c for c in calls if c["func"] == 11]
ok([c["seq"] for c in ga] == list(range(ITERS)) and [c["seq"] for c in sc] == list(range(ITERS))
   and all(c["count"] == 300 + i and c["datatype"] == 4 and c["peer"] == 2 and c["stream"] == "0x98"
           for i, c in enumerate(ga))
   and all(c["count"] == 400 + i and c["datatype"] == 5 and c["peer"] == 1 for i, c in enumerate(sc)),
   "ncclGather/ncclScatter (2.28) recorded with root, count, datatype, stream, own sequence", ga[:1] + sc[:1])
ini = kind(evs, "nccl_comm_init")
ok(len(ini) == 1 and ini[0]["comm_hash"] == "0xabcdef12345" and ini[0]["rank"] == 3 and ini[0]["nranks"] == 4
   and ini[0]["ret"] == 0 and ini[0]["cuda_device"] == 0, "CommInitRank: rank, nranks, device and the hash learned "
   "from the plugin's init", ini)
is_(len(kind(evs, "nccl_comm_end")), 1, "CommDestroy recorded")
# NCCL's version, asked once (the report names an NCCL before 2.27 as why a rank has no profiler records)
vers = []
for code in ("22602", "2708"):  # NCCL_VERSION_CODE from 2.9 on (X*10000+Y*100+Z), and up to 2.8 (X*1000+Y*100+Z)
    o = os.path.join(T, "v" + code)
    run([PROG, FAKE, "2"], o, {"NCCL_PROFILER_PLUGIN": LIB, "FAKE_NCCL_VERSION": code})
    vers.append([e["value"] for e in kind(events(o), "host_fact") if e["key"] == "nccl/version"])
is_(vers + [[e["value"] for e in kind(evs, "host_fact") if e["key"] == "nccl/version"]],
    [["2.26.2"], ["2.7.8"], ["2.28.9"]], "NCCL's version recorded once per process as the fact nccl/version")

# The same through `railscope record`, which sets LD_PRELOAD and NCCL_PROFILER_PLUGIN itself.
import subprocess  # noqa: E402
out = os.path.join(T, "record")
e = dict(os.environ)
e.pop("LD_PRELOAD", None)
if SAN:
    e["LD_PRELOAD"] = SAN
p = subprocess.run([CLI, "record", "-q", "-o", out, "--", PROG, FAKE, str(ITERS)], env=e, capture_output=True,
                   text=True, timeout=30)
evs = events(out)
ok(p.returncode == 0 and "bad=0" in p.stdout and len([c for c in kind(evs, "nccl_call") if c["func"] == 0]) == ITERS
   and kind(evs, "nccl_comm_init")[0]["comm_hash"] == "0xabcdef12345",
   "under railscope record: calls, plugin init and comm hash recorded", p.stdout + p.stderr)
finish()
