"""CPU time of the whole process over the timed steps, and by thread name, for bench/gpu/hostcost.py.

The bench workloads take a snapshot when their timed steps start and when they end: process CPU time (every
thread: the training loop, PyTorch's autograd thread, railscope's writer thread, CUPTI's worker) in ns, and each
thread's CPU time in ns from /proc/self/task/*/schedstat (stat's 10 ms ticks where schedstat is missing), summed
by thread name. Without a CPU performance counter (none
on the H200 VM) this is the host work a tracer adds, without the waits that make wall time wander there."""
import os
import time

def _thread_ns(tid):
    """A thread's CPU time in ns: /proc/.../schedstat (its first field), else stat's user+system ticks."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    with open(f"/proc/self/task/{tid}/stat") as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) * 1e9 / os.sysconf("SC_CLK_TCK")


def snap():
    by = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                comm = f.read().strip()
            by[comm] = by.get(comm, 0) + _thread_ns(tid)
        except OSError:
            continue  # a thread that ended: its time stays in the process total
    return time.process_time_ns(), by


def diff(a, b):
    """{"cpu_ns": process CPU between the snapshots, "threads_ms": {name: ms}} (names with any time)."""
    threads = {k: (v - a[1].get(k, 0)) / 1e6 for k, v in b[1].items()}
    return dict(cpu_ns=b[0] - a[0], threads_ms={k: v for k, v in threads.items() if v > 0})
