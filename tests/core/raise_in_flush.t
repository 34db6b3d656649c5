#!/bin/bash
# A signal the process sends itself while the tracer's exec or exit flush on that thread holds the writer's lock
# (tracer/lifecycle.c on_term_signal): dash's SIGINT handler puts the default action back and raise()s, and
# untraced never comes back. Deferred until the lock is let go (session 29's rule for signals from outside), the
# raise() returned and the program went on: record_cli.t 17 under ASan, half the runs, "exit 1" for "signal 2"
# (an ASan report after dash longjmp'ed out of the flush), session 30. sigwrite puts the SIGINT inside the
# flush's first write.
. "$(dirname "$0")/../lib.sh"
need_build librailscope.so tests/core/raise_in_flush tests/core/sigwrite tests/core/check
need_cmd python3
plan 5
P=$RS_BUILD/tests/core/raise_in_flush
status() { # [K=V...] CMD...: how CMD ended ("exit N" or "signal N"), then its stdout; K=V for CMD only (the
    # python3 that runs it is not traced)
    python3 -c 'import os, subprocess, sys
a, env = sys.argv[1:], dict(os.environ)
while a and "=" in a[0]:
    k, v = a.pop(0).split("=", 1)
    env[k] = v
r = subprocess.run(a, stdout=subprocess.PIPE, text=True, env=env)
print(("signal %d" % -r.returncode) if r.returncode < 0 else ("exit %d" % r.returncode), r.stdout.strip())' "$@"
}
for m in exec exit; do
    out=$(status RAILSCOPE_OUT="$T/$m" LD_PRELOAD="$RS_BUILD/tests/core/sigwrite:$RS_PRELOAD" "$P" $m)
    is "$out" "signal 2 " "$m flush: the handler's raise() ends the process by SIGINT, as untraced (no 'raise() returned')"
    like "$(ls "$T/$m"/*.rtrace | wc -l) $("$RS_BUILD/tests/core/check" "$T/$m"/*.rtrace 2>&1)" "^1 status=(complete|partial|incomplete) " \
        "$m flush: its one trace file reads (the interrupted flush's frame, here the first, is lost)"
done
# the control: without the tracer nothing writes on the main thread, so no signal comes
is "$(status LD_PRELOAD="$RS_BUILD/tests/core/sigwrite" "$P" exec) / $(status LD_PRELOAD="$RS_BUILD/tests/core/sigwrite" "$P" exit)" \
    "exit 0  / exit 0 " "untraced: no flush, no signal, /bin/true or exit(0)"
