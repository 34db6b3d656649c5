#!/usr/bin/env python3
"""A by-hand launch, LD_PRELOAD=librailscope.so and nothing else (README's "same, by hand"), records what
`railscope record` does: the preloaded library sets CUDA_INJECTION64_PATH, NCCL_PROFILER_PLUGIN and
NVTX_INJECTION64_PATH to itself (absolute path) for the families that are on, where they are unset; a user's
own value stays, with one warning; an untraced process (RAILSCOPE_DISABLE) and a library only dlopen'ed change
nothing. Before session 26 such a process recorded no profiler event and no NVTX range (preload/entry_env.c)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import *  # noqa: F401,F403

VARS = ("CUDA_INJECTION64_PATH", "NCCL_PROFILER_PLUGIN", "NVTX_INJECTION64_PATH")
PROG = os.path.join(NCCL_BIN, "nccl_local")
FAKE = os.path.join(NCCL_BIN, "fakenccl")
APP = os.path.join(NCCL_BIN, "nvtx_app")
need(LIB, CLI, PROG, os.path.join(FAKE, "libfakeuser.so"))
plan(14)
REAL = os.path.realpath(LIB)


def env_of(env=None, cwd=None, lib=LIB, out="env"):
    """The entry variables as `env` (a program the tracer knows nothing of) sees them, and its stderr."""
    e = {k: v for k, v in os.environ.items() if k not in VARS and k != "RAILSCOPE_ENTRY_WARNED"}
    e["LD_PRELOAD"] = (SAN + ":" if SAN else "") + lib
    e["RAILSCOPE_OUT"] = os.path.join(T, out)
    e.update(env or {})
    p = subprocess.run(["env"], env=e, cwd=cwd, capture_output=True, text=True, timeout=30)
    got = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
    return {k: got.get(k) for k in VARS}, p.stderr


got, err = env_of()
is_(got, {k: REAL for k in VARS}, "preloaded: the three entry variables name the library")
is_(err, "", "and nothing is printed")
got, _ = env_of(cwd=os.path.dirname(LIB), lib="./" + os.path.basename(LIB))
is_(got, {k: REAL for k in VARS}, "a relative LD_PRELOAD path: the variables hold the absolute one")
got, _ = env_of({"RAILSCOPE_EVENTS": "all,-cuda,-nvtx"})
is_(got, {"CUDA_INJECTION64_PATH": None, "NCCL_PROFILER_PLUGIN": REAL, "NVTX_INJECTION64_PATH": None},
    "only the families that are on (RAILSCOPE_EVENTS=all,-cuda,-nvtx: CUPTI is left alone)")
got, _ = env_of({"RAILSCOPE_DISABLE": "1"})
is_(got, {k: None for k in VARS}, "RAILSCOPE_DISABLE=1: nothing set")
other = os.path.join(T, "libother-profiler.so")
got, err = env_of({"NCCL_PROFILER_PLUGIN": other})
is_(got, {"CUDA_INJECTION64_PATH": REAL, "NCCL_PROFILER_PLUGIN": other, "NVTX_INJECTION64_PATH": REAL},
    "a user's own profiler plugin stays")
ok(err.count("railscope: NCCL_PROFILER_PLUGIN=" + other + " is not this library: NCCL's profiler events") == 1
   and len(err.splitlines()) == 1, "with one warning saying what will not be recorded", err)
e = {k: v for k, v in os.environ.items() if k not in VARS and k != "RAILSCOPE_ENTRY_WARNED"}
e.update(LD_PRELOAD=(SAN + ":" if SAN else "") + LIB, RAILSCOPE_OUT=os.path.join(T, "tree"), NCCL_PROFILER_PLUGIN=other)
p = subprocess.run(["sh", "-c", "sh -c true; sh -c 'sh -c true'"], env=e, capture_output=True, text=True, timeout=30)
is_(p.stderr.count("is not this library"), 1, "said once for a process tree (a shell and its three children)")
link = os.path.join(T, "railscope-link.so")
os.symlink(LIB, link)
got, err = env_of({"CUDA_INJECTION64_PATH": link})
ok(got["CUDA_INJECTION64_PATH"] == link and err == "", "the library by another path (a link): kept, no warning",
   (got, err))
got, err = env_of({"NVTX_INJECTION64_PATH": os.path.basename(LIB)})
ok(got["NVTX_INJECTION64_PATH"] == os.path.basename(LIB) and err == "",
   "the library by its bare name (dlopen searches the library path): kept, no warning", (got, err))

# Loaded by dlopen only (as NCCL loads its plugin): the process is already running; nothing is set.
p = run([sys.executable, "-c", "import ctypes,sys; ctypes.CDLL(sys.argv[1]); g = ctypes.CDLL(None).getenv; "
         "g.restype = ctypes.c_char_p; print([g(v.encode()) for v in sys.argv[2:]])", LIB, *VARS],
        os.path.join(T, "dlopen"), preload=False)
is_(p.stdout.strip(), "[None, None, None]", "loaded by dlopen, not preloaded: the environment is left alone")

# What it is for: the profiler plugin and the NVTX injection reached with LD_PRELOAD alone.
base = run([PROG, FAKE, "3"], os.path.join(T, "none"), preload=False)
out = os.path.join(T, "nccl")
p = run([PROG, FAKE, "3"], out)
evs = events(out)
ok(p.stdout == base.stdout and "bad=0" in p.stdout, "the NCCL program's output is unchanged", p.stdout + p.stderr)
ini = kind(evs, "nccl_comm_init")
ok(len(kind(evs, "nccl_prof_init")) == 1 and len(ini) == 1 and ini[0]["comm_hash"] == "0xabcdef12345",
   "LD_PRELOAD alone: NCCL loaded the profiler plugin (its init recorded, the comm hash learned)", ini)
if os.path.exists(APP):
    out = os.path.join(T, "nvtx")
    p = run([APP], out)
    push = [e["message"] for e in kind(events(out), "nvtx_push") if not e["domain"]]
    ok(p.returncode == 0 and push[:2] == ["step 0", "forward"],
       "LD_PRELOAD alone: NVTX ranges recorded (the NVTX injection found)", p.stdout + p.stderr)
else:
    ok(True, "# SKIP built without CUDA headers (no nvtx3): nvtx_app not built")
finish()
