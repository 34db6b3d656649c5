#!/usr/bin/env python3
"""CUPTI detached between sampling windows (session 8, issue 16) against the fake libcupti/libcuda (no GPU):
- after a window closes and its records are in, the tracer calls cuptiFinalize from an application thread's API
  exit callback (the fake counts a finalize made anywhere else, or on the tracer's writer thread, as unsafe:
  session 14's SIGSEGV on the H200 came from the writer's own trivial driver call), and re-attaches for the next window; while
  detached nothing calls CUPTI (the fake counts attachments: each must be one of ours), also at exit;
- nothing is lost: every attachment's forced flush (the fake's 777-byte record) is converted before the
  finalize, with timestamps on the tracer's clock (the timestamp callback is registered again);
- copies outside windows are recorded by the cudart wrappers as before;
- it stays attached when it must: RAILSCOPE_CUDA_DETACH=off, copies by CUPTI, another subscriber (a profiler,
  Nsight) from the start, a driver that never calls back; and from the moment another client registers buffers
  or subscribes, it never finalizes again (the client's registration survives, its subscription succeeds);
- graph entry points fetched with cuGetProcAddress[_v2] (dlsym'd on libcuda's handle, 4- or 5-argument, or linked)
  come back as trampolines that are seen when called (session 9): a graph made through them while detached or
  armed stops detaching; the trampoline reaches the driver's function with six arguments and returns its value;
  every other look-up comes back as the driver left it;
- a look-up that CUPTI makes while railscope holds its attach lock, with the trampoline pool full, neither
  deadlocks nor lets CUPTI detach again (session 10); a driver without cuGetProcAddress_v2 (before 12.0): a program's
  dlsym(RTLD_DEFAULT) probe finds none, as untraced, and a program bound to railscope's _v2 is answered as the
  4-argument function would answer (session 10)."""
import concurrent.futures
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

DRIVER = os.path.join(NCCL_BIN, "cupti_driver")
FAKE = os.path.join(NCCL_BIN, "fakecupti")
if not os.path.exists(DRIVER):
    skip_all("built without CUDA headers (no CUPTI record structs): cupti_driver not built")
need(LIB, CLI, DRIVER, os.path.join(FAKE, "libcupti.so.13"), os.path.join(FAKE, "libcuda.so.1"))
plan(70)

BASE = {"RAILSCOPE_FLUSH_MS": "20", "RAILSCOPE_CUDA_KERNEL_WINDOW": "200/400/200", "RAILSCOPE_LOG": "debug"}


def stats(text, what):
    m = re.search(what + r" attached=(-?\d+) attaches=(-?\d+) finalizes=(-?\d+) unsafe=(-?\d+)", text)
    return [int(x) for x in m.groups()] if m else None


def _go(name, extra, args):
    out = os.path.join(T, name)
    try:
        p = run([DRIVER, FAKE, "detach", *args], out, dict(BASE, **(extra or {})))
    except subprocess.TimeoutExpired as x:  # a deadlock fails the checks, it does not end the file
        p = subprocess.CompletedProcess(x.cmd, 124, "", "timed out after %s s" % x.timeout)
    states = dict(x.split(":") for x in p.stdout.split() if ":" in x and x.split(":")[0].isdigit())
    evs = events(out) if p.returncode == 0 else []
    return p, states, evs


# The runs take ~47 s of the program's own timeline (0.6-2 s each, sleeping in between: ~2.5 CPU s in all), so
# they are all started here and go() below hands each one's result to its checks (the file took 54 s serially,
# one run after another). Each run is its own process with its own trace directory. The two runs whose timing
# checks 5-8 read (detach, and detach2 that check 7 compares it with) run first, side by side and alone; the
# rest JOBS at a time. A go() whose name and arguments are not in RUNS is an error, and so is a run never checked.
JOBS = 3 if SAN else 6
RUNS = [("detach", None, ("2000",)), ("detach2", {"RAILSCOPE_CUDA_ABLATE": "detach2"}, ("2000",)),
        ("exit-detached", {"RAILSCOPE_CUDA_KERNEL_WINDOW": "200/100000/100"}, ("1200",)),
        ("rename", {"FAKE_CUPTI_RENAME": "1"}, ("2000",)),
        ("off", {"RAILSCOPE_CUDA_DETACH": "off"}, ("2000",)),
        ("cupti-copies", {"RAILSCOPE_CUDA_COPIES": "cupti"}, ("2000",)),
        ("subscribed", {"FAKE_CUPTI_SUBSCRIBED": "1"}, ("2000",)),
        ("nocb", {"FAKE_CUPTI_NO_DRIVER_CB": "1"}, ("2000",)),
        ("idle", None, ("2000", "idle")),
        ("fork", {"ARM_HOLD": "1", "RAILSCOPE_CUDA_KERNEL_WINDOW": "200/100000/100"}, ("2000", "fork")),
        ("koff", {"RAILSCOPE_CUDA_KERNELS": "off"}, ("600",)),
        ("full", {"RAILSCOPE_CUDA_KERNELS": "all"}, ("600",)),
        ("graph", None, ("2000", "graph")),
        ("register", None, ("2000", "register")), ("subscribe", None, ("2000", "subscribe"))]
RUNS += [("armed-" + ev, {"ARM_HOLD": "1", "RAILSCOPE_CUDA_KERNEL_WINDOW": "50/100000/50"}, ("1600", ev))
         for ev in ("subscribe", "dlsubscribe", "register", "graph", "pgraph_v2", "pgraph_v1", "pgraph_link")]
RUNS += [("detached-pgraph_" + how, {"EVENT_DETACHED": "1"}, ("2000", "pgraph_" + how)) for how in ("v2", "v1", "link")]
RUNS += [("lookup-under-lock", {"FAKE_CUPTI_LOOKUPS": "48", "RAILSCOPE_CUDA_KERNEL_WINDOW": "200/100000/100000"},
          ("1200",)),
         ("static-rt", {"FAKE_RT_NAME": "librtcopy.so.13"}, ("2000",))]
# the arm once the window's records are in (session 32): ticks of 300 ms, a kernel still running 60 ms (or 1 s) after
# each window's close (the fake holds its buffer until then). Windows at 200, 1400 and 2600 ms after CUDA's
# initialisation: a run of 2500 ms ends between windows, long after the last close (one that exited just after a
# close, as 3000 ms runs did under load, had the exit's forced flush bring that close's kernel untimed)
EARLY = {"RAILSCOPE_FLUSH_MS": "300", "RAILSCOPE_CUDA_KERNEL_WINDOW": "400/1200/200", "FAKE_CUPTI_INFLIGHT_MS": "60"}
RUNS += [("early", EARLY, ("2500",)), ("early-tickarm", dict(EARLY, RAILSCOPE_CUDA_ABLATE="tickarm"), ("2500",)),
         ("early-slow", dict(EARLY, FAKE_CUPTI_INFLIGHT_MS="1000"), ("2500",))]
# a buffer that an attachment's finalize keeps for good (the forced flush at the arm leaves the 1 s kernel's buffer in
# CUPTI, the finalize drops it): the next attachment's own buffers decide its arm (review, session 32)
KEEPS = dict(EARLY, FAKE_CUPTI_INFLIGHT_MS="1000,60", FAKE_CUPTI_FORCED_KEEPS="1")
RUNS += [("early-keeps", KEEPS, ("2500",))]
# a CUPTI that writes a running kernel's record into a buffer only when a flush delivers it (the early arm's
# assumption broken): the first early arm brings it untimed, and from then on the arm waits for the tick
LAZY = dict(EARLY, FAKE_CUPTI_LAZY_INFLIGHT="1")
RUNS += [("early-lazy", LAZY, ("2500",))]
# a gap between windows of one tick (300 ms windows every 600, ticks of 300 ms): the tick after each close opens the
# next window, and CUPTI stays attached through the gap as with the arm at the tick (review, session 32)
GAP = {"RAILSCOPE_FLUSH_MS": "300", "RAILSCOPE_CUDA_KERNEL_WINDOW": "300/600/200"}
RUNS += [("gap", GAP, ("2000",)), ("gap-tickarm", dict(GAP, RAILSCOPE_CUDA_ABLATE="tickarm"), ("2000",))]
_pool = concurrent.futures.ThreadPoolExecutor(max_workers=JOBS)
_runs = {name: ((extra, args), _pool.submit(_go, name, extra, args)) for name, extra, args in RUNS[:2]}
concurrent.futures.wait([f for _, f in _runs.values()])  # checks 5-8 time the first two: they run alone
_runs.update({name: ((extra, args), _pool.submit(_go, name, extra, args)) for name, extra, args in RUNS[2:]})
_pool.shutdown(wait=False)


def go(name, extra=None, args=("2000",)):
    want, fut = _runs.pop(name, (None, None))
    if want != (extra, args):
        raise RuntimeError("go(%r, %r, %r) is not in RUNS as such (%r)" % (name, extra, args, want))
    return fut.result()


# ---- the default: detach after each window ----
p, states, evs = go("detach")
s, e = stats(p.stdout, "stats"), stats(p.stdout, "exit_stats")
ok(p.returncode == 0 and s and e, "the program runs and reports CUPTI's attachments", p.stdout[-300:] + p.stderr[-300:])
ok(s and s[2] >= 3 and s[3] == 0, "CUPTI finalized after every window (>= 3 in 2 s), never outside an application thread's API exit callback",
   s)
ok(s and s[1] == s[2] + s[0], "every attachment is one of ours (attaches = finalizes + attached now)", s)
n_att = p.stderr.count("fake_cupti: attached")
ok(s and n_att == s[1], "nothing attaches CUPTI after the program's last copy (exit included)", (s, e, n_att))
KWIN_DETACHED = 2  # CUDA_KERNEL_WINDOW.flags: the detach after a window (formats/events_cuda.h)
# in time order: the window opened at CUDA init is the application thread's event, its close the writer's, and a
# dump lists each thread's chunks in the order they reached the file (the writer's first tick 2 ms after CUDA
# init put its chunk first on a loaded host: [0, 1, 1, 0, ...], 4 of 15 runs with the runs started together)
w = sorted((x for x in kind(evs, "cuda_kernel_window") if not int(str(x["flags"]), 0) & KWIN_DETACHED),
           key=lambda x: x["ts_ns"])
ons = [x["on"] for x in w]
ok(ons.count(1) >= 3 and all(a != b for a, b in zip(ons, ons[1:])), "windows still open and close on schedule", ons)
# the trace marks each finalize (session 20: the report measures the steps CUPTI stayed attached after a window);
# the last may come after the last tick


def detach_tails(evs):
    """The detach markers, and the ms from each one's window close to it (a marker between windows only)."""
    all_w = kind(evs, "cuda_kernel_window")
    det = [x for x in all_w if int(str(x["flags"]), 0) & KWIN_DETACHED]
    win = [x for x in all_w if not int(str(x["flags"]), 0) & KWIN_DETACHED]
    closes = [x["ts_ns"] for x in win if x["on"] == 0]
    opens = [x["ts_ns"] for x in win if x["on"] == 1]
    tails = []
    for d in det:
        c = max((t for t in closes if t <= d["ts_ns"]), default=None)
        if c is not None and not any(c < t < d["ts_ns"] for t in opens):
            tails.append((d["ts_ns"] - c) / 1e6)
    return det, tails


det, tails = detach_tails(evs)
ok(e and e[2] - 1 <= len(det) <= e[2] and det and all(x["on"] == 0 for x in det) and len(tails) == len(det),
   "a detach marker (on 0) per finalize, each after a window's close and before the next window", (len(det), e, tails))
# armed the tick after the close (20 ms ticks here), not two ticks after as before session 20 (the ablation
# `detach2` keeps that): the tail is a tick and the wait for the program's next API exit
_, tails2 = detach_tails(go("detach2", {"RAILSCOPE_CUDA_ABLATE": "detach2"})[2])
med = lambda v: sorted(v)[len(v) // 2] if v else None  # noqa: E731
ok(tails and tails2 and 0.75 * 20 < med(tails) < 0.75 * med(tails2),
   "CUPTI detached a tick sooner after a window's close than before session 20, and not at the close itself (a tick "
   "of 20 ms at least: the window's last kernels come in meanwhile) (median tails, ms)",
   (med(tails), med(tails2), tails, tails2))
# each marker stands at its finalize, not at the tick that learnt of it: the debug log's times are since CUPTI's
# set-up; each re-attach is followed in the same tick by its window's open, which gives that origin on the trace
reatt_s = [float(x) for x in re.findall(r"CUPTI: re-attached at ([0-9.]+) s", p.stderr)]
fin_s = [float(x) for x in re.findall(r"CUPTI: finalized at ([0-9.]+) s", p.stderr)]
opens = sorted(x["ts_ns"] for x in w if x["on"] == 1)  # the first at CUDA init, then one per re-attach


def origin(opens, reatt):
    """The log's origin on the trace's clock: the open - re-attach difference most pairs agree on (within 2 ms).
    Not opens[1:] zipped with the re-attaches in order: a loaded host shifted that pairing by one window now and
    then (every marker 'off' by a window period, ~400 ms; 1 of 3 runs at load 6, session 29)."""
    cands = [o - r * 1e9 for o in opens for r in reatt]
    return max(cands, key=lambda c: sum(abs(c - d) < 2e6 for d in cands)) if cands else None


t0 = origin(opens, reatt_s)
# each marker against the nearest finalize the log reports (a marker at the tick that learnt of it: >= 15 ms off)
off = [min(abs(d["ts_ns"] - (t0 + f * 1e9)) for f in fin_s) / 1e6 for d in det] if t0 is not None and fin_s else []
ok(off and len(off) == len(det) and len(fin_s) >= len(det) and max(off) < 3,
   "each detach marker stands at its finalize (the debug log's time, within its 1 ms print and a few ms)", (off, len(fin_s), len(det)))
flushed = kind(evs, "cuda_memcpy")
f777 = [m for m in flushed if m["bytes"] == 777]
ok(e and len(f777) == e[2] + e[0], "each attachment's forced flush record was converted before its finalize",
   (len(f777), e))
host = [x["ts_ns"] for x in evs if not x["kind"].startswith("cuda_memcpy")]
t_lo, t_hi = (min(host), max(host)) if host else (0, 0)
ok(f777 and all(t_lo <= m["ts_ns"] <= t_hi for m in f777),
   "records of re-attached CUPTI are on the tracer's clock (timestamp callback registered again)",
   [(m["ts_ns"], t_lo, t_hi) for m in f777][:4])
recorded = {c["bytes"] - 100000 for c in kind(evs, "cuda_copy_call") if c["copy_kind"] == 1}
outside = [int(i) for i, st in states.items() if st == "0"]
ok(outside and all(i in recorded for i in outside), "every copy made outside a window is recorded by the wrappers",
   [i for i in outside if i not in recorded][:10])
m = re.search(r"detached (\d+) times .* re-attached (\d+) times", p.stderr)
ok(m and e and int(m.group(1)) == e[2] and int(m.group(2)) == e[1] - 1,
   "the debug log counts detaches and re-attaches as CUPTI saw them (at exit)", (m.group(0) if m else p.stderr[-400:], e))

fin = re.findall(r"CUPTI: finalized at [0-9.]+ s on thread (\d+), .* at the exit of a driver function", p.stderr)
reatt = p.stderr.count("CUPTI: re-attached at ")
tid = re.search(r"main_tid=(\d+)", p.stdout)
ok(e and tid and len(fin) == e[2] and set(fin) == {tid.group(1)} and reatt == e[1] - 1 and
   p.stderr.count("CUPTI: detach armed at ") >= len(fin),
   "the debug log has a line per arm, finalize (its thread: the program's, and its call) and re-attach, as they "
   "happen", (fin, tid and tid.group(0), reatt, e))

# one window at 100 ms, then 1 s detached: the exit finds CUPTI detached and must leave it so
p, states, evs = go("exit-detached", {"RAILSCOPE_CUDA_KERNEL_WINDOW": "200/100000/100"}, ("1200",))
s = stats(p.stdout, "stats")
n_att = p.stderr.count("fake_cupti: attached")
ok(s and s[0] == 0 and s[2] >= 1 and n_att == s[1] == s[2] and kind(evs, "proc_end"),
   "exit while detached: no CUPTI call at exit (no flush, no attach), the trace ends normally", (s, n_att))

# kernel names by attachment: the fake rewrites its one name buffer at every finalize, as a real CUPTI may reuse
# the address of a name it freed; the kernels of each re-attached window must carry that attachment's name, not
# one remembered by address from an earlier one (session 13)
p, states, evs = go("rename", {"FAKE_CUPTI_RENAME": "1"})
s = stats(p.stdout, "stats")
names = sorted({k.get("name") for k in kind(evs, "cuda_kernel")})
ok(s and s[2] >= 2 and len(names) >= 3 and all(n and n.startswith("kernel_gen") for n in names),
   "kernel names are read again after every re-attach (a name address of an earlier attachment is not trusted)",
   (s, names))

# ---- staying attached ----
p, states, evs = go("off", {"RAILSCOPE_CUDA_DETACH": "off"})
s = stats(p.stdout, "stats")
ons = [x["on"] for x in kind(evs, "cuda_kernel_window")]
ok(s == [1, 1, 0, 0] and ons.count(1) >= 3, "RAILSCOPE_CUDA_DETACH=off: attached once, never finalized, windows go on",
   (s, ons))
p, states, evs = go("cupti-copies", {"RAILSCOPE_CUDA_COPIES": "cupti"})
s = stats(p.stdout, "stats")
ok(s == [1, 1, 0, 0], "copies recorded by CUPTI (enabled outside windows): never detached", s)
p, states, evs = go("subscribed", {"FAKE_CUPTI_SUBSCRIBED": "1"})
s = stats(p.stdout, "stats")
ons = [x["on"] for x in kind(evs, "cuda_kernel_window")]
ok(s == [1, 1, 0, 0] and ons.count(1) >= 3 and "another CUPTI subscriber" in p.stderr,
   "another subscriber holds the slot: stays attached (debug log says why), windows go on", (s, ons, p.stderr[-300:]))
p, states, evs = go("nocb", {"FAKE_CUPTI_NO_DRIVER_CB": "1"})
s = stats(p.stdout, "stats")
ons = [x["on"] for x in kind(evs, "cuda_kernel_window")]
m = re.search(r"(\d+) cancelled by a window", p.stderr)
ok(s == [1, 1, 0, 0] and ons.count(1) >= 3 and m and int(m.group(1)) >= 2,
   "no API callback ever comes: the armed detach is cancelled by each window, windows go on",
   (s, ons, p.stderr[-300:]))
# an idle program (no CUDA call for 700 ms, windows every 400 ms) stays armed: nothing finalizes until its next
# call (the tracer makes none of its own; session 14), a window due meanwhile cancels the arm
p, states, evs = go("idle", args=("2000", "idle"))
b, a, s = stats(p.stdout, "idle_before"), stats(p.stdout, "idle_after"), stats(p.stdout, "stats")
m = re.search(r"(\d+) cancelled by a window", p.stderr)
ok(b and a and s and a[2] == b[2] and s[2] > a[2] and s[3] == 0 and m and int(m.group(1)) >= 1,
   "an idle program: no finalize while it makes no CUDA call (a window cancels the arm), the next call finalizes",
   (b, a, s, m and m.group(0), p.stderr[-300:]))
# a fork while a detach is armed: the child's CUDA call must not finalize CUPTI there (review, session 14)
p, states, evs = go("fork", {"ARM_HOLD": "1", "RAILSCOPE_CUDA_KERNEL_WINDOW": "200/100000/100"}, ("2000", "fork"))
cb, ca = stats(p.stdout, "child_before"), stats(p.stdout, "child_after")
ok("armed_at_fork=1 " in p.stdout and "child_status=0 " in p.stdout and cb and ca and ca[2] == cb[2],
   "a fork while armed: the child's first CUDA call does not finalize CUPTI", (p.stdout[-400:], cb, ca))
p, states, evs = go("koff", {"RAILSCOPE_CUDA_KERNELS": "off"}, ("600",))
s = stats(p.stdout, "stats")
# not attached at all (session 31): attached at set-up and finalized at the first tick before, inside a CUDA call of
# the program, and both open files in its descriptor table (tests/gpu/run_fd_race_cuda.sh met 1 EBUSY in 1.45 M)
ok(s == [0, 0, 0, 0], "kernels off (nothing to ask of CUPTI): CUPTI never attached, never finalized", s)
copies = kind(evs, "cuda_copy_call")
ok(p.returncode == 0 and len(copies) == 300 and set(states.values()) == {"0"},
   "... and every host copy is the cudart wrappers' (300 of 300; device-to-device copies, timed only in windows, "
   "are not recorded without kernels), CUPTI's copy kinds never enabled",
   (p.returncode, len(copies), set(states.values())))
p, states, evs = go("full", {"RAILSCOPE_CUDA_KERNELS": "all"}, ("600",))
s = stats(p.stdout, "stats")
ok(s == [1, 1, 0, 0], "kernels all: never detached", s)

# ---- another client arrives mid-run ----
p, states, evs = go("graph", args=("2000", "graph"))
a, s = stats(p.stdout, "at_event"), stats(p.stdout, "stats")
ons = [x["on"] for x in kind(evs, "cuda_kernel_window")]
ok("graph=0 " in p.stdout and a and s and a[2] >= 1 and s[2] == a[2] and s[3] == 0 and ons.count(1) >= 4 and
   "uses CUDA graphs (cudaStreamBeginCapture)" in p.stderr,
   "a CUDA graph captured mid-run: no finalize after it (CUPTI stays attached), windows go on", (a, s, ons))
for ev in ("register", "subscribe"):
    p, states, evs = go(ev, args=("2000", ev))
    a, s = stats(p.stdout, "at_event"), stats(p.stdout, "stats")
    ok(re.search(ev + r"=0 ", p.stdout), f"{ev}: the other client's call succeeds", p.stdout[-300:])
    ok(a and s and s[2] == a[2] and s[3] == 0, f"{ev}: no finalize after the other client arrived", (a, s))
    if ev == "register":
        ok("owner_other=1" in p.stdout and "another CUPTI client" in p.stderr,
           "register: the other client keeps CUPTI's buffers; railscope warns once", p.stdout[-200:] + p.stderr[-300:])
    else:
        ons = [x["on"] for x in kind(evs, "cuda_kernel_window")]
        ok(ons.count(1) >= 3, "subscribe: windows go on (CUPTI stays attached)", ons)
# ---- another client arrives while a detach is armed (no API callback came since the arm) ----
# (the exit debug line counts this cancel apart from those by a window)
for ev in ("subscribe", "dlsubscribe", "register", "graph", "pgraph_v2", "pgraph_v1", "pgraph_link"):
    p, states, evs = go("armed-" + ev, {"ARM_HOLD": "1", "RAILSCOPE_CUDA_KERNEL_WINDOW": "50/100000/50"},
                        args=("1600", ev))
    a, s = stats(p.stdout, "at_event"), stats(p.stdout, "stats")
    m = re.search(r"(\d+) cancelled by a window, (\d+) by a graph or another client, (\d+) at exit", p.stderr)
    ok(re.search(ev.replace("dl", "") + r"=0 ", p.stdout) and a and s and s[2] == 0 and s[3] == 0 and m and
       m.group(2) == "1" and m.group(3) == "0",
       f"armed, then {ev}: the call succeeds and the armed detach is cancelled first (no finalize when callbacks "
       "come again; counted as the client's or graph's cancel)", (p.stdout[-200:], a, s, m and m.group(0)))

# ---- graph entry points from cuGetProcAddress (looked up at start, as cudart/cuda-python do; called at MS/2) ----
for how in ("v2", "v1", "link"):
    ev = "pgraph_" + how
    p, states, evs = go("detached-" + ev, {"EVENT_DETACHED": "1"}, args=("2000", ev))
    b, s = stats(p.stdout, "before_event"), stats(p.stdout, "stats")
    ons = [x["on"] for x in kind(evs, "cuda_kernel_window")]
    ok(ev + "=0 " in p.stdout and b and s and b[0] == 0 and b[2] >= 1 and s[2] == b[2] and s[3] == 0 and
       ons.count(1) >= 4 and "uses CUDA graphs (cuStreamBeginCapture via cuGetProcAddress)" in p.stderr,
       f"{ev}: looked up early (detaching goes on), called while detached: reaches the driver, no finalize after it, "
       "windows go on", (p.stdout[-300:], b, s, ons, p.stderr[-300:]))


def procaddr(how, *more):
    p = run([DRIVER, FAKE, "procaddr", how, *more], os.path.join(T, "procaddr-" + how + "".join(more)), BASE)
    return p, dict(x.split("=") for x in p.stdout.split() if "=" in x)


for how in ("v2", "v1", "link", "link4"):
    p, r = procaddr(how)
    want = lambda *k: all(r.get(x) == "1" for x in k)  # noqa: E731
    ok(p.returncode == 0 and want("tramp", "reach", "same", "ptsz", "v11") and
       "CUDA graphs (cuStreamBeginCapture via cuGetProcAddress)" in p.stderr,
       f"cuGetProcAddress ({how}): a graph entry point comes back as a trampoline (one per driver pointer, reused) "
       "that is seen and reaches the driver's function with six arguments and its value", (r, p.stderr[-300:]))
    ok(want("plain", "failed", "empty", "unknown"),
       f"cuGetProcAddress ({how}): any other symbol, a failed call, an empty or unknown look-up: result and *pfn "
       "as the driver left them", r)
    ok(want("self", "self4"), f"cuGetProcAddress ({how}) of cuGetProcAddress (5 and 4 arguments) looks up the same way",
       r)
# A process that will never detach gets the driver's pointers untouched (the rewriting reaches only the processes
# it protects): detaching off, every kernel recorded, API records on.
for env in ({"RAILSCOPE_CUDA_DETACH": "off"}, {"RAILSCOPE_CUDA_KERNELS": "all"}, {"RAILSCOPE_CUDA_API": "on"}):
    p = run([DRIVER, FAKE, "procaddr", "v2"], os.path.join(T, "procaddr-never-" + "-".join(env.values())),
            dict(BASE, **env))
    r = dict(x.split("=") for x in p.stdout.split() if "=" in x)
    ok(p.returncode == 0 and r.get("tramp") == "0" and r.get("reach") == "1" and r.get("plain") == "1",
       f"cuGetProcAddress with {env}: no trampoline, the driver's own pointer (it works)", (r, p.stderr[-200:]))
p, r = procaddr("v2", "full")
ok(p.returncode == 0 and r.get("ok") == "48" and r.get("reach") == "48" and 0 < int(r.get("tramp", 0)) < 48 and
   int(r.get("real_after", 0)) == 48 - int(r.get("tramp", 0)) and
   "more graph entry points than railscope can watch" in p.stderr,
   "more distinct graph entry points than trampolines: the rest come back unchanged and working, and CUPTI stays "
   "attached at once", (r, p.stderr[-300:]))
p, r = procaddr("v2", "threads")
ok(p.returncode == 0 and r.get("reach") == "192",
   "8 threads look up and call the same 24 graph entry points at once: each call reaches its driver function with "
   "its six arguments (slots claimed without a lock)", (r, p.stderr[-300:]))

# ---- a look-up while railscope holds attach_lock, the pool full (review H_REVIEW9 L3) ----
# The fake CUPTI's first cuptiSubscribe (arm_detach calls it under attach_lock) resolves 48 graph entry points
# through cuGetProcAddress_v2: the last 16 find the pool full, whose path must not take the lock. Only the
# window opened at initialisation (the next is due in 100 s): the detach armed around that call can only be
# cancelled by the writer's tick for the graph (else it lasts until exit).
p, states, evs = go("lookup-under-lock",
                    {"FAKE_CUPTI_LOOKUPS": "48", "RAILSCOPE_CUDA_KERNEL_WINDOW": "200/100000/100000"}, ("1200",))
ok(p.returncode == 0 and "more graph entry points than railscope can watch" in p.stderr,
   "a look-up inside a CUPTI call made under the attach lock finds the pool full: no deadlock, the program ends",
   (p.returncode, p.stderr[-300:]))
s, e = stats(p.stdout, "stats"), stats(p.stdout, "exit_stats")
m = re.search(r"(\d+) cancelled by a window, (\d+) by a graph or another client, (\d+) at exit", p.stderr)
ok(s == [1, 1, 0, 0] and e == s and m and m.group(0).startswith("0 cancelled by a window, 1 by a graph") and
   m.group(3) == "0",
   "... and CUPTI stays attached from then on: the detach armed around that call backs off and the writer's tick "
   "cancels it as a graph's; never finalized", (s, e, m and m.group(0)))

# ---- a driver older than 12.0: libcuda without cuGetProcAddress_v2 (reviews H_REVIEW9 L6, H_REVIEW10 M2) ----
# fakenov2/: that libcuda (version 11080; its cuGetProcAddress fails a later version), a program built for 12.x that
# probes dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2") before it falls back to the 4-argument function, and a library
# bound to _v2 through its PLT (fake_cuda_probe.c).
PROBE = os.path.join(NCCL_BIN, "fakenov2", "fake_cuda_probe")


def probe(mode, preload=True):
    p = run([PROBE, os.path.dirname(PROBE), mode], os.path.join(T, "nov2-%s-%d" % (mode, preload)), BASE,
            preload=preload)
    return p, dict(x.split("=") for x in p.stdout.split() if "=" in x)


p, r = probe("probe")
p0, r0 = probe("probe", preload=False)
ok(p.returncode == 0 and r.get("default_v2") == "0" and r.get("cap_rc") == "0" and r.get("cap_reach") == "1" and
   r.get("cap_tramp") == "1" and all(r.get(k) == r0.get(k) for k in ("default_v2", "cap_rc", "cap_st", "cap_reach")),
   "no cuGetProcAddress_v2 in the driver: a dlsym(RTLD_DEFAULT) probe finds none, as untraced, and the program's "
   "4-argument look-up works (its graph entry point behind a trampoline)", (r, r0, p.stderr[-300:]))
p, r = probe("link")
ok(p.returncode == 0 and r.get("v12_rc") == "1" and r.get("v12_st") == "-1" and
   [r.get("cap_" + k) for k in ("rc", "st", "tramp", "reach")] == ["0", "0", "1", "1"] and
   [r.get("empty_" + k) for k in ("rc", "st", "null")] == ["0", "1", "1"] and
   [r.get("unknown_" + k) for k in ("rc", "st", "null")] == ["0", "1", "1"],
   "... bound to _v2 through a PLT, railscope's answers as the 4-argument function: a version above the driver's "
   "fails (status untouched), a graph entry point behind a trampoline with status SUCCESS, an empty look-up "
   "SYMBOL_NOT_FOUND", (r, p.stderr[-300:]))

# ---- where a graph would not be seen, never detach ----
p, states, evs = go("static-rt", {"FAKE_RT_NAME": "librtcopy.so.13"})
s = stats(p.stdout, "stats")
ok(s == [1, 1, 0, 0] and "CUDA graphs would not be seen" in p.stderr,
   "no shared libcudart (a static cudart's graphs are invisible): CUPTI stays attached", (s, p.stderr[-300:]))
# ---- the arm once the window's records are in (session 32) ----
ARMED = r"CUPTI: detach armed at [0-9.]+ s, ([0-9.]+) ms after the window's close \((its records in|at the tick)\)"
p, states, evs = go("early", EARLY, ("2500",))
arms = [(float(a), how) for a, how in re.findall(ARMED, p.stderr)]
_, tails = detach_tails(evs)
pt, _, evt = go("early-tickarm", dict(EARLY, RAILSCOPE_CUDA_ABLATE="tickarm"), ("2500",))
arms_t = [(float(a), how) for a, how in re.findall(ARMED, pt.stderr)]
_, tails_t = detach_tails(evt)
# the quiet rule: the kernel's buffer comes back at the 60 ms look, with a record the 20 ms look had not, so the arm
# waits for the next look, which brings nothing new (140 ms); without the rule it would come at 60 ms
ok(len(arms) >= 2 and all(how == "its records in" and 100 < a < 250 for a, how in arms) and
   arms_t and all(how == "at the tick" and a > 250 for a, how in arms_t),
   "after a window's close the detach is armed as soon as CUPTI has handed back the buffer of the kernel still "
   "running (60 ms) and a look after it brought no new record (140 ms, not 60), not at the next tick (300 ms; "
   "RAILSCOPE_CUDA_ABLATE=tickarm: at the tick) (ms, why)",
   (arms, arms_t))
ok(tails and tails_t and med(tails) < 0.75 * med(tails_t),
   "... so CUPTI is finalized sooner after each window (median close-to-finalize, ms)", (tails, tails_t))
# the n-th close leaves kernel 900 + n running; a close armed (a detach marker after it, before the next window) must
# have its kernel in the trace, timed. A close the run's exit came too soon after (never armed) may have its kernel
# brought untimed by the exit's forced flush: not required.
late = sorted(k["correlation"] for k in kind(evs, "cuda_kernel") if k["correlation"] >= 900)
win = sorted((x for x in kind(evs, "cuda_kernel_window") if not int(str(x["flags"]), 0) & KWIN_DETACHED),
             key=lambda x: x["ts_ns"])
dets = [x["ts_ns"] for x in kind(evs, "cuda_kernel_window") if int(str(x["flags"]), 0) & KWIN_DETACHED]
closes = [x["ts_ns"] for x in win if x["on"] == 0]
opens = [x["ts_ns"] for x in win if x["on"] == 1]
armed = [900 + i for i, c in enumerate(closes)
         if any(c < d and not any(c < o < d for o in opens) for d in dets)]
ok(len(armed) >= 2 and set(armed) <= set(late) and
   all(k["end"] - k["ts_ns"] == 60000000 for k in kind(evs, "cuda_kernel") if k["correlation"] >= 900),
   "... and the kernel that ran past each armed close is in the trace, timed (not cut by an early forced flush) "
   "(kernels of the armed closes, kernels timed)", (armed, late, arms, p.stderr[-300:]))
p, states, evs = go("early-slow", dict(EARLY, FAKE_CUPTI_INFLIGHT_MS="1000"), ("2500",))
arms = [(float(a), how) for a, how in re.findall(ARMED, p.stderr)]
ok(p.returncode == 0 and arms and all(how == "at the tick" and a > 250 for a, how in arms) and
   "activity records without timestamps were skipped" in p.stderr,
   "a kernel still running at the tick after the close (1 s): armed at that tick as before, its record untimed",
   (arms, p.stderr[-300:]))
p, states, evs = go("early-keeps", KEEPS, ("2500",))
arms = [(float(a), how) for a, how in re.findall(ARMED, p.stderr)]
ok(p.returncode == 0 and len(arms) >= 2 and arms[0][1] == "at the tick" and arms[0][0] > 250 and
   any(how == "its records in" for _, how in arms[1:]),
   "a buffer of an earlier attachment that never came back (kept at the forced flush, dropped at the finalize) does "
   "not hold up a later attachment's early arm: the count of buffers out is per attachment (ms, why)",
   (arms, p.stderr[-300:]))
p, states, evs = go("early-lazy", LAZY, ("2500",))
arms = [(float(a), how) for a, how in re.findall(ARMED, p.stderr)]
timed = sorted(k["correlation"] for k in kind(evs, "cuda_kernel") if k["correlation"] >= 900)
ok(p.returncode == 0 and len(arms) >= 2 and arms[0][1] == "its records in" and
   all(how == "at the tick" and a > 250 for a, how in arms[1:]) and "came without their end at an early arm" in p.stderr
   and timed and 900 not in timed,
   "a CUPTI holding no buffer for a running kernel's record: the first early arm cuts it (untimed), the tracer says so "
   "and arms at the tick after each later close, whose running kernels then come timed (arms; timed kernels)",
   (arms, timed, p.stderr[-300:]))
p, states, evs = go("gap", GAP, ("2000",))
pt, _, evt = go("gap-tickarm", dict(GAP, RAILSCOPE_CUDA_ABLATE="tickarm"), ("2000",))
s, st = stats(p.stdout, "stats"), stats(pt.stdout, "stats")
closes = [x for x in kind(evs, "cuda_kernel_window") if x["on"] == 0 and not int(str(x["flags"]), 0) & KWIN_DETACHED]
ok(s and st and s[2] == 0 and st[2] == 0 and len(closes) >= 2,
   "windows one tick apart: the tick after each close opens the next window, so no detach is armed early and CUPTI "
   "is never finalized (as with the arm at the tick: RAILSCOPE_CUDA_ABLATE=tickarm) (stats, stats tickarm, closes)",
   (s, st, len(closes)))
if _runs:
    raise RuntimeError("runs started and never checked: %s" % sorted(_runs))
finish()
