#!/usr/bin/env python3
"""Stand-in for NCCL's debug logger (tests/nccl/translog.t): prints the NCCL_* variables it sees, and when
NCCL_DEBUG=INFO writes INFO lines as NCCL 2.28 does (NCCL_DEBUG_FILE with %h/%p expanded, else stdout):
"Using network", a communicator's Init START line, and connection lines of each transport kind.
FAKE_NCCL_SETDEBUG=1: the program sets NCCL_DEBUG=INFO itself first (as a script's os.environ would);
FAKE_NCCL_INIT=1: it then calls ncclCommInitRank as NCCL's first user would (the tracer's wrapper answers: no real
NCCL here), before logging."""
import ctypes
import os
import socket
import sys
import threading
import time

if os.environ.get("FAKE_NCCL_SETDEBUG"):
    os.environ["NCCL_DEBUG"] = "INFO"
if os.environ.get("FAKE_NCCL_INIT"):
    ctypes.CDLL(None).ncclCommInitRank(None, 1, (ctypes.c_char * 128)(), 0)
print("env NCCL_DEBUG=%s NCCL_DEBUG_FILE=%s NCCL_DEBUG_SUBSYS=%s" % tuple(
    os.environ.get(k, "-") for k in ("NCCL_DEBUG", "NCCL_DEBUG_FILE", "NCCL_DEBUG_SUBSYS")), flush=True)
if os.environ.get("NCCL_DEBUG", "").upper() == "INFO":
    fn = os.environ.get("NCCL_DEBUG_FILE")
    f = open(fn.replace("%h", socket.gethostname().split(".")[0]).replace("%p", str(os.getpid())), "w") \
        if fn else sys.stdout
    pre = "%s:%d:%d [0] NCCL INFO " % (socket.gethostname().split(".")[0], os.getpid(), threading.get_native_id())
    for line in ("Using network Socket",   # NCCL 2.28 prints it before the communicator's Init START line
                 "ncclCommInitRankConfig comm 0x55aa rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 "
                 "commId 0xabcdef0123456789 - Init START",
                 "Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Socket/0",
                 "Channel 01/0 : 0[0] -> 1[0] [send] via NET/Socket/1",
                 "Channel 02/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
                 "Channel 03/0 : 0[0] -> 1[1] via SHM/direct/direct",
                 "Channel 04/1 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA"):
        f.write(pre + line + "\n")
    f.flush()
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.7)   # one writer tick (500 ms) reads it live
