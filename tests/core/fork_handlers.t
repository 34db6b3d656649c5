#!/bin/bash
# Credential calls made while this thread is inside fork() (tracer/lifecycle.c holds its credential lock
# and the writer's locks from fork_prepare to fork_parent/fork_child): another library's fork handlers that
# change ids (registered before ours, so they run inside our locked span), and a signal handler calling
# setresuid (async-signal-safe) that interrupts fork(). Both hung forever with 3a041a6 (review, session 7). And
# such a handler interrupting the program's own setresuid (hung forever before session 8).
# Also: a successful credential call or fork leaves the program's errno alone (it was 3, ESRCH from our
# thread probe, on success).
. "$(dirname "$0")/../lib.sh"
need_cmd cc
plan 6
src=$RS_TOP/tests/core/forkcred
cc -O1 -shared -fPIC -o "$T/libearly.so" "$src/early.c" -lpthread &&
    cc -O1 -o "$T/forker" "$src/forker.c" -L"$T" -Wl,--no-as-needed -learly -Wl,-rpath,"$T" ||
    bail "cannot build the test programs"
run() { RAILSCOPE_OUT=$T/o LD_PRELOAD=$RS_PRELOAD run_timeout 20 "$T/forker" "$@" 2>&1; }
out=$(EARLY_PREPARE=1 run handlers)
is "$?:$out" "0:forked=1" "a fork handler registered before ours changes ids in prepare: the fork completes"
out=$(EARLY_PARENT=1 run handlers)
is "$?:$out" "0:forked=1" "... in the parent handler: the fork completes"
out=$(EARLY_CHILD=1 run handlers)
is "$?:$out" "0:forked=1" "... in the child handler: the fork completes"
# Under ASan the signal variant livelocked (session 7-8): every setresuid stopped the writer thread and started a
# new one, 1-2 ms a call there (a 1 ms polling step, a thread exit and creation), longer than the 200 us between
# two SIGALRMs, so the program ran almost nothing but handlers (10 forks took 20 s). The writer is now left
# alone when its credentials are the caller's (tracer/writer_thread.c rs_writer_thread_stop); ASan runs fewer
# forks (each costs ~3 ms there, untraced 0.7 ms), with room for a loaded machine.
n=1500
[ -n "$RS_SAN" ] && n=500
out=$(run_timeout 60 env RAILSCOPE_OUT=$T/o LD_PRELOAD=$RS_PRELOAD "$T/forker" signal $n 2>&1)
is "$?:$out" "0:forks=$n bad=0 signals=some" "$n forks while a signal handler calls setresuid every 200 us"
# The handler's setresuid landing inside the program's own (its wrapper held the credential lock): hung forever.
out=$(run_timeout 60 env RAILSCOPE_OUT=$T/o LD_PRELOAD=$RS_PRELOAD "$T/forker" nested 5000 2>&1)
is "$?:$out" "0:calls=5000 bad=0 signals=some" "5000 setresuid calls while a signal handler calls it every 200 us"
out=$(run errno)
is "$?:$out" "0:setresuid=0 errno=0 fork=0 errno=0" "successful setresuid and fork leave errno as the program set it"
