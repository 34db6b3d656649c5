#!/bin/bash
# The tracer's own file reads (host facts at start, each new thread's name, NCCL's log on every tick) take no number
# in the program's descriptor table (tracer/private_fds.c). A program that closes a number and dup2()s onto it,
# as dash does for every `cmd >&2`, got EBUSY from dup2() when the writer thread's open() took the number in
# between, or had its stdout closed by the tracer (session 26: 4-6 of 100 `railscope record -- sh -c 'echo hi >&2'`
# runs failed, tests/core/fd_race failed 20 of 20 runs).
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope librailscope.so tests/core/fd_race tests/core/no_close_range
plan 9
FR=$RS_BUILD/tests/core/fd_race
mkdir -p "$T/a"
out=$(LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/a" "$FR" 400 "$T/a" 2>"$T/a.err"); rc=$?
like "$rc:$out" "^0:ok [0-9]+ [0-9]+$" "close(1) + dup2(2, 1) for 400 ms from the start, threads and NCCL's log growing: no failure"
is "$(cat "$T/a.err")" "" "(nothing on stderr)"
lines=${out##* }
"$RS_CLI" dump --json "$T/a" >"$T/a.json" 2>/dev/null
is "$(jq -s '[.[] | select(.kind == "nccl_transport")] | length' "$T/a.json")" "$lines" \
    "every line of NCCL's log was read (on the tick, through the private table)"
ok "the new threads' names were read" jq -se '[.[] | select(.kind == "thread_start" and .name == "fd_race-mark")] | length > 20' "$T/a.json"
ok "the host facts were read" jq -se '[.[] | select(.kind == "host_fact")] | length >= 10' "$T/a.json"
# the shell itself (dash on Debian/Ubuntu) under `railscope record`
bad=0
for i in $(seq 1 20); do
    "$RS_CLI" record -q -o "$T/sh$i" -- sh -c 'echo hi >&2; echo out' >"$T/sh.out" 2>"$T/sh.err"
    [ "$(cat "$T/sh.err")|$(cat "$T/sh.out")" = "hi|out" ] || { bad=$((bad + 1)); diag "run $i: $(head -c 300 "$T/sh.err")"; }
done
is "$bad" 0 "sh -c 'echo hi >&2; echo out' under record, 20 runs: the redirection and stdout never fail"
# no private table (a seccomp filter refusing close_range, as older container policies and kernels before 5.9 do):
# the reads still happen, on the writer thread as before, and -- at RAILSCOPE_LOG=info -- it says so, once
mkdir -p "$T/b"
LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/b" RAILSCOPE_LOG=info "$RS_BUILD/tests/core/no_close_range" "$FR" 300 - plain \
    >/dev/null 2>"$T/b.err"
"$RS_CLI" dump --json "$T/b" >"$T/b.json" 2>/dev/null
ok "close_range refused: host facts read on the writer thread" \
    jq -se '[.[] | select(.kind == "host_fact" and (.key | startswith("env/") | not))] | length >= 5' "$T/b.json"
ok "and thread names" jq -se '[.[] | select(.kind == "thread_start" and .name == "fd_race-mark")] | length > 10' "$T/b.json"
is "$(grep -c 'no descriptor table of its own (close_range(CLOSE_RANGE_UNSHARE): Operation not permitted)' "$T/b.err")" 1 \
    "said once (info)"
