#!/bin/bash
# The string table's lock (tracer/intern.c) around fork() and for the program's errno (session 31). Its holder is
# written in the lock word, so a fork's handlers know whether the forking thread's interrupted code holds it
# (tests/core/term_exit.t: children of a fork from a signal handler no longer inherit it held by an absent thread).
# Here: two threads forking from signal handlers while both mark (a prepare waiting for the string lock while it
# held the writer's locks, and the holder's own fork waiting for those: the whole process stopped, 6 of 6 runs
# before), and errno across contended marks (changed in ~2 % of calls by the first version of the new lock).
. "$(dirname "$0")/../lib.sh"
need_build librailscope.so tests/core/twofork_lock tests/core/mark_errno
plan 2
KICKS=300
[ -n "${RS_SAN:-}" ] && KICKS=100 # under a sanitizer (tests/hardening/sanitizers.t)
out=$(LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/tf" timeout 180 "$RS_BUILD/tests/core/twofork_lock" $KICKS 2>&1)
is "${out%% forks*}" "ok kicks $KICKS" "two threads forking from signal handlers while both mark: no deadlock"
is "$(LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/me" "$RS_BUILD/tests/core/mark_errno" 2>&1)" "errno changed 0 of 800000" \
    "railscope_mark leaves errno as it was, its lock contended by four threads"
