#!/bin/bash
# An idle traced process costs few wake-ups: the writer thread sleeps up to 100 ms while nothing comes in (it woke
# every 20 ms before session 13: 50 times a second, ~0.3 % of a core on the dev VM, all context switches), and no
# sleep runs past its next tick, so the tick hooks (frames, CUDA kernel windows) keep their period. Counted from
# the thread's voluntary context switches (/proc), not timed: a loaded machine adds involuntary ones only.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
plan 3
out=$(RAILSCOPE_OUT=$T/idle run_timeout 30 env LD_PRELOAD="$RS_PRELOAD_SHELL" python3 -c '
import glob, time
def wr():
    for t in glob.glob("/proc/self/task/*"):
        if open(t + "/comm").read().strip() == "railscope-wr":
            return int(dict(l.split(":") for l in open(t + "/status"))["voluntary_ctxt_switches"])
time.sleep(0.5)  # start-up done
a = wr(); time.sleep(3); b = wr()
print(f"wakeups={(b - a) if a is not None and b is not None else -1}")' 2>&1)
diag "$out"
n=$(printf '%s\n' "$out" | sed -n 's/^wakeups=//p')
ok "the writer thread was found and counted (got '$n')" test "${n:--1}" -ge 0
# ticks alone (500 ms): 6 in 3 s; the 100-ms idle sleeps: 30; the old 20-ms ceiling gave ~150
ok "idle 3 s: at most 45 wake-ups (got $n; 20-ms sleeps gave ~150)" test "${n:-999}" -le 45
# a short flush interval still ticks at its own period: 50 ms -> ~60 wake-ups in 3 s, not one per 100 ms
out=$(RAILSCOPE_FLUSH_MS=50 RAILSCOPE_OUT=$T/idle50 run_timeout 30 env LD_PRELOAD="$RS_PRELOAD_SHELL" python3 -c '
import glob, time
def wr():
    for t in glob.glob("/proc/self/task/*"):
        if open(t + "/comm").read().strip() == "railscope-wr":
            return int(dict(l.split(":") for l in open(t + "/status"))["voluntary_ctxt_switches"])
time.sleep(0.5)
a = wr(); time.sleep(3); b = wr()
print(f"wakeups={(b - a) if a is not None and b is not None else -1}")' 2>&1)
diag "$out"
n50=$(printf '%s\n' "$out" | sed -n 's/^wakeups=//p')
ok "RAILSCOPE_FLUSH_MS=50: the ticks set the pace, 45-90 wake-ups in 3 s (got $n50)" \
    sh -c "[ '${n50:-0}' -ge 45 ] && [ '${n50:-0}' -le 90 ]"
