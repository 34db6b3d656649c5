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
plan 11
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
# Checks 4-5 fork from inside a fork handler. Not under TSan: gcc 12's libtsan, preloaded, registers its own fork
# handlers after early.c's (whose library is initialised first), so early.c's parent and child handlers run while the
# outer fork's tsan::ForkBefore still holds TSan's thread registry lock, and their fork() waits for that lock in its
# own ForkBefore, for ever; TERM is deferred there, so run_timeout's KILL ends it (exit 137), and check 5's grandchild
# stays hung after the test. Without railscope: EARLY_PARENT_FORK=1 LD_PRELOAD=<libtsan> forker handlers hangs the
# same way, backtrace __tsan::ForkBefore <- __run_prefork_handlers <- fork <- par <- __run_postfork_handlers <- fork
# (helper session of 2026-12-05: it was this check 4, reported as check 1, which expects the same "0:forked=1").
tsan_nested="fork inside a fork handler: gcc 12's TSan deadlocks on its own thread registry lock (not railscope's)"
# inside our fork's window another library's parent handler forks (a helper process): it waited forever on our own
# locks (session 28's review), now a nested fork of ours
if [ "$RS_SAN" = tsan ]; then
    skip "$tsan_nested" 2
else
    out=$(EARLY_PARENT_FORK=1 run handlers)
    is "$?:$out" "0:forked=1" "... its parent handler forks itself: both forks complete"
    # its child handler forks (before ours runs): the new process goes through every child handler, ours included,
    # then comes back round to ours in the outer fork's sequence; ours ran twice there and started a second writer
    # thread on the same state (session 29: "writers=1 writers=2")
    out=$(EARLY_CHILD_FORK=1 run writers)
    is "$?:$(echo $out)" "0:writers=1 writers=1" "... its child handler forks: one writer thread in each of the two children"
fi
# Under ASan the signal variant livelocked (session 7-8): every setresuid stopped the writer thread and started a
# new one, 1-2 ms a call there (a 1 ms polling step, a thread exit and creation), longer than the 200 us between
# two SIGALRMs, so the program ran almost nothing but handlers (10 forks took 20 s). The writer is now left
# alone when its credentials are the caller's (tracer/writer_thread.c rs_writer_thread_stop); ASan runs fewer
# forks (each costs ~3 ms there, untraced 0.7 ms), with room for a loaded machine.
# 200 forks (100 under ASan): with in_fork out of the wrappers' bypass (session 7's hang) the program hangs at its
# 1st-2nd fork (5 of 5 runs, session 10), since nearly every fork has a SIGALRM inside it; 1500/500 forks took 36 s
# and 54 s of the suite at load.
n=200
[ -n "$RS_SAN" ] && n=100
# It was allowed 60 s; under ASan at load 8-10 (2 cores) it took 60-97 s, steadily ~5 forks a second, no hang
# (session 9): each handler's setresuid waits for the writer thread to take glibc's SIGSETXID, which costs a
# scheduling delay on a busy machine, and with a handler due every 200 us the program runs little else (untraced
# under the same load: 5.9 s). So what counts is progress: each child writes its trace file at its _exit, and the
# run fails when no child has ended for 30 s (a hang: session 7's handler inside fork() never returned), or after
# 600 s in all.
progress_run() { # DIR CMD...: CMD's output (stderr too) in $T/progress.out; its status (not 0 when stopped)
    local dir=$1 pid n last=-1 idle=0
    shift
    # timeout itself in the background (not the run_timeout function: $! would be a subshell, and a TERM to it
    # left timeout and the program running, review H_REVIEW9); timeout passes a TERM on to its process group
    timeout -k 2 600 "$@" >"$T/progress.out" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        n=$(find "$dir" -name '*.rtrace' 2>/dev/null | wc -l)
        if [ "$n" != "$last" ]; then
            last=$n idle=0
        elif [ $((idle += 1)) -ge 30 ]; then
            echo "no fork child ended for 30 s ($n trace files)" >>"$T/progress.out"
            kill -TERM "$pid"
            break
        fi
        sleep 1
    done
    wait "$pid"
}
t0=$SECONDS
progress_run "$T/o4" env RAILSCOPE_OUT=$T/o4 LD_PRELOAD=$RS_PRELOAD "$T/forker" signal $n
is "$?:$(cat "$T/progress.out")" "0:forks=$n bad=0 signals=some" \
    "$n forks while a signal handler calls setresuid every 200 us ($((SECONDS - t0)) s)"
# The handler's setresuid landing inside the program's own (its wrapper held the credential lock): hung forever.
out=$(run_timeout 60 env RAILSCOPE_OUT=$T/o LD_PRELOAD=$RS_PRELOAD "$T/forker" nested 5000 2>&1)
is "$?:$out" "0:calls=5000 bad=0 signals=some" "5000 setresuid calls while a signal handler calls it every 200 us"
out=$(run errno)
is "$?:$out" "0:setresuid=0 errno=0 fork=0 errno=0" "successful setresuid and fork leave errno as the program set it"
# A signal handler that forks (async-signal-safe) while the program forks: one landing inside our fork handlers'
# window took our locks again (hung), or cleared what the outer fork had to release (the credential lock stayed
# taken: the next setresuid hung); signals are now held back across that window (session 28's review).
out=$(run_timeout 120 env RAILSCOPE_OUT=$T/o5 LD_PRELOAD=$RS_PRELOAD "$T/forker" forkforks 100 2>&1)
is "$?:$out" "0:forks=100 bad=0 inner=some setresuid=0" "100 forks while a SIGALRM handler forks too, then setresuid"
# ... and while the program records marks (each takes the tracer's string lock): a handler's fork interrupting one
# waited for that lock, held by the code it interrupted, for ever (helper-81: 1 of 2 runs; this check caught the
# library before the fix in 1 of 4 runs on the dev VM: the window is the lock's hold, short). Under ASan (a slower
# rs_intern) it also found the writer holding wlock while it waited for that string lock: wlock is only tried then.
out=$(run_timeout 120 env RAILSCOPE_OUT=$T/o6 LD_PRELOAD=$RS_PRELOAD "$T/forker" markforks 300000 2>&1)
is "$?:$out" "0:marks=300000 mark=found inner=some" "300000 marks (20000 names) while a SIGALRM handler forks (300 forks)"
# a signal handler's fork landing in the tracer's exit flush on that thread (which holds the writer's lock, or is
# taking it): fork's prepare handler waited for that lock for ever (6-8 of 10 children hung on 8dacc34; the "Left"
# of docs/recording.md since session 28)
if [ -x "$RS_BUILD/tests/core/fork_in_flush" ]; then
    k=10
    [ -n "$RS_SAN" ] && k=5
    out=$(for m in _exit exit; do RAILSCOPE_BUFFER_KB=65536 RAILSCOPE_OUT=$T/ff LD_PRELOAD=$RS_PRELOAD \
        run_timeout 150 "$RS_BUILD/tests/core/fork_in_flush" $m $k 50000; done 2>&1)
    is "$(echo $out)" "hung 0 of $k hung 0 of $k" "a SIGALRM handler forking during exit()/_exit()'s flush: no child hangs"
else
    skip "tests/core/fork_in_flush not built" 1
fi
