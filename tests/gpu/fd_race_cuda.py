#!/usr/bin/env python3
"""dash's `cmd >&2` descriptor sequence in a CUDA program while railscope's sampling windows open and close.

tests/core/fd_race.c checks that the tracer's own reads (host facts, thread names, NCCL's log) never take a
descriptor number in the program's table (tracer/private_fds.c). CUPTI's attach and detach between windows run on
the writer thread and inside the program's CUDA calls, and what CUPTI opens there lives in the program's table: this
runs the sequence (save fd 1 with F_DUPFD, close(1), dup2(2, 1), check, put it back) on one thread while the main
thread runs GPU work through many short windows (RAILSCOPE_CUDA_KERNEL_WINDOW, set by the caller), and counts what
went wrong: dup2() failing (EBUSY: another open took the number between close and dup2) or fd 1 not being the file
dup2() put there. Run it untraced and traced (tests/gpu/run_fd_race_cuda.sh); prints one JSON line.

Usage: fd_race_cuda.py SECONDS [--warm]   (--warm: one matmul and D2H copy before the juggling starts, so that
whatever the first copy sets up happens before it: tells a one-time open at the first copy from a recurring one)
"""
import fcntl
import json
import os
import sys
import threading
import time

import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
stop = threading.Event()
res = {"rounds": 0, "ebusy": 0, "other_errors": 0, "wrong_file": 0, "first_error": ""}


def juggle():
    st2 = os.fstat(2)
    while not stop.is_set():
        res["rounds"] += 1
        try:
            saved = fcntl.fcntl(1, fcntl.F_DUPFD, 10)
        except OSError as e:
            res["other_errors"] += 1
            res["first_error"] = res["first_error"] or f"F_DUPFD: {e}"
            continue
        try:
            os.close(1)
            os.dup2(2, 1)
            st = os.fstat(1)
            if (st.st_dev, st.st_ino) != (st2.st_dev, st2.st_ino):
                res["wrong_file"] += 1
                res["first_error"] = res["first_error"] or "fd 1 is not the file dup2 put there"
        except OSError as e:
            if e.errno == 16:
                res["ebusy"] += 1
            else:
                res["other_errors"] += 1
            res["first_error"] = res["first_error"] or f"close/dup2: {e}"
        finally:
            try:
                os.dup2(saved, 1)
                os.close(saved)
            except OSError as e:
                res["other_errors"] += 1
                res["first_error"] = res["first_error"] or f"restore: {e}"


a = torch.randn(2048, 2048, device="cuda")
b = torch.randn(2048, 2048, device="cuda")
if "--warm" in sys.argv[2:]:
    (a @ b)[0, :8].cpu()
t = threading.Thread(target=juggle)
t.start()
t0 = time.time()
steps = 0
while time.time() - t0 < secs:
    for _ in range(20):
        c = a @ b
    h = c[0, :8].cpu()  # a D2H copy: the cudart wrapper outside windows, CUPTI inside
    steps += 1
stop.set()
t.join()
res["steps"] = steps
res["seconds"] = round(time.time() - t0, 2)
sys.stderr.write(json.dumps(res) + "\n")
sys.exit(1 if res["ebusy"] or res["wrong_file"] or res["other_errors"] else 0)
