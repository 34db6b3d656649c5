"""CPU time of the whole process over the timed steps, and by thread name, for bench/gpu/hostcost.py.

The bench workloads take a snapshot when their timed steps start and when they end: process CPU time (every
thread: the training loop, PyTorch's autograd thread, railscope's writer thread, CUPTI's worker) in ns, and each
thread's user+system ticks from /proc/self/task, summed by thread name. Without a CPU performance counter (none
on the H200 VM) this is the host work a tracer adds, without the waits that make wall time wander there."""
import os
import time

TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def snap():
    by = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                s = f.read()
        except OSError:
            continue  # a thread that ended: its time stays in the process total
        comm = s[s.index("(") + 1:s.rindex(")")]
        fields = s[s.rindex(")") + 2:].split()
        by[comm] = by.get(comm, 0) + int(fields[11]) + int(fields[12])
    return time.process_time_ns(), by


def diff(a, b):
    """{"cpu_ns": process CPU between the snapshots, "threads_ms": {name: ms}} (names with any time)."""
    threads = {k: (v - a[1].get(k, 0)) * TICK_NS / 1e6 for k, v in b[1].items()}
    return dict(cpu_ns=b[0] - a[0], threads_ms={k: v for k, v in threads.items() if v > 0})
