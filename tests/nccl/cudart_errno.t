#!/usr/bin/env python3
"""The cudart copy wrappers (preload/cuda/cudart.c) leave errno as the real call left it, whatever the
recording did afterwards (the skeleton of preload/dl.h: RS_WRAP_CALL keeps it, RS_WRAP_LEAVE restores it).
The recording of a pageable copy unwinds the caller's stack, and its first one dlopen's libunwind: before the
skeleton, the first copy came back with errno changed (RAILSCOPE_STACKS=on). Against the fake libcudart,
CUPTI not delivering, so every copy is recorded (cudart_errno.c, built here)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

FAKE = os.path.join(NCCL_BIN, "fakecupti")
need(LIB, CLI, os.path.join(FAKE, "libcudart.so.13"))
plan(7)
APP = os.path.join(T, "cudart_errno")
cc = subprocess.run(["cc", "-std=gnu11", "-O1", "-o", APP, os.path.join(TOP, "tests", "nccl", "cudart_errno.c"),
                     "-ldl"], capture_output=True, text=True)
ok(cc.returncode == 0, "the test program builds", cc.stderr)

r = run([APP, FAKE], os.path.join(T, "untraced"), preload=False)
ok(r.returncode == 0 and r.stdout.count("ret 0 errno") == 6, "untraced: 6 copies, errno unchanged",
   r.stdout + r.stderr)

for mode in ("on", "glibc", "off"):
    out = os.path.join(T, "stacks-" + mode)
    r = run([APP, FAKE], out, env={"RAILSCOPE_STACKS": mode})
    ok(r.returncode == 0 and r.stdout.count("ret 0 errno") == 6,
       f"RAILSCOPE_STACKS={mode}: every copy returns the real call's value and errno", r.stdout + r.stderr)
    if mode == "glibc":
        continue
    evs = events(out) if os.path.isdir(out) else []
    copies, stacks = kind(evs, "cuda_copy_call"), kind(evs, "call_stack")
    with_stack = sum(1 for c in copies if c.get("stack"))
    want = (6, 1, 5) if mode == "on" else (6, 0, 0)  # one call site; the 5 copies with a pageable side
    is_((len(copies), len(stacks), with_stack), want,
        f"RAILSCOPE_STACKS={mode}: the 6 copies are recorded" + (", the pageable ones with their site" if mode == "on" else ""))
finish()
