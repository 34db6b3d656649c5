#!/bin/bash
# Under an address-space limit (issue 17: under RLIMIT_AS=256M the program's own malloc failed in 6 of 10
# traced runs): the buffers of threads that exited are given back to the system once drained (they were
# kept for the next thread), and the default buffer is at most 1/256 of RLIMIT_AS (1 MiB at 256 MiB).
# 12 threads record 20000 marks each and exit; then the program mallocs 140 MiB under ulimit -v 256 MiB.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
[ -n "$RS_SAN" ] && skip_all "sanitizers reserve terabytes of address space: no ulimit -v"
plan 6

out=$( (ulimit -v 262144 && RAILSCOPE_DISABLE=1 run_timeout 30 "$E" -t 12 -n 20000 -M 140) 2>&1)
like "$out" "malloc=ok" "untraced: the program's 140 MiB malloc succeeds under ulimit -v 256 MiB"
out=$( (ulimit -v 262144 && RAILSCOPE_OUT=$T/o RAILSCOPE_LOG=info run_timeout 30 "$E" -t 12 -n 20000 -M 140) 2>&1)
like "$out" "malloc=ok" "traced: the same malloc succeeds (the exited threads' buffers were given back)"
like "$out" "emitted=240000 dropped=0" "traced: nothing dropped"
like "$out" "RLIMIT_AS is 256 MiB: per-thread buffer 1024 KiB" "the buffer size follows the limit (info message)"
like "$("$C" "$T"/o/*.rtrace)" "status=complete marks=240000 gaps=0 order_errors=0 .*proc_end=1 " "every mark is in the file"
out=$( (ulimit -v 262144 && RAILSCOPE_BUFFER_KB=4096 RAILSCOPE_OUT=$T/b run_timeout 30 "$E" -t 12 -n 20000 -M 140) 2>&1)
like "$(echo $out)" "malloc=ok emitted=240000 dropped=0" "4 MiB buffers asked for: kept, and given back when the threads are gone"
