#!/bin/bash
# railscope export: a thread's shared row on crafted traces (tests/export/rowgen.c): a range whose time the row
# forgot stays off it; the row's memory when threads make no CUDA call; a slice kept off the row that finds no
# lane counted once; ibv_get_cq_event waits as slices on their thread's row, in every format.
. "$(dirname "$0")/../lib.sh"
D=$RS_TOP/tests/export
GEN=$RS_BUILD/tests/export/rs-export-rowgen
need_build railscope tests/export/rs-export-rowgen
need_cmd python3
plan 17

ex() { run_timeout 60 "$RS_CLI" export "$@"; }
rules() { # FORMAT OUT: the viewers' rules, no partial overlap on any row included (check_trace.py)
    python3 "$D/check_trace.py" "$1" "$2" >/dev/null
}

# --- a range straddling a call the row forgot: the range's group is new, its push behind the calls' frontier
mkdir -p "$T/s" "$T/o" "$T/ob" "$T/c" "$T/t1" "$T/t4"
"$GEN" straddle "$T/s" || bail "generator failed (straddle)"
ex --format kineto -o "$T/sk" "$T/s" 2> "$T/sk.err"
ok "forgotten call inside a call, range straddling it: kineto rules (no partial overlap)" rules kineto "$T/sk"
like "$(grep 'moved off' "$T/sk.err")" "1 slices moved off .*; 1 of them because the row no longer remembered" \
    "forgotten call: the range moved as unknown, said on stderr"
bad=""
for f in chrome perfetto; do ex -q --format $f -o "$T/s.$f" "$T/s" && rules $f "$T/s.$f" || bad="$bad $f"; done
is "$bad" "" "forgotten call: chrome and perfetto rules"

# --- a slice kept off the row while its group's lanes are all taken: an instant, counted once
"$GEN" overflow "$T/o" || bail "generator failed (overflow)"
ex --format chrome -o "$T/o.json" "$T/o" 2> "$T/o.err"
ok "lanes full: chrome rules" rules chrome "$T/o.json"
like "$(grep 'overlapped more than' "$T/o.err")" \
    "export: 1 slices overlapped more than .*; 1 of them kept off their thread's row first \(not counted as moved\)$" \
    "lanes full: the slice kept off the row is counted as an instant, said so"
is "$(grep -c 'moved off' "$T/o.err")" "0" "lanes full: not counted as moved too"
"$GEN" overflow "$T/ob" backwards || bail "generator failed (overflow backwards)"
ex --format chrome -o "$T/ob.json" "$T/ob" 2> "$T/ob.err"
ok "lanes full, a call out of time order: chrome rules" rules chrome "$T/ob.json"
like "$(grep 'overlapped more than' "$T/ob.err")" "export: 2 slices overlapped more than .*; 1 left out \(their track's \
input out of time order: no lane could take them\)$" "out of time order, no lane: left out, counted and said (was silent)"

# --- ibv_get_cq_event: one slice per wait on the calling thread's row, with cq, channel, flags, ret (errno)
"$GEN" cqev "$T/c" || bail "generator failed (cqev)"
ex -q --format chrome -o "$T/c.json" "$T/c"
is "$(python3 - "$T/c.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "thread_name"}
for e in d["traceEvents"]:
    if e.get("ph") == "X" and e["name"] in ("ibv_get_cq_event", "cudaGetDevice"):
        a = " ".join("%s=%s" % (k, e["args"][k]) for k in sorted(e["args"]) if k not in ("cbid", "correlation"))
        print("%s | %s %s %.3f %.3f %s" % (tn.get((e["pid"], e["tid"]), ""), e["name"], e["cat"], e["ts"], e["dur"], a))
PY
)" "thread 100 | ibv_get_cq_event verbs 1000.000 0.500 comp_channel=0xc0 cq=0xa1 flags=none ret=0
thread 100 | ibv_get_cq_event verbs 1001.000 0.020 comp_channel=0xc0 cq=0xa1 flags=pending ret=0
thread 100 | ibv_get_cq_event verbs 1002.000 0.010 comp_channel=0xc0 cq=0xa2 flags=nonblock|pending ret=0
thread 100 | ibv_get_cq_event verbs 1003.000 0.300 comp_channel=0xc0 cq=0xa2 flags=unknown ret=0
thread 100 | ibv_get_cq_event verbs 1004.000 0.005 comp_channel=0xc0 cq=0x0 errno=11 flags=nonblock ret=-1
thread 100 | ibv_get_cq_event verbs 1005.000 1.000 comp_channel=0xc0 cq=0xa1 flags=none ret=0
thread 101 | ibv_get_cq_event verbs 1001.000 1.000 comp_channel=0xc0 cq=0xa3 flags=none ret=0
thread 100 cuda #2 | cudaGetDevice cuda_runtime 1005.500 1.000 " \
    "cq waits: chrome slices on the thread's row with their arguments; a CUDA call straddling one leaves the row"
ok "cq waits: chrome rules" rules chrome "$T/c.json"
ex -q --format kineto -o "$T/ck" "$T/c"
ok "cq waits: kineto rules" rules kineto "$T/ck"
is "$(grep -o '"name":"ibv_get_cq_event"' "$T/ck/rank0.pt.trace.json" | wc -l)" "7" "cq waits: kineto has each wait"
ex -q --format perfetto -o "$T/c.pftrace" "$T/c"
ok "cq waits: perfetto rules" rules perfetto "$T/c.pftrace"
if command -v protoc >/dev/null; then
    is "$(protoc --decode=perfetto.protos.Trace -I "$D" "$D/perfetto_subset.proto" < "$T/c.pftrace" |
        grep -c 'TYPE_SLICE_BEGIN')" "9" "cq waits: perfetto has each wait as a slice (7, and the NCCL and CUDA call)"
else
    skip "protoc not installed"
fi

# --- past that budget (100 threads of 3000 calls), CUDA calls of the whole run coming last: what the rows forgot
# moves as unknown, never a partial overlap
mkdir -p "$T/late"
"$GEN" late "$T/late" || bail "generator failed (late)"
ex --format chrome -o "$T/late.json" "$T/late" 2> "$T/late.err"
ok "late CUDA calls past the rows' shared budget: chrome rules" rules chrome "$T/late.json"
like "$(grep 'moved off' "$T/late.err")" "; [1-9][0-9]* of them because the row no longer remembered" \
    "late CUDA calls past the budget: the ones reaching back into forgotten time moved as unknown"

# --- memory: threads that never make a CUDA call share one budget for their rows (export_row.c), so 4x the calls
# per thread takes the same RSS (before: each row kept up to 65536 slices, 1.5 MB per thread)
if [ -n "$RS_SAN" ]; then
    skip "RSS under a sanitizer says nothing about the exporter's memory"
elif [ -x /usr/bin/time ]; then
    rss() { /usr/bin/time -f %M "$RS_CLI" export -q --format chrome -o /dev/null "$1" 2>&1 >/dev/null | tail -1; }
    "$GEN" threads "$T/t1" 64 8000 || bail "generator failed (threads)"
    "$GEN" threads "$T/t4" 64 32000 || bail "generator failed (threads)"
    small=$(rss "$T/t1") big=$(rss "$T/t4")
    diag "max RSS: 64 threads x 8000 calls ${small} KB, x 32000 calls ${big} KB"
    ok "64 threads of calls, no CUDA: max RSS does not grow with the calls (8000 -> 32000: ${small} -> ${big} KB)" \
        test $((big - small)) -lt 4096
else
    skip "/usr/bin/time not installed"
fi
