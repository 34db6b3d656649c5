#!/usr/bin/env python3
"""Without NCCL's profiler plugin (an NCCL before 2.27, NCCL_PROFILER_PLUGIN=none or another plugin) the API wrappers
used to record comm hash 0, and the analyzer joined the collectives of every communicator on (function, sequence)
alone: a job's data- and tensor-parallel AllReduces mixed. Now each communicator gets a key of its own that every
rank computes alike (preload/nccl.c key_from_id): FNV-1a of the ncclUniqueId the ranks pass to ncclCommInitRank;
for ncclCommSplit, of the parent's key, the parent's split count and the color. With the plugin, NCCL's own hash
stays (a split's child not seen by the plugin gets the key derived from it)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

PROG = os.path.join(NCCL_BIN, "nccl_local")
FAKE = os.path.join(NCCL_BIN, "fakenccl")
need(LIB, CLI, PROG, os.path.join(FAKE, "libfakeuser.so"))
plan(7)


def fnv1a(data, h=0xcbf29ce484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def keys(name, env):
    out = os.path.join(T, name)
    p = run([PROG, FAKE, "1", "split"], out, env)
    evs = events(out)
    inits = [(e["comm"], int(e["comm_hash"], 16)) for e in kind(evs, "nccl_comm_init")]
    calls = {e["comm"]: int(e["comm_hash"], 16) for e in kind(evs, "nccl_call") if e["func"] == 0}
    return p, [k for _, k in inits], all(calls.get(c) == k for c, k in inits) and len(calls) == 4


NOPLUGIN = {"NCCL_PROFILER_PLUGIN": os.path.join(T, "no-such-plugin.so")}
p, k, calls_ok = keys("a", NOPLUGIN)
ok(p.returncode == 0 and "bad=0" in p.stdout and len(k) == 4, "a communicator and three split children, no plugin",
   p.stdout + p.stderr)
idbytes = (0xabcdef12345).to_bytes(8, "little") + bytes(120)
is_(k[0], fnv1a(idbytes), "no plugin: the communicator's key is FNV-1a of its ncclUniqueId (every rank passes the same)")
ok(0 not in k and len(set(k)) == 4, "each child its own key (same color split twice: two communicators), none 0",
   [hex(x) for x in k])
ok(calls_ok, "every collective carries its communicator's key")
_, k2, _ = keys("b", NOPLUGIN)
is_(k2, k, "another process making the same calls gets the same keys (its ranks' collectives join)")
_, kp, calls_ok = keys("c", {"NCCL_PROFILER_PLUGIN": LIB})
ok(kp[0] == 0xabcdef12345 and calls_ok, "with the plugin: NCCL's hash for the communicator it saw", hex(kp[0]))
ok(0 not in kp and len(set(kp)) == 4 and not set(kp[1:]) & set(k[1:]),
   "and the children it did not see keyed from that hash", [hex(x) for x in kp])
finish()
