#!/usr/bin/env python3
"""The report extrapolates sampled GPU activity (analyzer/analyze_sampling.c, issue 16): a one-rank trace whose
steps each spend 1 ms in an exposed H2D copy, 6 ms in kernels and 3 ms idle, with kernel/copy records only
inside sampling windows (sampling_gen.c, built here against the tree's writer objects). The report's shares
must be those of every step (60/10/30 %), not "other" for the steps outside the windows, and it must say what
was sampled. A slow step outside the windows (a host stall) keeps the GPU work of a window step, the rest is
idle. With no step inside a window it falls back to the old note (rest counted as other)."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

objs = [os.path.join(BUILD, "lib", "tracer", "writer.o"), os.path.join(BUILD, "lib", "formats", "rtrace_tables.o")]
need(CLI, *objs)
plan(41)
GEN = os.path.join(T, "sampling_gen")
cflags = ["-fsanitize=address,undefined"] if SAN and "asan" in SAN else ["-fsanitize=thread"] if SAN else []
cc = subprocess.run(["cc", "-std=gnu11", "-O1", "-I" + TOP, "-I" + os.path.join(TOP, "formats"),
                     "-I" + os.path.join(TOP, "tracer"), *cflags, "-o", GEN,
                     os.path.join(TOP, "tests", "nccl", "sampling_gen.c"), *objs, "-lzstd", "-lpthread", "-lm"],
                    capture_output=True, text=True)
ok(cc.returncode == 0, "the generator builds against the tree's writer", cc.stderr)


def report(steps, w0, w1, stall=-1, scale=1, winextra=0):
    f = os.path.join(T, f"s{steps}-{w0}-{w1}-{stall}-{scale}-{winextra}.rtrace")
    g = subprocess.run([GEN, f, str(steps), str(w0), str(w1), str(stall), str(scale), str(winextra)],
                       capture_output=True, text=True)
    p = subprocess.run([CLI, "report", "--json", f], capture_output=True, text=True)
    try:
        return json.loads(p.stdout), g.stderr + p.stderr
    except ValueError:
        return None, g.stderr + p.stderr + p.stdout[:300]


j, err = report(20, 5, 10)
a = j["attribution_per_step"] if j else {}
share = {k: a.get(k, 0) / 0.010 for k in ("compute", "h2d_exposed", "host_idle", "other")}
ok(j and abs(share["compute"] - 0.6) < 0.01, "compute share of every step: 60 % (windows cover 5 of 20 steps)",
   (share, err))
ok(j and abs(share["h2d_exposed"] - 0.1) < 0.01 and abs(share["host_idle"] - 0.3) < 0.01,
   "exposed H2D 10 %, host idle 30 %", share)
ok(j and share["other"] < 0.01, "nothing left in other", share)
w = " ".join(j["warnings"]) if j else ""
ok("GPU activity was sampled" in w and "5 of 20 steps" in w and "extrapolated" in w,
   "the report says what was sampled and what was extrapolated", w)
ok("counted as other" not in w, "no 'counted as other' note once extrapolated", w)
ok("RAILSCOPE_CUDA_KERNEL_WINDOW=" not in w, "no window remedy once a window covered steps", w)
ok("every kernel was traced" not in w, "sampled windows: no full-capture note", w)
sm = j.get("sampling", {}) if j else {}
ok({k: sm.get(k) for k in ("ranks", "steps", "steps_in_windows", "steps_extrapolated", "ranks_without_window_step")}
   == dict(ranks=1, steps=20, steps_in_windows=5, steps_extrapolated=15, ranks_without_window_step=0)
   and abs(sm.get("window_time_share", 0) - 0.25) < 0.01,
   "JSON sampling: 5 of 20 steps in windows (25 % of step time), 15 extrapolated", sm)

ok(sm.get("window_steps_measured") == 0 and sm.get("window_step_excess", 0) is None
   and "kernel tracing cost measured" not in w,
   "14 steps wholly outside the windows: too few to measure the tracing cost against", (sm, w))


def cost_case(steps, w0, w1, stall=-1, winextra=2):
    j, err = report(steps, w0, w1, stall, 1, winextra)
    return (j.get("sampling", {}) if j else {}), (" ".join(j["warnings"]) if j else ""), err


# The run measures the tracer's own cost: 25 window steps of 12 ms (2 ms idle more: CUPTI's cost planted), the
# step the window's start cuts 12 ms too, 34 steps of 10 ms wholly outside. Excess: the medians, 12 over 10;
# cost: the 26 steps the window touched (312 ms) less 26 outside medians, over 652 ms of steps.
sm, w, err = cost_case(60, 5, 30)
ok(sm.get("window_steps_measured") == 25 and abs(sm.get("window_step_excess", 0) - 0.2) < 0.001
   and abs(sm.get("window_cost_share", 0) - 52 / 652) < 0.0005,
   "planted +2 ms in the window's steps: excess 20 %, 7.98 % of step time (the cut step included; JSON)", (sm, err))
ok("the 25 steps inside kernel windows took +20.0 % over the median step wholly outside them" in w
   and "cost 7.98 % of step time" in w, "and the report says so", w)
# a 40 ms stall outside the windows moves no median (a mean would say +11.6 %); it adds to the step time
sm, w, err = cost_case(60, 5, 30, 45)
ok(abs(sm.get("window_step_excess", 0) - 0.2) < 0.001 and abs(sm.get("window_cost_share", 0) - 52 / 682) < 0.0005,
   "a stalled step outside the windows: still 20 %, over 682 ms", (sm, err))
sm19, w19, _ = cost_case(60, 5, 24)
sm20, w20, _ = cost_case(60, 5, 25)
ok(sm19.get("window_steps_measured") == 19 and abs(sm19.get("window_step_excess", 0) - 0.2) < 0.001
   and "kernel tracing cost measured" not in w19 and "the 20 steps inside kernel windows" in w20,
   "19 window steps: in the JSON only; 20: in the text too", (sm19, w19, w20))
sm, w, err = cost_case(60, 5, 30, -1, 0)
ok(sm.get("window_steps_measured") == 25 and abs(sm.get("window_step_excess", 1)) < 0.001
   and "none above the steps' own noise" in w and "would cost each step" not in w,
   "window steps as long as the others: no cost, said so", (sm, w))
sm, w, err = cost_case(30, 5, 30)
ok(sm.get("window_steps_measured") == 0 and "kernel tracing cost measured" not in w,
   "4 steps outside (a short run's warm-up): nothing measured", (sm, w))
# two ranks, +2 ms and +0 ms in their windows: 25 steps each at 12 and 10 ms against medians of 10: 10 %
fs = []
for rank, extra in ((0, 2), (1, 0)):
    fs.append(os.path.join(T, f"rank{rank}.rtrace"))
    subprocess.run([GEN, fs[-1], "60", "5", "30", "-1", "1", str(extra), str(rank)], check=True)
p = subprocess.run([CLI, "report", "--json", *fs], capture_output=True, text=True)
sm = json.loads(p.stdout).get("sampling", {}) if p.returncode == 0 else {}
ok(sm.get("ranks") == 2 and sm.get("window_steps_measured") == 50
   and abs(sm.get("window_step_excess", 0) - 0.1) < 0.001, "two ranks, +20 % and +0 %: 10 % over 50 steps",
   (sm, p.stderr))
# The detach tails (session 20): CUPTI stays attached after a window until it is finalized (CUDA_KERNEL_WINDOW
# with RS_KWIN_DETACHED marks when); those steps are not outside steps, and what they cost is measured as the
# window's: 80 steps, a window over 5-29 (+2 ms), then 25 steps attached (+1 ms) and the detach at their end.
def tail_case(tail, tailextra, steps=80):
    f = os.path.join(T, f"tail{tail}-{tailextra}.rtrace")
    g = subprocess.run([GEN, f, str(steps), "5", "30", "-1", "1", "2", "0", str(tail), str(tailextra)],
                       capture_output=True, text=True)
    p = subprocess.run([CLI, "report", "--json", f], capture_output=True, text=True)
    j = json.loads(p.stdout) if p.returncode == 0 and p.stdout.startswith("{") else {}
    return j.get("sampling", {}), " ".join(j.get("warnings", [])), g.stderr + p.stderr


sm, w, err = tail_case(25, 1)
ok(sm.get("detach_tails") == 1 and abs((sm.get("detach_tail_mean_ms") or 0) - 275) < 0.01
   and sm.get("detach_tail_steps_measured") == 25 and abs((sm.get("detach_tail_step_excess") or 0) - 0.1) < 0.001
   and abs((sm.get("detach_tail_cost_share") or 0) - 25 / 877) < 0.0005,
   "a 25-step tail at +1 ms: 1 tail of 275 ms, its steps +10 %, 2.85 % of step time (JSON)", (sm, err))
ok(abs((sm.get("window_step_excess") or 0) - 0.2) < 0.001 and abs((sm.get("window_cost_share") or 0) - 52 / 877) < 0.0005,
   "the window's own cost stays 20 %, its 26 steps over 877 ms", sm)
ok("CUPTI stayed attached 275 ms on average until it was detached: the 25 steps inside those tails took +10.0 %" in w
   and "cost 2.85 % of step time" in w, "and the report says so", w)
# the same run without the marker (a trace from before session 20): the tail's steps are outside steps, no tail
sm0, w0, err = tail_case(0, 1)
ok(sm0.get("detach_tails") == 0 and sm0.get("detach_tail_step_excess", 0) is None
   and sm0.get("detach_tail_cost_share", 0) is None and "stayed attached" not in w0,
   "no detach marker: no tail measured (null), nothing said", (sm0, w0, err))
# a detach 0.3 ms into the window's second step: one step wholly in the tail, one cut; 19 tail steps would be too
# few for the text (as the window's), the JSON has them
sm, w, err = tail_case(-1, 0)
ok(sm.get("detach_tails") == 1 and abs((sm.get("detach_tail_mean_ms") or 0) - 10.3) < 0.01
   and sm.get("detach_tail_steps_measured") == 1 and "stayed attached" not in w,
   "a tail that cuts a step: 10.3 ms, one step inside it, JSON only", (sm, w, err))
# a tail's steps are not outside steps: 45 of them (+1 ms) against 29 outside (10 ms) would move the outside median
sm, w, err = tail_case(45, 1, steps=100)
ok(sm.get("detach_tail_steps_measured") == 45 and abs((sm.get("window_step_excess") or 0) - 0.2) < 0.001,
   "a tail longer than the steps outside: the window's excess is still measured against the outside steps (20 %)",
   (sm, err))
# a marker inside a window (hostile: the tracer writes one only after a close) neither closes the window nor ends a tail
sm, w, err = tail_case(-2, 0)
ok(sm.get("steps_in_windows") == 25 and sm.get("detach_tails") == 0, "a detach marker inside a window changes nothing",
   (sm, err))
# A real ResNet-50 DDP run on the H200 (session 11: 1525 steps, a window at CUDA init over its 10 s first step, one
# 500 ms window at +30 s over 12 steps): the window steps took ~13 % longer; the windows cost ~0.09 % of step time,
# not the first step's 10 s of JIT (7 % when it was counted)
real = os.path.join(TOP, "bench", "gpu", "results", "2026-12-03-s11", "call5-resnet-default-1.rtrace")
p = subprocess.run([CLI, "report", "--json", real], capture_output=True, text=True)
sm = json.loads(p.stdout).get("sampling", {}) if p.returncode == 0 else {}
ok(sm.get("window_steps_measured") == 12 and 0.05 < (sm.get("window_step_excess") or 0) < 0.25
   and 0 < (sm.get("window_cost_share") or 0) < 0.005,
   "real ResNet trace: window steps +5-25 %, the windows under 0.5 % of step time", (sm, p.stderr[-300:]))
# A real ResNet-50 run on the H200 with a window every 5 s and the detach armed a tick after each close (session 20,
# call 2): 8 tails of ~0.45 s (a 500 ms tick and the wait for the program's next CUDA call), their steps ~12 % longer
real = os.path.join(TOP, "bench", "gpu", "results", "2026-12-04-s20", "call2-resnet-default-w5s-1.rtrace")
p = subprocess.run([CLI, "report", "--json", real], capture_output=True, text=True)
j = json.loads(p.stdout) if p.returncode == 0 else {}
sm = j.get("sampling", {})
ok(sm.get("detach_tails") == 8 and 300 < (sm.get("detach_tail_mean_ms") or 0) < 800
   and (sm.get("detach_tail_steps_measured") or 0) >= 40 and 0 < (sm.get("detach_tail_step_excess") or 0) < 0.3
   and 0 < (sm.get("detach_tail_cost_share") or 0) < 0.02 and sm.get("window_steps_measured") == 63
   and any("CUPTI stayed attached" in x for x in j.get("warnings", [])),
   "real ResNet trace with detach marks: 8 tails of 0.3-0.8 s, their steps measured and said", (sm, p.stderr[-300:]))

# Nothing dropped without a word: 20 truncated rank files give a warning each, more than the 16 a report keeps;
# the last one kept says how many more there were.
tf = []
for rank in range(20):
    tf.append(os.path.join(T, f"trunc{rank}.rtrace"))
    subprocess.run([GEN, tf[-1], "60", "5", "30", "-1", "1", "0", str(rank)], check=True)
    with open(tf[-1], "r+b") as fh:
        fh.truncate(os.path.getsize(tf[-1]) * 2 // 3)
html = os.path.join(T, "trunc.html")
p = subprocess.run([CLI, "report", "--json", "--html", html, *tf], capture_output=True, text=True)
ws = json.loads(p.stdout).get("warnings", []) if p.stdout.startswith("{") else []
m = re.match(r"([0-9]+) more warnings not shown \(a report keeps 15\)$", ws[-1]) if ws else None
ok(len(ws) == 16 and m and int(m.group(1)) >= 5 and sum("trunc" in x for x in ws) == 15,
   "20 truncated files: 15 warnings kept, the 16th counts the rest", (len(ws), ws[-2:], p.stderr[-300:]))
page = open(html).read() if os.path.exists(html) else ""
ok(page.count('<div class="warn">') == 9 and f"{20 - 8} more warnings: see the text or JSON report" in page,
   "the HTML page shows 8 and says how many more there are (20 - 8)", page[-600:])

# full capture whose window opens late (steps before CUDA init, or after a take-over): 24 steps outside it, but
# what a full run's steps cost is not a window's
j, err = report(60, -2, 25, -1, 1, 2)
sm = j.get("sampling", {}) if j else {}
w = " ".join(j["warnings"]) if j else ""
ok(sm.get("window_steps_measured") == 0 and "kernel tracing cost measured" not in w
   and "every kernel was traced" in w, "full capture with a late window: no window cost measured", (sm, w, err))

# a 40 ms step outside the windows (a host stall, same GPU work): 6 ms compute, 33 ms idle, not 60/10/30 %
j, err = report(20, 5, 10, 15)
st = j["steps"][15]["attribution"] if j else {}
ok(j and abs(st.get("compute", 0) - 0.006) < 1e-4 and abs(st.get("h2d_exposed", 0) - 0.001) < 1e-4,
   "a slow step outside the windows gets the window steps' GPU work (6 ms compute, 1 ms H2D)", (st, err))
ok(j and abs(st.get("host_idle", 0) - 0.033) < 1e-4, "and the rest of it as host idle (33 ms)", st)

# full capture (one mode-2 window over the whole run): the same shares, no sampling note, and the note that
# CUPTI's own cost shows as host idle in such a run
j, err = report(20, -1, 0)
a = j["attribution_per_step"] if j else {}
w = " ".join(j["warnings"]) if j else ""
ok(j and abs(a.get("compute", 0) / 0.010 - 0.6) < 0.01 and "GPU activity was sampled" not in w,
   "full capture: compute 60 %, nothing sampled or extrapolated", (a, w, err))
ok("every kernel was traced (RAILSCOPE_CUDA_KERNELS=all) on 1 rank(s)" in w and "host idle" in w,
   "full capture: the report says CUPTI's own cost shows as host idle", w)
sm = j.get("sampling", {}) if j else {}
ok(sm.get("window_steps_measured") == 0 and sm.get("window_step_excess", 0) is None
   and "kernel tracing cost measured" not in w, "full capture: no step outside a window, no cost measured", (sm, w))

j, err = report(10, 20, 30)  # no window covers a step
a = j["attribution_per_step"] if j else {}
w = " ".join(j["warnings"]) if j else ""
ok(j and a.get("compute", 1) == 0 and "counted as other" in w,
   "no step inside a window: nothing extrapolated, the old note stays", (a, w))
ok(j and "GPU activity was sampled" not in w, "and no extrapolation note", w)
sm = j.get("sampling", {}) if j else {}
ok(sm.get("steps_in_windows") == 0 and sm.get("steps_extrapolated") == 0 and sm.get("ranks_without_window_step") == 1,
   "JSON sampling: no step in a window, nothing extrapolated, the rank counted", sm)
# the remedy names the first window that would land on this run's middle step: the init window opened 5 ms
# before the first step, steps are 10 ms, the middle one (5 of 10) starts 55 ms after it
ok("RAILSCOPE_CUDA_KERNEL_WINDOW=500/30000/55 " in w, "the report names the window setting that samples this run", w)
# 1 s steps (every duration x100): a 500 ms window can never cover 98 % of one, so the suggested window must
# hold two of them (2 x 1001 ms, rounded up to 100 ms), at the middle step (5.5 s after the init window)
j, err = report(10, 20, 30, -1, 100)
w = " ".join(j["warnings"]) if j else ""
ok("RAILSCOPE_CUDA_KERNEL_WINDOW=2100/30000/5500 " in w, "long steps: the suggested window holds two of them", (w, err))
# Real traces from the H200. The suggested first window, counted from the window at CUDA init, must open on the
# steady steps: after step 1 starts, a window's length before the last.


def remedy_on_steady_steps(name):
    """The report's warnings on a real trace, and whether its suggested window lands on the steady steps."""
    real = os.path.join(TOP, "tests", "nccl", "data", name)
    d = subprocess.run([CLI, "dump", real], capture_output=True, text=True).stdout.splitlines()
    t = lambda ln: float(ln.split()[0])  # noqa: E731
    w0 = min((t(x) for x in d if "cuda_kernel_window on=1" in x), default=0)
    steps = [t(x) for x in d if re.search(r'message="step [0-9]+"', x)]
    p = subprocess.run([CLI, "report", "--json", real], capture_output=True, text=True)
    w = " ".join(json.loads(p.stdout)["warnings"]) if p.returncode == 0 else p.stderr
    m = re.search(r"RAILSCOPE_CUDA_KERNEL_WINDOW=([0-9]+)/30000/([0-9]+) ", w)
    at = w0 + int(m.group(2)) / 1e3 if m else 0
    good = bool(m) and len(steps) > 2 and steps[1] <= at <= steps[-1] - int(m.group(1)) / 1e3
    return w, good, (w0, steps[1:2], steps[-1:], w)


# ResNet-50 DDP under the default (session 10): its first step took 10 s (the fresh machine's first process
# JIT-compiled NCCL's PTX, session 11) and both windows fell inside it.
w, good, why = remedy_on_steady_steps("resnet50-short-default.rtrace")
ok(good, "real ResNet-50 trace: the suggested first window opens on its steady steps", why)
# The transformer (session 11): one process, no rank from a launcher, its windows recorded no kernel at all (the
# second fell in a 2.4 s first step). It was taken for a launcher (no GPU record, no NCCL) and left out of the
# sampling counts: "0 of 0 ranks", and no remedy. A process that copies to the GPU is a rank.
w, good, why = remedy_on_steady_steps("transformer-window-in-step0.rtrace")
ok(good and "(1 of 1 ranks had no step inside a window" in w,
   "real transformer trace with no kernel in its windows: counted as a rank, remedy on its steady steps", why)
finish()
