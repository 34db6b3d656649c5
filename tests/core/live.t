#!/bin/bash
# Reading a trace while it is being written: the reader sees the frames written so far and never
# crashes or reports a hole; the finished file is complete.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check railscope
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 5
RAILSCOPE_FLUSH_MS=20 RAILSCOPE_OUT=$T/live run_timeout 30 "$E" -t 2 -n 40000 -r 20000 >/dev/null &
pid=$!
sleep 0.7
f=$(ls "$T"/live/*.rtrace)
res=$("$C" "$f")
like "$res" "status=(incomplete|truncated) marks=[1-9][0-9]* gaps=0 order_errors=0" "mid-run: frames so far decode, no hole"
"$RS_CLI" info "$f" >/dev/null 2>&1
rc=$?
ok "mid-run: info exits 0 or 1 ($rc)" test $rc -le 1
"$RS_CLI" dump "$f" >/dev/null 2>&1
ok "mid-run: dump does not crash" test $? -le 1
wait $pid
res=$("$C" "$f")
like "$res" "status=complete marks=80000 gaps=0 order_errors=0 .*proc_end=1" "finished: complete"
# Directories: a directory operand expands to its *.rtrace files and those one level down.
mkdir -p "$T/tree/sub/deeper" && cp "$f" "$T/tree/a.rtrace" && cp "$f" "$T/tree/sub/b.rtrace" && cp "$f" "$T/tree/sub/deeper/c.rtrace"
n=$("$RS_CLI" info "$T/tree" | grep -c '^file:')
is "$n" 2 "a directory means its files and its subdirectories' (one level)"
