#!/usr/bin/env python3
"""CUPTI injection against a fake libcupti (no GPU): InitializeInjection finds the already-loaded libcupti,
registers the monotonic timestamp callback before enabling kinds, enables memcpy/memcpy2/memset/sync and
kernels, picks runtime-API records; synthetic CUDA 13 records (Memcpy6 pageable/pinned, PtoP4, Memset4,
Kernel10, API, Synchronization2) become trace events; dropped count and the forced flush at exit land in
the trace; another client taking CUPTI over is detected and the cudart wrappers take over the copies."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

DRIVER = os.path.join(NCCL_BIN, "cupti_driver")
FAKE = os.path.join(NCCL_BIN, "fakecupti")
if not os.path.exists(DRIVER):
    skip_all("built without CUDA headers (no CUPTI record structs): cupti_driver not built")
need(LIB, CLI, DRIVER, os.path.join(FAKE, "libcupti.so.13"))
plan(32)

out = os.path.join(T, "basic")
FULL_API = {"RAILSCOPE_CUDA_KERNELS": "all", "RAILSCOPE_CUDA_API": "on", "RAILSCOPE_CUDA_SYNC": "on"}
p = run([DRIVER, FAKE, "basic"], out, FULL_API)
ok(p.returncode == 0 and "inject=1" in p.stdout, "InitializeInjection returns 1", p.stdout + p.stderr)
ok("enabled memcpy=1 memcpy2=1 memset=1 sync=1 kernel=1" in p.stdout, "MEMCPY, MEMCPY2, MEMSET, SYNC, kernels enabled",
   p.stdout)
ok("runtime_api memcpy=1 memcpyasync=1 getdevice=0 launch=1" in p.stdout,
   "API records on: copies and (with kernels) launches, not the rest", p.stdout)
ok("deliver=0" in p.stdout, "timestamp callback registered before any kind was enabled", p.stdout)
evs = events(out)
mc = kind(evs, "cuda_memcpy")
clock = [e for e in evs if e["kind"] == "clock"]
t0 = min(c["mono_ns"] for c in clock)
pe = kind(evs, "proc_end")
ok(pe and all(t0 - 1e9 < m["ts_ns"] <= m["end"] <= pe[0]["ts_ns"] for m in mc),
   "GPU timestamps are on the tracer clock (inside the process's life)", [(m["ts_ns"], m["end"]) for m in mc])
h2d = [(m["bytes"], m["src_kind"], m["dst_kind"]) for m in mc if m["copy_kind"] == 1]
is_(sorted(h2d), [(512, 2, 3), (777, 2, 3), (38535168, 1, 3)], "HtoD copies with pageable/pinned source kinds "
    "(the untimed one skipped, the forced flush's one kept)")
m0 = [m for m in mc if m["bytes"] == 38535168][0]
ok(m0["correlation"] == 110 and m0["drv_corr"] == 10 and m0["stream"] == 7 and m0["flags"] == 1,
   "memcpy keeps runtime/driver correlation ids, stream, async flag", m0)
peer = [m for m in mc if m["copy_kind"] == 10]
ok(len(peer) == 1 and peer[0]["src_device"] == 0 and peer[0]["dst_device"] == 1 and peer[0]["bytes"] == 4096,
   "MEMCPY2 peer copy with source and destination devices", peer)
ms = kind(evs, "cuda_memset")
ok(len(ms) == 1 and ms[0]["bytes"] == 1024 and ms[0]["memory_kind"] == 3, "memset record", ms)
ks = kind(evs, "cuda_kernel")
ok(len(ks) == 2 and all(k["name"].startswith("_Z40ncclDevKernel_AllReduce") and k["grid_x"] == 2 and
                        k["block_x"] == 512 and k["stream"] == 7 for k in ks), "kernel records: name, grid, block, stream", ks)
api = kind(evs, "cuda_api")
ok(len(api) == 1 and api[0]["name"] == "cudaMemcpyAsync_v3020" and api[0]["tid"] == 1234 and api[0]["correlation"] == 110,
   "runtime API record: name, calling thread, correlation with its copy", api)
sy = kind(evs, "cuda_sync")
ok(len(sy) == 1 and sy[0]["type"] == 3 and sy[0]["end"] - sy[0]["ts_ns"] == 10000, "synchronization record", sy)
dr = kind(evs, "cupti_dropped")
ok(len(dr) == 1 and dr[0]["count"] == 5, "CUPTI's dropped count recorded", dr)
ok("1 activity records without timestamps" in p.stderr and "dropped 5" in p.stderr,
   "untimed and dropped records reported once at exit", p.stderr)

# CUDA's exit handlers tear CUPTI down before the tracer's run: the final forced flush must come before
# them (an exit handler registered at CUDA's initialisation), and nothing may call CUPTI after them.
out = os.path.join(T, "teardown")
p = run([DRIVER, FAKE, "basic"], out, dict(FULL_API, FAKE_CUPTI_EXIT_TEARDOWN="1"))
h2d = [m["bytes"] for m in kind(events(out), "cuda_memcpy") if m["copy_kind"] == 1]
ok(p.returncode == 0 and 777 in h2d and "after CUPTI's exit teardown" not in p.stderr,
   "exit: the forced flush runs before CUDA's teardown (its 777-byte record is kept), no CUPTI call after it",
   p.stderr + str(h2d))

out = os.path.join(T, "default")
p = run([DRIVER, FAKE, "basic"], out)
ok("enabled memcpy=1 memcpy2=1 memset=1 sync=0 kernel=1" in p.stdout and "runtime_api memcpy=0 memcpyasync=0 getdevice=0 "
   "launch=0" in p.stdout, "default mode: copies and sampled kernels, no API or sync records", p.stdout)
w = kind(events(out), "cuda_kernel_window")
ok(w and w[0]["on"] == 1 and w[0]["mode"] == 1, "default mode: the first kernel window opens at injection", w)

out = os.path.join(T, "burst")
p = run([DRIVER, FAKE, "burst"], out, {"RAILSCOPE_BUFFER_KB": "64"})
evs = events(out)
n = len([m for m in kind(evs, "cuda_memcpy") if m["bytes"] >= 1000])
drops = sum(e["events"] for e in kind(evs, "drops"))
ok("burst=4000" in p.stdout and n == 4000 and drops == 0,
   "a burst of 4000 records through a 64 KiB ring: all written, none dropped", f"{p.stdout} written {n} dropped {drops}")

out = os.path.join(T, "nvml")
p = run([DRIVER, FAKE, "basic"], out, {"RAILSCOPE_NVML_MS": "10", "LD_LIBRARY_PATH": FAKE})
ns = kind(events(out), "nvml_sample")
ok(p.returncode == 0 and {n["field"] for n in ns} == {197, 198} and len(ns) >= 4
   and all(n["device"] == 0 for n in ns), "NVML sampler: PCIe counters sampled, unsupported NVLink fields dropped",
   [(n["field"], n["value"]) for n in ns][:6])

out = os.path.join(T, "early")
p = run([DRIVER, FAKE, "early"], out)
evs = events(out)
ok("early register=0 inject=1 owner_other=1 bad=0" in p.stdout and len(kind(evs, "cuda_copy_call")) == 1
   and "before CUDA initialised" in p.stderr, "a client registered before CUDA init keeps CUPTI; copies via the wrappers",
   p.stdout + p.stderr)

out = os.path.join(T, "off")
p = run([DRIVER, FAKE, "basic"], out, {"RAILSCOPE_CUDA_KERNELS": "off"})
evs = events(out)
ok("kernel=0" in p.stdout and "launch=0" in p.stdout and not kind(evs, "cuda_kernel"),
   "RAILSCOPE_CUDA_KERNELS=off: no kernel activity, no launch records", p.stdout)
w = kind(evs, "cuda_kernel_window")
ok(w and w[0]["on"] == 0 and w[0]["mode"] == 0, "the kernel mode is in the trace", w)

out = os.path.join(T, "takeover")
p = run([DRIVER, FAKE, "takeover"], out, FULL_API)
evs = events(out)
ok(p.returncode == 0 and "register=0 owner_other=1" in p.stdout,
   "take-over: the other client's registration is forwarded to CUPTI", p.stdout + p.stderr)
ok("copies=14 bad=0" in p.stdout, "take-over: every cudaMemcpy reached the runtime and succeeded", p.stdout)
ok("last_error=0" in p.stdout, "our pointer queries leave no error behind for the application's cudaGetLastError",
   p.stdout)
warn = [l for l in p.stderr.splitlines() if "another CUPTI client" in l]
is_(len(warn), 1, "take-over: one warning")
ok(any(m["bytes"] == 777 for m in kind(evs, "cuda_memcpy")), "take-over: CUPTI's pending records were flushed to us first",
   [m["bytes"] for m in kind(evs, "cuda_memcpy")])
cc = kind(evs, "cuda_copy_call")
h2d = [c for c in cc if c["copy_kind"] == 1]
h2d = [c for c in h2d if c["bytes"] == 4096]
ok(len(h2d) == 10 and all(c["dst_mem"] == 2 for c in h2d),
   "take-over: copies recorded by the cudart wrappers", cc[:2])
is_(sorted({c["src_mem"] for c in h2d}), [0, 1], "take-over: pageable and pinned sources told apart")
d2d = [c for c in cc if c["copy_kind"] == 3]
ok(len(d2d) == 1 and d2d[0]["src_mem"] == 2 and d2d[0]["dst_mem"] == 2, "device-to-device copies need no pointer query", d2d)
pt = sorted((c["bytes"], c["copy_kind"], c["async"], c["src_mem"], c["dst_mem"], c["stream"]) for c in cc
            if c["bytes"] in (8192, 12288))
is_(pt, [(8192, 1, 0, 1, 2, "0x0"), (12288, 2, 1, 2, 0, "0x77")],
    "per-thread-default-stream copies (cudaMemcpy_ptds, cudaMemcpyAsync_ptsz) recorded like the others")
w = kind(evs, "cuda_kernel_window")
ok(w and w[-1]["state"] == 2, "the take-over is marked in the trace", w)
finish()
