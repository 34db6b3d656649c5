#!/bin/bash
# fork() while another thread is in a credential wrapper (setresuid & co., which serialise on a lock in
# tracer/lifecycle.c): the child's own setresuid() must not wait forever on the lock the other thread held
# at fork() (a daemon that forks and then drops privileges). 100 forks against a thread calling
# setresuid(-1,-1,-1) in a loop: 3 of the first 100 children hung before the fix.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/cred_fork
# Under ASan a child also hung, in 5 of 39 runs at load 3 (session 6) and 4 of 40 (session 7), in libasan's thread
# registry lock: the other thread's setresuid stops and restarts the writer thread (a thread exit and a
# pthread_create, each under that lock; gcc 12's libasan has no fork handler), and a fork() in between left
# the child's own writer thread start (fork_child) waiting on it forever. fork() now waits for a credential
# change in progress (tracer/lifecycle.c); the check runs under ASan too (docs/dev/journal/hardening.md).
# Since session 8 a change leaves the writer thread alone when its credentials are the caller's (they are here),
# so check 2 makes the other thread's credentials differ before each change (it flips a capability in its own
# effective set; root only): every change stops and restarts the writer thread again, the case above.
plan 2
out=$(RAILSCOPE_OUT=$T/o run_timeout 60 "$RS_BUILD/tests/core/cred_fork" 100 2>&1)
is "$?:$out" "0:cred_fork=ok forks=100" "children of a fork during another thread's setresuid change their own ids"
out=$(RAILSCOPE_OUT=$T/o2 run_timeout 60 "$RS_BUILD/tests/core/cred_fork" 100 toggle 2>&1)
rc=$?
if [ "$out" = cred_fork=notoggle ]; then
    skip "needs CAP_SYS_NICE permitted (root) to make the other thread's capabilities differ"
else
    is "$rc:$out" "0:cred_fork=ok forks=100" "... with the writer thread stopped and restarted around each change"
fi
