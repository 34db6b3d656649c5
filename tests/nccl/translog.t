#!/bin/bash
# The transport NCCL chose, from its INFO log (preload/nccl_profiler.c): a stand-in for NCCL's logger
# (fake_nccl_log.py) under `railscope record`. Without NCCL_DEBUG the library sets NCCL_DEBUG=INFO,
# NCCL_DEBUG_SUBSYS=INIT,NET and NCCL_DEBUG_FILE=<trace dir>/.nccl-%p.log (the program's output is unchanged;
# the file is removed at exit) and records one NCCL_TRANSPORT event per connection line; with the user's NCCL_DEBUG +
# NCCL_DEBUG_FILE it reads that file and leaves it; with NCCL_DEBUG alone (log on stdout) or
# RAILSCOPE_NCCL_LOG=off it changes nothing and records nothing.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_build librailscope.so
plan 19
FAKE="python3 $RS_TOP/tests/nccl/fake_nccl_log.py"
TQ="python3 $RS_TOP/tests/nccl/tq.py"
export RS_CLI TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
unset NCCL_DEBUG NCCL_DEBUG_FILE NCCL_DEBUG_SUBSYS RAILSCOPE_NCCL_LOG RAILSCOPE_NCCL_LOG_DIR

out=$(run_timeout 60 "${RS_RECORD[@]}" record -q -o "$T/a" -- $FAKE 2>"$T/a.err")
like "$out" "^env NCCL_DEBUG=INFO NCCL_DEBUG_FILE=/.*/a/\\.nccl-%p\\.log NCCL_DEBUG_SUBSYS=INIT,NET$" \
    "no NCCL_DEBUG: the library sets NCCL_DEBUG=INFO, INIT,NET and a per-process dot file in the trace dir"
unlike "$out" "NCCL INFO" "no NCCL_DEBUG: the program's output has no NCCL log line"
is "$($TQ "$T/a" "kind == 'nccl_transport' and channel >= 0")" 5 "one NCCL_TRANSPORT event per connection line"
is "$($TQ "$T/a" "kind == 'nccl_transport'" transport | tr '\n' ' ')" "4 4 4 1 2 3 " \
    "transport kinds: Using network Socket, NET/Socket x2, P2P, SHM, NET/IB"
is "$($TQ "$T/a" "kind == 'nccl_transport' and channel == 4" via)" "NET/IB/0/GDRDMA" "via keeps NCCL's text (GDRDMA)"
is "$($TQ "$T/a" "kind == 'nccl_transport' and channel == -1 and via == 'NET/Socket'" comm_hash)" 0xabcdef0123456789 \
    "'Using network Socket' (printed before the communicator's line) gets that communicator's hash"
is "$($TQ "$T/a" "kind == 'nccl_transport' and channel == 0 and src == 1 and dst == 0 and dir == 1 and \
    hx(comm_hash) == 0xabcdef0123456789")" 1 "receive line: src 1 -> dst 0, dir 1, comm from the Init START line"
is "$($TQ "$T/a" "kind == 'nccl_transport' and channel == 2" dir)" 2 "P2P line: dir 2 (not said)"
is "$(find "$T/a" "$TMPDIR" -name '.nccl-*' | wc -l)" 0 "the log file is gone after exit (nothing in the trace dir or TMPDIR)"

mkdir -p "$T/ulog"
out=$(NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$T/ulog/n.%h.%p.log" run_timeout 60 "${RS_RECORD[@]}" record -q -o "$T/b" -- $FAKE 2>/dev/null)
like "$out" "^env NCCL_DEBUG=INFO NCCL_DEBUG_FILE=$T/ulog/n.%h.%p.log NCCL_DEBUG_SUBSYS=-$" \
    "the user's NCCL_DEBUG/NCCL_DEBUG_FILE: left as they are"
is "$($TQ "$T/b" "kind == 'nccl_transport' and channel >= 0")" 5 "the user's NCCL_DEBUG_FILE is read too"
is "$(ls "$T/ulog" | wc -l)" 1 "the user's log file is kept"

out=$(NCCL_DEBUG=INFO run_timeout 60 "${RS_RECORD[@]}" record -q -o "$T/c" -- $FAKE 0 2>/dev/null)
is "$(grep -c 'NCCL INFO' <<<"$out")" 7 "NCCL_DEBUG without a file: the log stays on stdout"
is "$($TQ "$T/c" "kind == 'nccl_transport'")" 0 "NCCL_DEBUG without a file: nothing recorded"

out=$(RAILSCOPE_NCCL_LOG=off run_timeout 60 "${RS_RECORD[@]}" record -q -o "$T/d" -- $FAKE 0 2>/dev/null)
is "$out" "env NCCL_DEBUG=- NCCL_DEBUG_FILE=- NCCL_DEBUG_SUBSYS=-" "RAILSCOPE_NCCL_LOG=off: the environment is untouched"

# NCCL started through the wrapper (the writer's tick never calls getenv: the echo is decided on the thread that
# starts NCCL, session 13): the log is read live, by a tick, not at exit; and a program that set NCCL_DEBUG
# itself after the library's constructor gets NCCL's lines on its stdout as it asked.
out=$(FAKE_NCCL_INIT=1 run_timeout 60 "${RS_RECORD[@]}" record -q -o "$T/e" -- $FAKE 1.5 2>/dev/null)
gap=$(python3 - "$T/e" "$RS_TOP/tests/nccl" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
import tq
ev = tq.load(sys.argv[1])
t = [e for e in ev if e["kind"] == "nccl_transport"]
end = [e["ts_ns"] for e in ev if e["kind"] == "proc_end" and t and e["pid"] == t[0]["pid"]]
print(f"{(max(end) - min(e['ts_ns'] for e in t)) / 1e9:.2f}" if t and end else "none")
PY
)
ok "NCCL started: its log is read live, >= 0.5 s before the process ends (got $gap s)" \
    python3 -c "import sys; sys.exit(0 if '$gap' != 'none' and float('$gap') >= 0.5 else 1)"
unlike "$out" "NCCL INFO" "NCCL started, NCCL_DEBUG ours: nothing echoed to stdout"
out=$(FAKE_NCCL_SETDEBUG=1 FAKE_NCCL_INIT=1 run_timeout 60 "${RS_RECORD[@]}" record -q -o "$T/f" -- $FAKE 2>/dev/null)
is "$(grep -c 'NCCL INFO' <<<"$out")" 7 "the program set NCCL_DEBUG itself: NCCL's lines echoed to its stdout"
# a user's NCCL_DEBUG_FILE that is a FIFO (nothing writes it): never opened on the tick, and the exit path does not
# block on it (an open() for reading waits for a writer: the process hung at exit)
mkfifo "$T/fifo"
s=$(date +%s%N)
NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$T/fifo" RAILSCOPE_FLUSH_MS=50 run_timeout 20 "${RS_RECORD[@]}" record -q -o "$T/fifo-out" -- \
    sh -c 'sleep 0.3; echo done' >"$T/fifo.out" 2>&1
rc=$?
is "$rc:$(cat "$T/fifo.out")" "0:done" "NCCL_DEBUG_FILE a FIFO: the program runs and exits as untraced ($((($(date +%s%N) - s) / 1000000)) ms)"
