#!/bin/bash
# A signal handler's _exit() in a forked child that recorded nothing, while the signal interrupted malloc: the
# tracer's _exit wrapper writes the child's whole trace file there, and must not need malloc's lock, which the
# interrupted malloc holds (15 of 20 children hung for good before tracer/pagemem.h; found by a review in
# session 27). Each child still gets its file, ending with its _exit status. Then what that flush does besides
# (session 28's review: each hung every child before): interning a new thread's name, warning that the file cannot
# be written, compressing with zstd's worker threads configured (tests/core/sigexit.c says how each is planted).
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope librailscope.so tests/core/sigexit
plan 10
SX=$RS_BUILD/tests/core/sigexit
N=30 M=6 # children per run, per mode; fewer under a sanitizer (the suite's longest file runs tests/core under ASan)
[ -n "$RS_SAN" ] && N=12 M=3
is "$("$SX" 10 2>/dev/null)" "hung 0 of 10, statuses ok 10" "untraced: the program itself ends every child"
# Not under TSan: gcc 12's libtsan runs an asynchronous signal's handler only at an interceptor's exit or in a blocking
# call, and in a child forked from a multi-threaded process -- every traced one: the tracer's writer thread -- it
# ignores interceptors for good (tsan::ForkChildAfter), so SIGUSR1 stays pending in TSan while the child loops in
# malloc/free, and all children hang (checks 2-8 and 10 failed so, session 33). Without railscope: a TSan-built
# program that starts one thread, forks a child looping in malloc/free and sends it SIGUSR1 (handler: _exit) hangs
# the same way, and ends at once without the thread. TSan checks nothing in those children anyway (it ignores them).
if [ "$RS_SAN" = tsan ]; then
    skip "TSan defers the signal for ever in a child of a multi-threaded process (TSan's limit, not railscope's)" 9
    exit 0
fi
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
# a thread named and recorded just before: THREAD_START's name is interned inside the handler
mkdir -p "$T/mark"
is "$(LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/mark" "$SX" $M mark 2>"$T/mpids")" "hung 0 of $M, statuses ok $M" \
    "a marker from a newly named thread before the signal: no child hangs"
bad=0
while read -r pid idx; do
    got=$("$RS_CLI" dump "$T/mark"/*-"$pid".rtrace 2>/dev/null | grep -oE 'thread_start name="[^"]*"|proc_end status=[0-9]+' |
        tr '\n' ' ')
    [ "$got" = "thread_start name=\"fresh-$idx\" proc_end status=$((idx % 100 + 1)) " ] ||
        { bad=$((bad + 1)); diag "child $idx: '$got'"; }
done <"$T/mpids"
is "$bad" 0 "each child's file names its thread and ends with its status"
mkdir -p "$T/fsize"
is "$(LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/fsize" "$SX" $M fsize 2>/dev/null)" "hung 0 of $M, statuses ok $M" \
    "the file cannot be written (RLIMIT_FSIZE 64 bytes): the warning in the handler does not hang the child"
mkdir -p "$T/zt"
is "$(RAILSCOPE_ZSTD_THREADS=2 LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/zt" "$SX" $M threads 2>/dev/null)" \
    "hung 0 of $M, statuses ok $M" "RAILSCOPE_ZSTD_THREADS=2 and threads of the child's own: zstd starts no worker there"
n=$("$RS_CLI" dump --json "$T/zt" 2>/dev/null | jq -s '[.[] | select(.kind == "mark")] | length' 2>/dev/null)
is "$n" $((M * 30000)) "and every mark of the $M children is in their files"
# a frame already written without zstd's workers (one-shot), then enough for the exit flush to stream: the workers
# were started there (helper-81: 1 of 6 children hung)
mkdir -p "$T/late"
is "$(RAILSCOPE_ZSTD_THREADS=2 LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/late" "$SX" $M late 2>/dev/null)" \
    "hung 0 of $M, statuses ok $M" "RAILSCOPE_ZSTD_THREADS=2, a frame written before, 60000 marks drained at _exit"
