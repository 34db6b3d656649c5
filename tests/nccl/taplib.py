"""TAP helpers for the Python tests in tests/nccl (the shell ones use tests/lib.sh): paths from RS_BUILD /
RS_TOP like lib.sh, a temporary directory, ok/is_/skip_all, and running a program under the preload."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.environ.get("RS_TOP") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("RS_BUILD") or os.path.join(TOP, "build")
CLI = os.path.join(BUILD, "railscope")
LIB = os.path.join(BUILD, "librailscope.so")
NCCL_BIN = os.path.join(BUILD, "tests", "nccl")
os.environ["RS_CLI"] = CLI
sys.path.insert(0, os.path.dirname(__file__))
import tq  # noqa: E402

T = tempfile.mkdtemp(prefix="rs-test.")
atexit.register(lambda: os.environ.get("RS_KEEP") or shutil.rmtree(T, ignore_errors=True))
_n = 0
_fail = 0
_notok = []  # "not ok" lines and their diagnostics, for the failure digest
_digest_dir = os.environ.get("RS_FAIL_DIGEST")


def _write_digest():
    """`make test` prints a failed file's digest (tests/lib.sh writes the shell files')."""
    if not _fail or not _digest_dir or not os.path.isdir(_digest_dir):
        return
    me = os.path.relpath(os.path.abspath(sys.argv[0]), TOP)
    name = "d-" + "".join(c if c.isalnum() or c in "._-" else "_" for c in me) + f".{os.getpid()}"  # never a dot file
    try:
        with open(os.path.join(_digest_dir, name), "w") as f:
            f.write(f"== {me}{' (under a sanitizer, build ' + BUILD + ')' if SAN else ''}: {_fail} failed of {_n}\n")
            f.write("\n".join(_notok[:22]) + "\n")
    except OSError:
        pass


atexit.register(_write_digest)
_prev_hook = sys.excepthook


def _died(t, v, tb):  # an uncaught exception fails the file: in the digest too
    global _fail
    _fail += 1
    _notok.append(f"died after test {_n}: {t.__name__}: {v}"[:300])
    _prev_hook(t, v, tb)


sys.excepthook = _died


def plan(n):
    print(f"1..{n}", flush=True)


def skip_all(why):
    print(f"1..0 # SKIP {why}", flush=True)
    sys.exit(0)


def need(*paths):
    for p in paths:
        if not os.path.exists(p):
            skip_all(f"{p} not built (run make)")


def ok(cond, desc, diag=None):
    global _n, _fail
    _n += 1
    print(f"{'ok' if cond else 'not ok'} {_n} - {desc}", flush=True)
    if not cond:
        _fail += 1
        _notok.append(f"not ok {_n} - {desc}")
        if diag is not None:
            for line in str(diag).splitlines()[:20]:
                print(f"#   {line}", file=sys.stderr)
            _notok.extend(f"#   {line}"[:300] for line in str(diag).splitlines()[:6])
    return cond


def is_(got, want, desc):
    return ok(got == want, desc, f"got:      {got!r}\nexpected: {want!r}")


def _san_runtime():
    """A sanitizer build's library (make SAN=asan|tsan) needs its runtime loaded first in unmodified programs."""
    try:
        out = subprocess.run(["ldd", LIB], capture_output=True, text=True).stdout
    except OSError:
        return None
    for line in out.splitlines():
        if "libasan.so" in line or "libtsan.so" in line or "libubsan.so" in line:
            parts = line.split()
            return parts[2] if len(parts) > 2 else None
    return None


SAN = _san_runtime() if os.path.exists(LIB) else None
if SAN:
    # as tests/lib.sh: a sanitizer report fails the run; the runtime comes by LD_PRELOAD, not first in the link order
    os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=0:verify_asan_link_order=0:halt_on_error=1")
    os.environ.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    os.environ.setdefault("TSAN_OPTIONS", "halt_on_error=1:exitcode=66:die_after_fork=0:suppressions="
                          + os.path.join(TOP, "tests", "tsan.supp"))


def run(argv, out, env=None, preload=True, timeout=30):
    """Run argv with the tracer preloaded, trace into `out`; returns CompletedProcess."""
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    if SAN:
        e["LD_PRELOAD"] = SAN
    if preload:
        e["LD_PRELOAD"] = (SAN + ":" if SAN else "") + LIB
    e["RAILSCOPE_OUT"] = out
    e.update(env or {})
    return subprocess.run(argv, env=e, capture_output=True, text=True, timeout=timeout)


def events(out):
    return tq.load(out, CLI)


def kind(evs, k):
    return [e for e in evs if e["kind"] == k]


def finish():
    sys.exit(1 if _fail else 0)
