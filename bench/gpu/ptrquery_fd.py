#!/usr/bin/env python3
"""Which descriptor does a first pointer query open? (GPU only; session 32's lead on the fd race with kernels off)

  python3 bench/gpu/ptrquery_fd.py runtime|driver|copy

tests/gpu/fd_race_cuda.py traced with RAILSCOPE_CUDA_KERNELS=off meets one EBUSY in ~2 M rounds unless one copy
runs before its descriptor juggling starts (--warm): the cudart wrapper's first cudaPointerGetAttributes on a host
pointer seems to open a file in the program's table. This prints the descriptors that appear across one such call
made after CUDA is up (torch), untraced: `runtime` (cudaPointerGetAttributes of the libcudart torch loaded),
`driver` (cuPointerGetAttribute(MEMORY_TYPE) of libcuda), `copy` (a device-to-host copy, what the untraced program
does anyway). A watcher thread lists /proc/self/fd over and over meanwhile (ctypes lets go of the GIL during the
call), which catches some descriptors opened and closed again inside it. One JSON line: {"mode": ..., "rc": ...,
"new": {fd: target} (open after the call), "seen": {fd: target} (seen by the watcher), "gone": [...]}."""
import ctypes
import json
import os
import re
import sys
import threading

import torch


def fds():
    """Open descriptors and their targets, less this listing's own (and the watcher's) directory descriptor."""
    out = {}
    for f in os.listdir("/proc/self/fd"):
        try:
            t = os.readlink(f"/proc/self/fd/{f}")
        except OSError:
            continue
        if not re.fullmatch(r"/proc/\d+/fd", t):
            out[int(f)] = t
    return out


def loaded(name):
    for ln in open("/proc/self/maps"):
        p = ln.split()[-1] if len(ln.split()) >= 6 else ""
        if os.path.basename(p).startswith(name):
            return p
    return None


mode = sys.argv[1] if len(sys.argv) > 1 else "runtime"
x = torch.ones(1024, device="cuda")
torch.cuda.synchronize()
host = ctypes.create_string_buffer(4096)
# Libraries are found and loaded before the snapshot: reading /proc/self/maps inside the watched span showed up as
# the query's own open (session 33's first run of this probe).
lib = loaded("libcudart.so") if mode == "runtime" else "libcuda.so.1"
cdll = ctypes.CDLL(lib) if mode != "copy" else None
before = fds()
seen, stop = {}, threading.Event()


def watch():
    while not stop.is_set():
        for k, v in fds().items():
            if k not in before and k not in seen:
                seen[k] = v


w = threading.Thread(target=watch)
w.start()
rc = None
if mode == "runtime":
    rt = cdll
    attrs = ctypes.create_string_buffer(64)
    rc = rt.cudaPointerGetAttributes(attrs, ctypes.cast(host, ctypes.c_void_p))
    rt.cudaGetLastError()
    rc = f"{rc} ({lib})"
elif mode == "driver":
    cu = cdll
    val = ctypes.c_uint(0)
    rc = cu.cuPointerGetAttribute(ctypes.byref(val), 2, ctypes.cast(host, ctypes.c_void_p))  # MEMORY_TYPE
elif mode == "copy":
    rc = float(x[0].cpu())
after = fds()
stop.set()
w.join()
print(json.dumps({"mode": mode, "rc": rc, "new": {k: v for k, v in after.items() if k not in before}, "seen": seen,
                  "gone": sorted(k for k in before if k not in after)}))
