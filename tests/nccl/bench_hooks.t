#!/usr/bin/env python3
"""The bench's in-process switches (tracer/bench_hooks.c; bench/gpu/parttoggle.py): with RAILSCOPE_BENCH_HOOKS=1 a
program turns the tracer's families off and back on and its NVTX ranges stop and come back in the trace; without
it the switches refuse (-1) and change nothing. Either way NVTX returns the same nesting levels. In full mode the
CUPTI switch (the fake CUPTI of tests/nccl) turns kernel and copy activity off and on at the tracer's next tick, and the
trace marks each change as a kernel window."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

APP = os.path.join(NCCL_BIN, "bench_keep_app")
if not os.path.exists(APP):
    skip_all("built without CUDA headers (no nvtx3): bench_keep_app not built")
need(LIB, CLI, APP)
plan(11)


def words(out):
    got = {}
    for e in kind(events(out), "nvtx_push"):
        w = e["message"].split()[0]
        got[w] = got.get(w, 0) + 1
    return got


base = run([APP], os.path.join(T, "none"), preload=False)
env = {"NVTX_INJECTION64_PATH": LIB}
out = os.path.join(T, "on")
p = run([APP], out, dict(env, RAILSCOPE_BENCH_HOOKS="1"))
ok(p.returncode == 0 and "keep=" in p.stdout and "keep=-1" not in p.stdout and "back=-1" not in p.stdout
   and "cuda=0" in p.stdout, "with RAILSCOPE_BENCH_HOOKS=1 the switches answer", p.stdout + p.stderr)
is_(words(out), {"on": 5, "back": 5}, "ranges with only the core's family kept are left out, the others recorded")
first = int(p.stdout.split("keep=")[1].split()[0]) if "keep=" in p.stdout else -1
lv = p.stdout.split("levels=")[-1].strip()
ok(lv == "0,0,0", "NVTX's nesting levels as the program expects, switched or not", p.stdout)
ok(base.stdout.split("levels=")[-1].strip() != lv, "(without the injection NVTX returns its no-tool values)",
   base.stdout)

out = os.path.join(T, "off")
p = run([APP], out, env)
ok(p.returncode == 0 and "keep=-1 back=-1 cuda=-1" in p.stdout, "without RAILSCOPE_BENCH_HOOKS the switches refuse",
   p.stdout + p.stderr)
is_(words(out), {"on": 5, "off": 5, "back": 5}, "and change nothing: every range recorded")
ok(p.stdout.split("levels=")[-1].strip() == lv, "same nesting levels", p.stdout)

out = os.path.join(T, "nvtxoff")
p = run([APP], out, dict(env, RAILSCOPE_BENCH_HOOKS="1", RAILSCOPE_EVENTS="all,-nvtx"))
conf = int(p.stdout.split("keep=")[1].split()[0]) if "keep=" in p.stdout else -1
ok(p.returncode == 0 and conf > 0 and not conf & 1 << 4 and first & 1 << 4 and words(out) == {},
   "the families put back are the configuration's (nvtx left off stays off)", [first, conf, p.stdout + p.stderr])
DRIVER, FAKE = os.path.join(NCCL_BIN, "cupti_driver"), os.path.join(NCCL_BIN, "fakecupti")
need(DRIVER, os.path.join(FAKE, "libcupti.so.13"))
full = {"RAILSCOPE_CUDA_KERNELS": "all", "RAILSCOPE_FLUSH_MS": "20"}
out = os.path.join(T, "kinds")
p = run([DRIVER, FAKE, "benchkinds"], out, dict(full, RAILSCOPE_BENCH_HOOKS="1"))
ok(p.returncode == 0 and "start kernel=1 memcpy=1" in p.stdout
   and "off set=0 window=0 applied=yes kernel=0 memcpy=0" in p.stdout
   and "on set=0 window=1 applied=yes kernel=1 memcpy=1" in p.stdout,
   "full mode: CUPTI's kernel and copy kinds switched off, then on, each applied by the tick", p.stdout + p.stderr)
# in time order: the first window is marked on the application's thread, the switches on the writer's, and the
# file holds each thread's events in drain order (a loaded host drained the writer's first: [0, 1, 1] in file order)
wins = [e["on"] for e in sorted(kind(events(out), "cuda_kernel_window"), key=lambda e: e["ts_ns"])]
is_(wins, [1, 0, 1], "the trace marks each switch as a window (the report sees when kernels were not recorded)")
p = run([DRIVER, FAKE, "benchkinds"], os.path.join(T, "kinds0"), full)
ok(p.returncode == 0 and "off set=-1 window=-1 applied=no kernel=1 memcpy=1" in p.stdout
   and "on set=-1 window=-1 applied=no kernel=1 memcpy=1" in p.stdout,
   "without RAILSCOPE_BENCH_HOOKS the CUPTI switch refuses and CUPTI keeps recording", p.stdout + p.stderr)
finish()
