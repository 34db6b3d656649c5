#!/bin/bash
# The trace cannot be written: missing/uncreatable output directory, or the disk fills up (RLIMIT_FSIZE).
# The traced program's output and exit status are unchanged, one "railscope:" warning appears, and a
# file that filled up is marked partial (info exits 1 and says so).
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check librailscope.so
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 10

mkdir -p "$T/stable/d" && touch "$T/stable/a" "$T/stable/b"
cd "$T/stable" || bail "no tmp"
ref_out=$(ls -la . 2>&1); ref_rc=$?
# Output directory that cannot be created (its parent is a regular file).
touch "$T/afile"
out=$(RAILSCOPE_OUT=$T/afile/sub LD_PRELOAD=$RS_PRELOAD ls -la . 2>"$T/err1"); rc=$?
is "$rc:$out" "$ref_rc:$ref_out" "uncreatable dir: ls output and exit status unchanged"
is "$(grep -c '^railscope: ' "$T/err1")" 1 "uncreatable dir: exactly one warning"
like "$(cat "$T/err1")" "cannot create a trace file in .*afile/sub.*not traced" "the warning says what and where"

# Directory we cannot write into (read-only bind is not available unprivileged: use /proc).
out=$(RAILSCOPE_OUT=/proc/railscope-test LD_PRELOAD=$RS_PRELOAD ls -la . 2>"$T/err2"); rc=$?
is "$rc:$out" "$ref_rc:$ref_out" "unwritable dir: output and exit status unchanged"
is "$(grep -c '^railscope: ' "$T/err2")" 1 "unwritable dir: exactly one warning"

# Disk full: the file may not grow past 64 KiB; the program emits far more than that.
out=$(ulimit -f 64; RAILSCOPE_FLUSH_MS=20 RAILSCOPE_OUT=$T/full run_timeout 30 "$E" -t 2 -n 200000 -r 400000 2>"$T/err3"); rc=$?
e=$(echo "$out" | sed -n 's/^emitted=\([0-9]*\) dropped=\([0-9]*\)$/\1+\2/p')
is "$rc:$((${e:-0}))" "0:400000" "disk full: the program runs to the end, same output and status"
is "$(grep -c '^railscope: ' "$T/err3")" 1 "disk full: exactly one warning"
like "$(cat "$T/err3")" "cannot write .*(File too large|No space).*marked partial" "the warning says the trace is partial"
f=$(ls "$T"/full/*.rtrace)
res=$("$C" "$f")
like "$res" "status=partial marks=[0-9]+ gaps=0 order_errors=0" "the file decodes, no hole, and says partial"
"$RS_CLI" info "$f" >"$T/info" 2>&1
is "$?:$(grep -c 'status: *partial' "$T/info")" "1:1" "info reports partial and exits 1"
