#!/bin/bash
# The thread count a program reads of itself leaves the tracer's threads out (tracer/selfstat.c): Python 3.12+
# prints a DeprecationWarning at os.fork() when /proc/self/stat says more than one thread, and the writer thread
# alone made a single-threaded script print it traced (harmless.t on the GPU host's Python 3.12, session 30).
. "$(dirname "$0")/../lib.sh"
need_build librailscope.so tests/core/selfstat_probe tests/core/selfstat_edit
plan 7
P=$RS_BUILD/tests/core/selfstat_probe

out=$("$RS_BUILD/tests/core/selfstat_edit" 2>&1)
is "$out" "ok 8" "rs_selfstat_edit: field 20 lowered (to 1 at least), names with spaces and ')', other lines kept"

# Under TSan (make soak) a TSan-built process has one more thread from its first pthread_create on: TSan's own
# (__tsan::BackgroundThread, named like the program), which the probe counts untraced and traced alike.
tsan_bg=0
[ "$RS_SAN" = tsan ] && tsan_bg=1
"$P" 2 >"$T/ref.out" 2>"$T/ref.err"
RAILSCOPE_OUT=$T/tr LD_PRELOAD=$RS_PRELOAD "$P" 2 >"$T/got.out" 2>"$T/got.err"
is "$(grep -c . "$T/ref.out")" 7 "untraced: the probe printed its 7 lines"
like "$(cat "$T/ref.out")" "fopen /proc/self/stat: threads=$((3 + tsan_bg)) lowest_fd=yes cloexec=0" \
    "untraced: 3 threads$([ $tsan_bg = 1 ] && echo " and TSan's"), fopen's own descriptor"
if cmp -s "$T/ref.out" "$T/got.out"; then ok "traced: fopen() of its stat file reads what untraced does (self, thread-self, pid, after fork, after join, descriptor, close-on-exec)" true
else
    nok "traced: fopen() of its stat file reads what untraced does" true
    diff "$T/ref.out" "$T/got.out" | sed 's/^/#   /' >&2
fi
# the probe does see the tracer's writer through open()/read(): the test hid something
is "$(cat "$T/ref.err") / $(grep -o 'raw_extra=[0-9-]*' "$T/got.err")" "raw_extra=0 / raw_extra=1" \
    "open()/read() of the same file: the writer thread is there traced (one more), none untraced"

# Python 3.12 or later (the version that warns): the one found on PATH, or a pyenv's
py=
for c in python3 python3.14 python3.13 python3.12 /root/.pyenv/versions/3.1[2-9]*/bin/python3; do
    command -v "$c" >/dev/null 2>&1 || continue
    if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then py=$c; break; fi
done
if [ -z "$py" ]; then
    skip "no Python 3.12 or later here (the version whose os.fork() warns of threads)" 2
else
    # (a fork right after a thread's join is no test: the kernel may count the joined thread a moment longer,
    # and untraced Python warns then too)
    cat >"$T/fk.py" <<'PY'
import os
pid = os.fork()
if pid == 0:
    os._exit(3)
_, st = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(st))
PY
    "$py" "$T/fk.py" >"$T/pref.out" 2>"$T/pref.err"
    RAILSCOPE_OUT=$T/tr2 LD_PRELOAD=$RS_PRELOAD_SHELL "$py" "$T/fk.py" >"$T/pgot.out" 2>"$T/pgot.err"
    is "$(cat "$T/pgot.out")" "$(cat "$T/pref.out")" "$($py -V 2>&1): os.fork() traced: same output"
    if [ "$RS_SAN" = tsan ]; then
        # traced, python has TSan's background thread too (started with the tracer's writer; the tracer hides only
        # its own): its fork warns whatever the tracer does. Checks 4-5 check the hiding with TSan's thread both sides.
        skip "TSan's own background thread, in the traced python only, makes its os.fork() warn (not the tracer's)"
    else
        is "$(cat "$T/pgot.err")" "$(cat "$T/pref.err")" "$($py -V 2>&1): no DeprecationWarning of threads traced that untraced lacks"
    fi
fi
