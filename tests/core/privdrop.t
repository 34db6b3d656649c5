#!/bin/bash
# Privilege-dropping programs under the tracer (issue 17 D4). glibc applies setuid() & co. to every thread
# through a signal and aborts when a thread's result differs; capabilities and PR_SET_KEEPCAPS are per
# thread, so `setpriv --reuid=65534 --regid=65534 --clear-groups` (setresuid, then capabilities raised in
# its own thread, then setresgid) aborted traced: the writer thread's setresgid failed (EPERM). The writer
# thread now stops for a credential change and restarts from the changed thread. Needs root.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check librailscope.so
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
[ "$(id -u)" = 0 ] || skip_all "needs root (to drop privileges)"
# TSan's runtime has a background thread of its own that glibc's setxid broadcast reaches: the setpriv
# sequence aborts under TSan even untraced (RAILSCOPE_DISABLE=1).
[ "$RS_SAN" = tsan ] && skip_all "TSan's background thread makes setpriv-like programs abort, untraced too"
plan 7
mkdir -m 1777 "$T/o"

# The emitter (core linked in) does what setpriv does, in its main thread, after 2 threads emitted 1000 marks.
out=$(RAILSCOPE_OUT=$T/o/e run_timeout 30 "$E" -t 2 -n 1000 -U 2>&1)
rc=$?
is "$rc:$(echo "$out" | head -1)" "0:cred=ok uid=65534 gid=65534" "setpriv-like drop in one thread: no abort, every call succeeds"
like "$("$C" "$T"/o/e/*.rtrace)" "status=complete marks=2010 gaps=0 .*drops=0 .*proc_end=1 end_status=0 " \
    "the trace has the marks from before and after the drop, and PROC_END"

# 4 threads each change their ids (to the ones they have) halfway through 20000 marks.
out=$(RAILSCOPE_OUT=$T/o/u run_timeout 30 "$E" -t 4 -n 20000 -u 2>&1)
is "$?:$(echo "$out" | head -2 | tr '\n' ' ')" "0:cred_threads=ok emitted=80000 dropped=0 " \
    "4 threads calling setresgid/setgroups/setresuid while recording"
like "$("$C" "$T"/o/u/*.rtrace)" "status=complete marks=80000 gaps=0 order_errors=0 .*drops=0 .*proc_end=1 " \
    "every mark is in the file, in order"

# The real setpriv, preloaded.
if command -v setpriv >/dev/null; then
    want=$(setpriv --reuid=65534 --regid=65534 --clear-groups id 2>&1)
    # setpriv execs `id` as nobody, still preloading the library: nobody must be able to read it, which a
    # build under a 0700 directory (a checkout in `mktemp -d`) is not. A world-readable copy is preloaded.
    L=$(mktemp -d /tmp/rs-privdrop.XXXXXX) && chmod 755 "$L" && cp "$RS_LIB" "$L/librailscope.so"
    trap 'rc_=$?; rm -rf "$L"; (exit $rc_); _tap_cleanup' EXIT
    pre=${RS_PRELOAD_SHELL//"$RS_LIB"/"$L/librailscope.so"}
    got=$(run_timeout 30 env RAILSCOPE_OUT="$T/o/p" LD_PRELOAD="$pre" RAILSCOPE_LOG=quiet \
        setpriv --reuid=65534 --regid=65534 --clear-groups id 2>&1)
    is "$?" 0 "setpriv --reuid=65534 --regid=65534 --clear-groups id: exit 0 traced (was 134)"
    is "$got" "$want" "setpriv: the same output as untraced"
    ls "$T"/o/p/*.rtrace >/dev/null 2>&1 && res=$("$C" $(ls "$T"/o/p/*.rtrace | head -1))
    like "$res" "status=complete .*proc_end=1 end_status=0 end_reason=2 " "setpriv's own file ends with its exec"
else
    for i in 1 2 3; do skip "no setpriv (util-linux)"; done
fi
