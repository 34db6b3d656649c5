#!/usr/bin/env python3
"""Call stacks of copies to/from pageable host memory (no GPU: the fake libcudart of tests/nccl says which
pointers are pinned/device/pageable). stack_app copies from named call sites; the trace must hold one
CALL_STACK per site (return-address chain), symbolised by `railscope dump` from the program's .symtab (or
.dynsym when stripped), with libunwind and with glibc's backtrace(), with CUPTI delivering the copies, and
off. Damaged, missing or hostile module files must give module+offset, never a crash or a hang."""
import ctypes
import json
import os
import shutil
import signal
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nccl"))
from taplib import *  # noqa: F401,F403

APP = os.path.join(BUILD, "tests", "stacks", "stack_app")
STRIPPED = APP + "_stripped"
FAKE = os.path.join(NCCL_BIN, "fakecupti")
if not os.path.exists(APP):
    skip_all("built without CUDA headers (no fake libcudart): stack_app not built")
need(LIB, CLI, STRIPPED, os.path.join(FAKE, "libcudart.so.13"), os.path.join(FAKE, "libcupti.so.13"))
plan(23)

CUDA_MEMCPY, CUDA_COPY_CALL = 128, 133   # kind numbers: first and sixth of the cuda family (events_cuda.h)
try:
    ctypes.CDLL("libunwind.so.8")
    HAVE_LIBUNWIND = True
except OSError:
    HAVE_LIBUNWIND = False


def chain(st):
    """Function names of a call_stack's frames that are in the test program."""
    return [f["function"] for f in st["frames"] if f["module"] and "stack_app" in f["module"]]


def site_of(stacks, *prefix):
    got = [s for s in stacks if chain(s)[:len(prefix)] == list(prefix)]
    return got


def stacks_and_copies(out):
    evs = events(out)
    return kind(evs, "call_stack"), kind(evs, "cuda_copy_call"), evs


# --- default: no CUPTI, the cudart wrappers record the copies; libunwind when present ---
base = run([APP, FAKE], os.path.join(T, "none"), preload=False)
out = os.path.join(T, "default")
p = run([APP, FAKE], out)
ok(p.returncode == 0 and p.stdout == base.stdout and "copies=10 bad=0" in p.stdout,
   "traced run: every copy reached the runtime, same output as untraced", p.stdout + p.stderr + base.stdout)
st, cc, evs = stacks_and_copies(out)
one = site_of(st, "stk_copy_in", "stk_caller_one", "main")
two = site_of(st, "stk_copy_in", "stk_caller_two", "main")
ok(len(one) == 1 and len(two) == 1 and one[0]["site"] != two[0]["site"],
   "one helper reached from two callers: two sites, each with its caller's name (symbolised from .symtab)",
   [chain(s) for s in st])
ok(len(st) == 5 and sorted(s["site"] for s in st) == [1, 2, 3, 4, 5],
   "5 distinct call sites, one call_stack each (10 copies: repeated calls from a site are not re-recorded)",
   [(s["site"], chain(s)) for s in st])
ok(one and two and [c["stack"] for c in cc if c["stack"] == one[0]["site"]] == [one[0]["site"]] * 3
   and len([c for c in cc if c["stack"] == two[0]["site"]]) == 2,
   "each copy names its site: 3 calls from the first caller, 2 from the second", [c["stack"] for c in cc])
rb = site_of(st, "stk::readback()", "main")
asy = site_of(st, "stk_async_site", "main")
ok(len(rb) == 1 and len(asy) == 2, "device-to-pageable readback (its C++ name demangled) and pageable "
   "cudaMemcpyAsync get stacks (the async helper from two lines of main: two sites)", [chain(s) for s in st])
quiet = [c for c in cc if c["src"] == "0x1000" or c["copy_kind"] == 3]
ok(len(quiet) == 2 and all(c["stack"] == 0 for c in quiet), "pinned and device-to-device copies: no stack", quiet)
f0 = one[0]["frames"][0] if one else {}
ok(one and one[0]["for_kind"] == CUDA_COPY_CALL and f0.get("module") == APP and f0.get("offset")
   and f0.get("function_offset", 0) > 0 and all(s["tid"] == st[0]["tid"] != 0 for s in st),
   "frames carry module path, offset and function+offset; for_kind = cuda_copy_call; calling thread", one[:1])
if HAVE_LIBUNWIND:
    ok(all(int(s["flags"], 16) & 1 for s in st), "libunwind.so.8 present: it did the unwinding (flags bit 0)",
       [s["flags"] for s in st])
else:
    ok(True, "# skip libunwind.so.8 not installed: the glibc fallback is tested below")

# --- glibc's backtrace() (what runs when libunwind.so.8 is absent) ---
out = os.path.join(T, "glibc")
p = run([APP, FAKE], out, {"RAILSCOPE_STACKS": "glibc"})
st, cc, _ = stacks_and_copies(out)
ok(p.returncode == 0 and len(st) == 5 and site_of(st, "stk_copy_in", "stk_caller_two", "main")
   and all(int(s["flags"], 16) & 1 == 0 for s in st),
   "RAILSCOPE_STACKS=glibc: the same 5 sites through glibc backtrace()", [(s["flags"], chain(s)) for s in st])

# --- off ---
out = os.path.join(T, "off")
p = run([APP, FAKE], out, {"RAILSCOPE_STACKS": "off"})
st, cc, _ = stacks_and_copies(out)
ok(p.returncode == 0 and not st and len(cc) == 10 and all(c["stack"] == 0 for c in cc),
   "RAILSCOPE_STACKS=off: copies recorded, no stacks", (len(st), len(cc)))

out = os.path.join(T, "bogus")
p = run([APP, FAKE], out, {"RAILSCOPE_STACKS": "sometimes"})
st, cc, _ = stacks_and_copies(out)
ok(len(st) == 5 and p.stderr.count("RAILSCOPE_STACKS") == 1, "an unknown RAILSCOPE_STACKS value: one warning, "
   "stacks on", p.stderr)

# --- CUPTI delivering the copies: stacks come from the call site, copies from CUPTI ---
out = os.path.join(T, "cupti")
p = run([APP, FAKE, "cupti"], out)
st, cc, _ = stacks_and_copies(out)
ok(p.returncode == 0 and "inject=1" in p.stdout and not cc and len(st) == 5
   and all(s["for_kind"] == CUDA_MEMCPY for s in st) and site_of(st, "stk_copy_in", "stk_caller_one", "main"),
   "CUPTI delivering: no cudart copy events, the 5 sites still recorded (for_kind = cuda_memcpy)",
   p.stdout + p.stderr + str([chain(s) for s in st]))

# --- 8 threads hitting one new site at once: one stack; fork: the child's file gets its own ---
out = os.path.join(T, "threads")
p = run([APP, FAKE, "threads"], out)
st, cc, _ = stacks_and_copies(out)
named = [c for c in cc if st and c["stack"] == st[0]["site"]]
ok(p.returncode == 0 and len(st) == 1 and chain(st[0])[:3] == ["stk_copy_in", "stk_caller_one", "stk_thread"]
   and len(cc) == 800 and len(named) >= 100 and all(c["stack"] in (0, st[0]["site"]) for c in cc),
   "8 threads x 100 copies from one site at once: one call_stack, the copies name it (0 only while its id "
   "is being published: a publisher preempted on a loaded box leaves the others' copies at 0 meanwhile, so "
   "only the publisher's own 100 are sure to name it)", (len(st), len(cc), len(named)))
out = os.path.join(T, "fork")
p = run([APP, FAKE, "fork"], out)
files = sorted(os.listdir(out)) if os.path.isdir(out) else []
per = [len(site_of(kind(events(os.path.join(out, f)), "call_stack"), "stk_copy_in", "stk_caller_one", "main"))
       for f in files]
ok(p.returncode == 0 and "child=0" in p.stdout and per == [1, 1],
   "fork: parent and child files each hold the site's stack (the child starts its table afresh)", (files, per))

# --- stripped program: names from .dynsym ---
secs = subprocess.run(["readelf", "-S", "-W", STRIPPED], capture_output=True, text=True).stdout
out = os.path.join(T, "stripped")
p = run([STRIPPED, FAKE], out)
st, cc, _ = stacks_and_copies(out)
ok(".symtab" not in secs and ".dynsym" in secs and site_of(st, "stk_copy_in", "stk_caller_one", "main"),
   "stripped program (no .symtab): function names from .dynsym", [chain(s) for s in st])

# --- module files missing, garbage, truncated, hostile headers, a FIFO: module+offset, exit 0, no hang ---
mdir = os.path.join(T, "mod")
os.makedirs(mdir)
app = os.path.join(mdir, "stack_app")
shutil.copy(APP, app)
out = os.path.join(T, "hostile")
p = run([app, FAKE], out)
good = open(app, "rb").read()


def dump_ok(desc, expect_names=None):
    r = subprocess.run([CLI, "dump", "--json", out], capture_output=True, text=True, timeout=20)
    crashed = r.returncode < 0 or "Sanitizer" in r.stderr or "runtime error" in r.stderr
    try:
        st = [e for e in map(json.loads, r.stdout.splitlines()) if e["kind"] == "call_stack"]
    except ValueError:
        st = None
    fine = not crashed and r.returncode == 0 and st and len(st) == 5 and all(
        f["module"] == app and f["offset"] for s in st for f in s["frames"][:2])
    if fine and expect_names is not None:
        named = any(f["function"] for s in st for f in s["frames"] if f["module"] == app)
        fine = named == expect_names
    return ok(fine, desc, f"rc={r.returncode} {r.stderr[-300:]}")


dump_ok("module present: symbolised (the copy the trace names)", True)
os.unlink(app)
dump_ok("module file deleted: module+offset, no names, exit 0", False)
with open(app, "wb") as f:
    f.write(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 16)
dump_ok("module file replaced by garbage with an ELF magic: module+offset, exit 0", False)


def write(b):
    with open(app, "wb") as f:
        f.write(b)


for cut in (16, 64, 1000, len(good) // 2, len(good) - 100):
    write(good[:cut])
    r = subprocess.run([CLI, "dump", "--json", out], capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        break
ok(r.returncode == 0, "module truncated at 16 B .. size-100 B: no crash, exit 0", r.stderr[-300:])

# Section-header and symbol-table damage: every mutation keeps dump at exit 0.
shoff, = struct.unpack_from("<Q", good, 0x28)
shnum, = struct.unpack_from("<H", good, 0x3C)
symtabs = [i for i in range(shnum) if struct.unpack_from("<I", good, shoff + 64 * i + 4)[0] in (2, 11)]
muts = []
for i in symtabs:
    o = shoff + 64 * i
    for off, fmt, val in ((24, "<Q", 2**64 - 1), (32, "<Q", 2**63), (32, "<Q", 2**40), (40, "<I", 0xffff),
                          (40, "<I", 0), (56, "<Q", 1), (56, "<Q", 0), (24, "<Q", len(good) - 8)):
        muts.append((o + off, fmt, val))
    symoff, symsz = struct.unpack_from("<QQ", good, o + 24)
    for k in range(0, min(symsz, 24 * 64), 24):   # st_name of the first 64 symbols far out of the string table
        muts.append((symoff + k, "<I", 0xfffffff0))
muts += [(0x28, "<Q", 2**64 - 64), (0x28, "<Q", len(good) - 10), (0x3C, "<H", 0xffff), (0x3A, "<H", 1)]
bad = []
for (off, fmt, val) in muts:
    b = bytearray(good)
    struct.pack_into(fmt, b, off, val)
    write(bytes(b))
    r = subprocess.run([CLI, "dump", "--json", out], capture_output=True, text=True, timeout=20)
    if r.returncode != 0 or "Sanitizer" in r.stderr:
        bad.append((off, val, r.returncode, r.stderr[-200:]))
ok(symtabs and len(muts) > 20 and not bad, f"{len(muts)} section-header/symbol damages: dump exits 0 every time", bad[:3])

os.unlink(app)
os.mkfifo(app)
try:
    dump_ok("module path is a FIFO: not opened for reading (no hang), module+offset", False)
except subprocess.TimeoutExpired:
    ok(False, "module path is a FIFO: dump hung")
os.unlink(app)
os.mkdir(app)
dump_ok("module path is a directory: module+offset", False)

# Text mode prints the same frames, one line each, with names.
os.rmdir(app)
shutil.copy(APP, app)
r = subprocess.run([CLI, "dump", out], capture_output=True, text=True, timeout=20)
lines = [l for l in r.stdout.splitlines() if l.startswith("    #")]
ok(r.returncode == 0 and any(" stk_caller_one+0x" in l and app + "+0x" in l for l in lines),
   "text dump: one indented line per frame with function+offset and module+offset", lines[:4])
finish()
