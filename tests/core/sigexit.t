#!/bin/bash
# A signal handler's _exit() in a forked child that recorded nothing, while the signal interrupted malloc: the
# tracer's _exit wrapper writes the child's whole trace file there, and must not need malloc's lock, which the
# interrupted malloc holds (15 of 20 children hung for good before tracer/pagemem.h; found by a review in
# session 27, docs/dev/repro/sigexit_fork.c). Each child still gets its file, ending with its _exit status.
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so tests/core/sigexit
plan 4
SX=$RS_BUILD/tests/core/sigexit
N=30
is "$("$SX" 10 2>/dev/null)" "hung 0 of 10, statuses ok 10" "untraced: the program itself ends every child"
mkdir -p "$T/out"
out=$(LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/out" "$SX" $N 2>"$T/pids")
is "$out" "hung 0 of $N, statuses ok $N" "traced: no child hangs in the tracer's final flush, each ends with its status"
# every child's one file ends with PROC_END(its status, reason _exit = 3)
bad=0 files=0
while read -r pid idx; do
    f=$(ls "$T/out"/*-"$pid".rtrace 2>/dev/null)
    [ -n "$f" ] && files=$((files + 1))
    e=$([ -n "$f" ] && "$RS_CLI" dump "$f" 2>/dev/null | grep -oE 'proc_end status=[0-9]+ reason=[0-9]+' | tail -1)
    [ "$e" = "proc_end status=$((idx % 100 + 1)) reason=3" ] || { bad=$((bad + 1)); diag "child $idx (pid $pid): '$e'"; }
done <"$T/pids"
is "$files" "$N" "one trace file per child"
is "$bad" 0 "each ends with PROC_END(its _exit status, reason _exit)"
