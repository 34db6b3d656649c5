#!/usr/bin/env python3
"""NVTX injection: an NVTX v3 client run with NVTX_INJECTION64_PATH=librailscope.so (preloaded, and also
only dlopen'ed by NVTX's loader): push/pop with nesting levels, start/end ids, marks, a named domain with a
registered string and NCCL's extended payload (comm hash, bytes, op). And messages that differ in every call
("step N", emit_nvtx's "aten::mul, seq = S, op_id = N"): recorded as a template and numbers (formats/nvtx_msg.h),
so the traced process does not keep one string per call, and read back whole."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

APP = os.path.join(NCCL_BIN, "nvtx_app")
if not os.path.exists(APP):
    skip_all("built without CUDA headers (no nvtx3): nvtx_app not built")
need(LIB, CLI, APP)
plan(17)

base = run([APP], os.path.join(T, "none"), preload=False)
out = os.path.join(T, "pre")
p = run([APP], out, {"NVTX_INJECTION64_PATH": LIB})
ok(p.returncode == 0 and "levels=6 domain=set l1=0 l2=0 id=set" in p.stdout,
   "NVTX calls return nesting levels, a domain and range ids", p.stdout + p.stderr)
ok("levels=-24" in base.stdout, "(without injection NVTX returns its no-tool values)", base.stdout)
evs = events(out)
push = [e for e in kind(evs, "nvtx_push") if not e["domain"]]
is_([(e["message"], e["depth"]) for e in push],
    [("step 0", 1), ("forward", 2), ("step 1", 1), ("forward", 2), ("step 2", 1), ("forward", 2)],
    "push: messages (one reused buffer, new bytes) and depths")
is_(len(kind(evs, "nvtx_pop")), 7, "every pop recorded")
st, en = kind(evs, "nvtx_start"), kind(evs, "nvtx_end")
ok(len(st) == 1 and len(en) == 1 and st[0]["id"] == en[0]["id"] and st[0]["message"] == "data wait",
   "start/end paired by id", st + en)
mk = kind(evs, "nvtx_mark")
ok(len(mk) == 1 and mk[0]["message"] == "checkpoint", "mark", mk)
nc = [e for e in kind(evs, "nvtx_push") if e["domain"] == "NCCL"]
ok(len(nc) == 1 and nc[0]["message"] == "ncclAllReduce" and nc[0]["schema"] == hex((1 << 24) + 5)
   and nc[0]["payload"] == 0xabcdef12345 and nc[0]["payload2"] == 4194304 and nc[0]["payload3"] == 0,
   "NCCL domain range: registered message, schema id, comm hash, bytes, op", nc)

out = os.path.join(T, "dlopen")
p = run([APP], out, {"NVTX_INJECTION64_PATH": LIB}, preload=False)
ok(p.returncode == 0 and "levels=6" in p.stdout, "works when NVTX's loader dlopens the library itself",
   p.stdout + p.stderr)
is_(len(kind(events(out), "nvtx_push")), 7, "dlopen'ed: ranges recorded")
p = run([APP], os.path.join(T, "off"), {"NVTX_INJECTION64_PATH": LIB, "RAILSCOPE_EVENTS": "all,-nvtx"})
ok(p.returncode == 0 and "levels=-24" in p.stdout, "nvtx family off: the injection declines, NVTX stays a no-op",
   p.stdout + p.stderr)
# NVTX from a thread-specific-data destructor that runs after the tracer's (its message cache is freed then):
# recorded, and no write into the freed cache (an ASan build of the library reports one: tests/hardening)
out = os.path.join(T, "texit")
p = run([APP, "thread-exit"], out, {"NVTX_INJECTION64_PATH": LIB})
mk = [e["message"] for e in kind(events(out), "nvtx_mark")] if p.returncode == 0 else []
ok(p.returncode == 0 and "thread-exit done" in p.stdout and sorted(mk) == ["at thread exit", "in thread"],
   "a mark from a thread's last destructors is recorded (the freed message cache is not used)",
   (p.returncode, mk, p.stderr[-600:]))
# Messages with numbers: 100000 steps, each with an op range named as emit_nvtx names them (200000 distinct
# messages). Before the template (session 23) the process kept each as a string: its resident set grew 13 MB
# over 200000 of them, the file 1.7x as large.
N = 100000
out = os.path.join(T, "many")
# (block: 400000 ranges in a burst overrun the buffer on a loaded machine, where drop, the default, drops)
p = run([APP, "many", str(N)], out, {"NVTX_INJECTION64_PATH": LIB, "RAILSCOPE_POLICY": "block"}, timeout=120)
grew = p.stdout.split("rss grew ")[1].split()[0] if "rss grew " in p.stdout else None
ok(p.returncode == 0 and grew is not None, "many distinct messages: the program ran", p.stdout + p.stderr)
if SAN:
    ok(True, f"# SKIP resident set under a sanitizer's allocator (grew {grew} KiB)")
else:
    ok(grew is not None and int(grew) < 1024,
       f"{N} distinct messages: the resident set grows under 1 MiB over the second half (one string each: ~6 MB)",
       p.stdout)
evs = events(out)
strings = kind(evs, "string")
ok(len(strings) < 100, f"a few strings for {2 * N} distinct messages (their templates), not one each",
   len(strings))
push = [e["message"] for e in kind(evs, "nvtx_push")]
is_((len(push), push[:2], push[-2:]),
    (2 * N, ["step 0", "aten::mul, seq = 0, op_id = 1"],
     [f"step {N - 1}", f"aten::mul, seq = {(N - 1) // 3}, op_id = {2 * N - 1}"]),
    "every message read back whole")
is_([e["message"] for e in kind(evs, "nvtx_mark")],
    ["step 007", "id 12345678901234567890", "a1b2c3d4e5f6g7h8i9", "tab\x1f 3",
     "ReluBackward0, seq = 118, op_id = 1914", "18446744073709551615"],
    "leading zeros, 20 digits, 9 numbers, a mark byte, numbers inside words: read back as written")
rep = subprocess.run([CLI, "report", "--json", out], capture_output=True, text=True, timeout=120)
try:
    nsteps = json.loads(rep.stdout).get("nsteps")
except ValueError:
    nsteps = None
is_(nsteps, N, "the report finds every 'step N' range a step")
finish()
