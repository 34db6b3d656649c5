#!/bin/bash
# railscope export: Perfetto protobuf (decoded by protoc against the used subset of Perfetto's schema),
# Chrome JSON and Kineto JSON (parsed by python3 and checked against the viewers' rules), goldens of a
# small deterministic two-rank trace, the placement edge cases (collectives lengthened to their children, Kineto
# thread rows), --split, bad input, truncated input, bounded memory.
. "$(dirname "$0")/../lib.sh"
D=$RS_TOP/tests/export
GEN=$RS_BUILD/tests/export/rs-export-gen
need_build railscope tests/export/rs-export-gen
need_cmd python3
plan 53

"$GEN" "$T/tr" --ranks 2 --steps 3 || bail "generator failed"
ex() { run_timeout 60 "$RS_CLI" export "$@"; }

# --- Perfetto
ok "perfetto export of a two-rank trace" ex -q --format perfetto -o "$T/a.pftrace" "$T/tr"
if command -v protoc >/dev/null; then
    ok "protoc decodes it against perfetto_subset.proto" \
        sh -c "protoc --decode=perfetto.protos.Trace -I '$D' '$D/perfetto_subset.proto' < '$T/a.pftrace' > '$T/a.txt'"
    unlike "$(grep -E '^ *[0-9]+:' "$T/a.txt" | head -3)" '.' "no field outside the subset (no bare field numbers)"
    like "$(grep -c 'TYPE_SLICE_BEGIN' "$T/a.txt")" '^[1-9][0-9]*$' "slices present in the decoded text"
else
    skip "protoc not installed" 3
fi
ok "perfetto rules: tracks declared, iids interned, slices nest, flows paired" \
    sh -c "python3 '$D/check_trace.py' perfetto '$T/a.pftrace' > '$T/a.sum'"
ok "perfetto summary matches the golden" diff -u "$D/golden/perfetto.summary" "$T/a.sum"
like "$(cat "$T/a.sum")" '^track QP 10 \(softnic0\)$' "a track per QP, named with its device"
like "$(cat "$T/a.sum")" '^track GPU 0 stream 7$' "a track per GPU stream"
like "$(cat "$T/a.sum")" '^track rank 1 \(node0 pid 4001\)$' "a process track per rank with host and pid"

# --- Chrome JSON
ok "chrome export" ex -q --format chrome -o "$T/a.json" "$T/tr"
ok "chrome rules: parses, B/E balanced and ordered, X nest, flows paired, counters ordered" \
    sh -c "python3 '$D/check_trace.py' chrome '$T/a.json' > '$T/c.sum'"
ok "chrome output matches the golden" diff -u "$D/golden/chrome.json" "$T/a.json"
# ranks start their monotonic clocks 777 ms apart; the anchors line their step 0 up at the same time
like "$(grep '"name":"ProfilerStep"' "$T/a.json" | grep -o '"pid":[0-9]*,"tid":[0-9]*,"ts":100\.000' | sort -u | wc -l)" \
    '^2$' "both ranks' step 0 marks at the same aligned time (clock anchors applied)"
like "$(grep -c '"ph":"s","cat":"ac2g"' "$T/a.json")" '^18$' "a flow from each CUDA launch/copy call to its GPU work"

# --- collectives end at their last child; Kineto thread rows without partial overlaps (gen.c edge())
"$GEN" "$T/edge" --ranks 2 --steps 2 --edge 1 || bail "generator failed (--edge)"
ex -q --format chrome -o "$T/edge.json" "$T/edge"
ok "edge cases: chrome rules" python3 "$D/check_trace.py" chrome "$T/edge.json"
edge_slices() { # FILE...: the NCCL comm items and the main thread's edge items of rank 0, as "row | name ts dur args"
    python3 - "$@" <<'PY'
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "thread_name"}
    pid0 = min(e["pid"] for e in d["traceEvents"] if e.get("name") == "ncclCommInit")
    for e in d["traceEvents"]:
        row = tn.get((e.get("pid"), e.get("tid")), "")
        if e.get("ph") != "X" or e["pid"] != pid0 or e["ts"] < 300 or e["ts"] >= 400:
            continue
        if row.startswith("NCCL comm") or e["name"] in ("ncclCommInit", "ncclCommInitRankConfig", "outer", "ncclAllReduce"):
            a = " ".join("%s=%s" % (k, e["args"][k]) for k in ("end_from", "enqueue_ns", "children") if k in e.get("args", {}))
            print("%s | %s %.3f %.3f %s" % (row, e["name"], e["ts"], e["dur"], a))
PY
}
is "$(edge_slices "$T/edge.json" | grep '^NCCL comm' | sort -t'|' -k2)" "NCCL comm dp (0xabcdef) #2 | AllReduce 330.000 17.000 end_from=kernel_ch enqueue_ns=400 children=2
NCCL comm dp (0xabcdef) #3 | Broadcast 331.000 0.300 end_from=enqueue only enqueue_ns=300 children=0
NCCL comm dp (0xabcdef) #4 | ReduceScatter 333.000 9.000 end_from=kernel_ch enqueue_ns=100 children=2
NCCL comm dp (0xabcdef) #3 | Send 332.000 20.000 end_from=proxy enqueue_ns=200 children=1
NCCL comm dp (0xabcdef) | ncclGroup 329.900 3.300 " \
    "a collective spans enqueue -> its last child's end (KernelCh, ProxyOp, one written before it), says so; none: the enqueue"
ex -q --format kineto -o "$T/edgek" "$T/edge"
ok "edge cases: kineto rules (no partial overlap on a thread's row)" python3 "$D/check_trace.py" kineto "$T/edgek"
is "$(edge_slices "$T/edgek/rank0.pt.trace.json" | grep -v '^NCCL comm' | sort -t'|' -k2)" "main (100) #2 | ncclAllReduce 312.000 8.000 
main (100) | ncclCommInit 300.100 4.900 
thread 100 nvtx #2 | ncclCommInitRankConfig 300.200 99.810 
main (100) | outer 310.000 5.000 " \
    "kineto: a range a call straddles and a call that straddles a range leave the thread's row"
# an all-to-all's 64 sends in flight together: the first 31 lengthened, the rest keep their enqueue, none an instant
"$GEN" "$T/a2a" --ranks 2 --steps 2 --edge 1 --a2a 64 || bail "generator failed (--a2a)"
ex --format chrome -o "$T/a2a.json" "$T/a2a" 2> "$T/a2a.err"
like "$(grep -c 'overlapped more than' "$T/a2a.err"):$(python3 -c '
import json, sys, collections
d = json.load(open(sys.argv[1]))
print(sorted(collections.Counter((e["pid"], e["args"].get("end_from")) for e in d["traceEvents"]
                                 if e.get("name") == "Send" and e.get("ph") == "X" and "dur_ns" not in e["args"]).items()))' "$T/a2a.json")" \
    "^0:\[\(\(1, 'enqueue \(lanes full\)'\), 33\), \(\(1, 'proxy'\), 32\), \(\(2, 'enqueue \(lanes full\)'\), 33\), \(\(2, 'proxy'\), 32\)\]$" \
    "64 sends in flight: lengthened while a lane short of the last is free, the rest at their enqueue, no instant"
ok "edge cases: perfetto rules" sh -c "'$RS_CLI' export -q --format perfetto -o '$T/edge.pftrace' '$T/edge' && python3 '$D/check_trace.py' perfetto '$T/edge.pftrace' >/dev/null"

# --- a thread's shared row (its calls, its CUDA calls, Kineto's NVTX ranges) never gets a partial overlap, whatever
# the order and number of slices (gen.c rows(): each case written in the order that let one through before)
"$GEN" "$T/rows" --ranks 2 --steps 3 --edge 1 --rows 100 || bail "generator failed (--rows)"
ex --format kineto -o "$T/rowsk" "$T/rows" 2> "$T/rowsk.err"
ok "rows: kineto rules (100 ranges, then a late CUDA call straddling the first two)" \
    python3 "$D/check_trace.py" kineto "$T/rowsk"
ok "rows: chrome rules (a late CUDA call straddling a call of its thread)" \
    sh -c "'$RS_CLI' export -q --format chrome -o '$T/rows.json' '$T/rows' && python3 '$D/check_trace.py' chrome '$T/rows.json'"
ok "rows: perfetto rules" \
    sh -c "'$RS_CLI' export -q --format perfetto -o '$T/rows.pftrace' '$T/rows' && python3 '$D/check_trace.py' perfetto '$T/rows.pftrace' >/dev/null"
row_slices() { # FILE NAME...: rank 0's X events named NAME (NAME ending in a space: a prefix) after the edge slot
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "thread_name"}
for e in d["traceEvents"]:
    n = e.get("name", "")
    if e.get("ph") == "X" and e["ts"] >= 500 and any(n == a or (a[-1] == " " and n.startswith(a)) for a in sys.argv[2:]):
        print("%s | %s %.3f %.3f" % (tn.get((e["pid"], e["tid"]), ""), e["name"], e["ts"], e["dur"]))
PY
}
is "$(row_slices "$T/rowsk/rank0.pt.trace.json" cudaGetDevice early "row 0" "row 1" ncclAllReduce | sort -t'|' -k2)" \
"thread 100 cuda #2 | cudaGetDevice 501.050 0.200
thread 100 cuda #2 | cudaGetDevice 540.500 1.000
thread 100 nvtx #2 | early 550.500 1.500
main (100) | ncclAllReduce 540.000 1.000
main (100) | ncclAllReduce 550.000 1.000
main (100) | row 0 501.000 0.100
main (100) | row 1 501.200 0.100" \
    "rows: the late CUDA calls and the range a call straddles leave the row; the ranges and calls stay"
# 70 nested ranges over the --edge range never popped: 63 kept, each closed by its own pop
is "$(row_slices "$T/rowsk/rank0.pt.trace.json" "nest " | awk '{n++; if ($7 != sprintf("%.3f", 561 + (69 - $5) * 0.01 - (560 + $5 * 0.01))) bad++} END {print n, bad + 0}')" \
    "63 0" "rows: NVTX ranges nested past 64 are left out and the kept ones keep their own pops"
like "$(tr '\n' ' ' < "$T/rowsk.err")" \
    "export: 10 slices moved off their thread's row to a \"#2\" row: .* export: 14 NVTX ranges nested deeper than 64 on" \
    "rows: the moves (5 per rank: 2 of --edge, 3 here) and the ranges left out (7 per rank) are said on stderr"
# past the row's memory (65536 slices per source while the CUDA calls lag): moved as unknown, counted, no overlap
"$GEN" "$T/deep" --ranks 1 --steps 3 --edge 1 --rows 1 --rows-deep 70000 || bail "generator failed (--rows-deep)"
ex --format kineto -o "$T/deepk" "$T/deep" 2> "$T/deepk.err"
ok "rows past the row's memory: kineto rules" python3 "$D/check_trace.py" kineto "$T/deepk"
like "$(row_slices "$T/deepk/rank0.pt.trace.json" cudaGetDevice | tail -1):$(grep 'moved off' "$T/deepk.err")" \
    "^thread 100 cuda #2 \\| cudaGetDevice 600\\.002 0\\.010:.*; 1 of them because the row no longer remembered their time$" \
    "rows past the row's memory: the late call straddling a forgotten range leaves the row, said on stderr"
# random traffic in hostile orders (pushes 80 deep, stray pops, calls starting back in time, late CUDA batches)
bad=""
for seed in 1 2 3 4; do
    "$GEN" "$T/rnd$seed" --ranks 1 --steps 1 --rows 70 --random $seed || bail "generator failed (--random)"
    ex -q --format kineto -o "$T/rnd$seed.k" "$T/rnd$seed" && python3 "$D/check_trace.py" kineto "$T/rnd$seed.k" >/dev/null ||
        bad="$bad kineto:$seed"
    for f in chrome perfetto; do
        ex -q --format $f -o "$T/rnd$seed.$f" "$T/rnd$seed" && python3 "$D/check_trace.py" $f "$T/rnd$seed.$f" >/dev/null ||
            bad="$bad $f:$seed"
    done
done
is "$bad" "" "rows: random traffic in any order, 4 seeds x 3 formats: no partial overlap"

# --- parallel export (-j): parts joined in input order give the same file
ok "chrome -j 2 writes the same bytes as a serial export" \
    sh -c "'$RS_CLI' export -q -j 2 --format chrome -o '$T/j2.json' '$T/tr' && cmp '$T/a.json' '$T/j2.json'"
ok "perfetto -j 2 writes the same bytes as a serial export (a packet sequence per process either way)" \
    sh -c "'$RS_CLI' export -q -j 2 --format perfetto -o '$T/j2.pftrace' '$T/tr' && cmp '$T/a.pftrace' '$T/j2.pftrace'"

# --- Kineto JSON
ok "kineto export" ex -q --format kineto -o "$T/k" "$T/tr"
ok "kineto rules: rank for HTA, categories, GPU rows, Memcpy/nccl names, ac2g ids" \
    sh -c "python3 '$D/check_trace.py' kineto '$T/k' > '$T/k.sum'"
ok "kineto summary matches the golden" diff -u "$D/golden/kineto.summary" "$T/k.sum"

# Kineto and processes without a rank: alone they are numbered (HTA still loads them); next to ranked
# ones (a launcher) they go to OUT/other/, where HTA does not look
"$GEN" "$T/unr" --ranks 2 --unranked 1
ex -q --format kineto -o "$T/ku" "$T/unr"
is "$(cd "$T/ku" && ls)" "$(printf 'rank0.pt.trace.json\nrank1.pt.trace.json')" "kineto: unranked processes numbered by input order"
mkdir -p "$T/mix" && cp "$T/tr"/*.rtrace "$T/mix/" && cp "$T/unr/proc0.rtrace" "$T/mix/"
ex -q --format kineto -o "$T/km" "$T/mix"
is "$(cd "$T/km" && find . -name '*.json' | sort | tr '\n' ' ')" \
    "./other/node0-pid4000.pt.trace.json ./rank0.pt.trace.json ./rank1.pt.trace.json " \
    "kineto: a rank-less process next to ranked ones goes to other/"

# --- --split
"$GEN" "$T/big" --ranks 2 --steps 120 >/dev/null
ok "chrome --split --split-mb 1" ex -q --format chrome --split --split-mb 1 -o "$T/s.json" "$T/big"
n=$(ls "$T"/s.*.json 2>/dev/null | wc -l)
like "$n" '^[2-9]$' "several split files ($n)"
ok "every split file parses as a trace" \
    python3 -c "import json,sys; [json.load(open(p))['traceEvents'] for p in sys.argv[1:]]" "$T"/s.*.json
out=$(ex --format chrome --split-mb 1 -o "$T/w.json" "$T/big" 2>&1)
like "$out" 'passed 1 MB.*--split' "without --split, a warning says the file is too big for viewers"

# --- bad input
out=$(ex --format perfetto -o "$T/x.pftrace" "$T/nonexistent" 2>&1); rc=$?
is "$rc:$(printf '%s\n' "$out" | wc -l)" "2:1" "missing input: exit 2, one line"
out=$(ex --format svg -o "$T/x" "$T/tr" 2>&1); rc=$?
like "$rc $out" '^2 railscope: export: unknown format' "unknown format: exit 2 with a railscope: line"

mkdir -p "$T/kd/rank0.pt.trace.json"   # a directory where a rank file should go
out=$(ex --format kineto -o "$T/kd" "$T/tr" 2>&1); rc=$?
is "$rc:$(printf '%s\n' "$out" | wc -l)" "2:1" "an output that cannot be written: exit 2, one line"

# --- truncated input: whole frames kept, exit 1, output still valid
cp -r "$T/big" "$T/cut"
f=$T/cut/rank0.rtrace
truncate -s $(( $(stat -c %s "$f") * 2 / 3 )) "$f"
ex -q --format perfetto -o "$T/cut.pftrace" "$T/cut"; rc=$?
is "$rc" "1" "truncated input: exit 1 (partial)"
ok "the export of a truncated trace is still valid" python3 "$D/check_trace.py" perfetto "$T/cut.pftrace"

# --- the hardening corpus (damaged/hostile files): exit 0, 1 or 2, never a crash; what is written is valid
C=$RS_TOP/tests/corpus/files
if ls "$C"/*.rtrace >/dev/null 2>&1; then
    crashes="" outs=""
    for f in "$C"/*.rtrace; do
        o=$T/corpus-$(basename "$f" .rtrace).pftrace
        run_timeout 20 "$RS_CLI" export -q --format perfetto -o "$o" "$f" >/dev/null 2>&1
        rc=$?
        [ $rc -le 2 ] || crashes="$crashes $(basename "$f"):$rc"
        [ $rc -le 1 ] && outs="$outs $o"
    done
    is "$crashes" "" "corpus: every damaged file ends with exit 0/1/2 (no crash)"
    ok "corpus: every export written from a damaged file passes the perfetto rules" \
        sh -c "python3 '$D/check_trace.py' perfetto $outs >/dev/null"
else
    skip "tests/corpus/files not present" 2
fi

# --- a larger, realistic run: the analyzer's synthetic cluster (4 ranks, deep WR queues, NVTX steps)
if [ -x "$RS_BUILD/synth/rs-synth" ]; then
    "$RS_BUILD/synth/rs-synth" -o "$T/syn" --nodes 2 --gpus 2 --steps 3 --pause 1:3:2 >/dev/null 2>&1
    ok "synthetic cluster: perfetto export with --findings passes the rules" \
        sh -c "'$RS_CLI' export -q --findings --format perfetto -o '$T/syn.pftrace' '$T/syn' && python3 '$D/check_trace.py' perfetto '$T/syn.pftrace' > '$T/syn.sum'"
    like "$(cat "$T/syn.sum")" '^track findings$' "the analyzer's findings are on a findings track"
    ok "synthetic cluster: chrome export passes the rules (overlap beyond the lanes included)" \
        sh -c "'$RS_CLI' export -q --format chrome -o '$T/syn.json' '$T/syn' && python3 '$D/check_trace.py' chrome '$T/syn.json'"
    ok "synthetic cluster: kineto export passes HTA's needs" \
        sh -c "'$RS_CLI' export -q --format kineto -o '$T/synk' '$T/syn' && python3 '$D/check_trace.py' kineto '$T/synk'"
    like "$(grep -o '"name":"ProfilerStep#[0-9]*"' "$T/synk/rank0.pt.trace.json" | sort -u | wc -l)" '^3$' \
        "kineto: NVTX ProfilerStep#N ranges as complete events for HTA"
else
    skip "synth/rs-synth not built" 5
fi

# --- memory does not grow with the trace
rss() { /usr/bin/time -f %M "$RS_CLI" export -q --format perfetto -o /dev/null "$1" 2>&1 >/dev/null | tail -1; }
if [ -x /usr/bin/time ]; then
    # (fixed-size buffers — the reader's frame, the output buffer — fill up on any non-tiny trace, so
    # compare two traces that both fill them)
    "$GEN" "$T/m" --ranks 1 --steps 4000 >/dev/null
    "$GEN" "$T/huge" --ranks 1 --steps 16000 >/dev/null
    small=$(rss "$T/m"); big=$(rss "$T/huge")
    diag "max RSS: 4000 steps ${small} KB, 16000 steps ${big} KB"
    ok "max RSS does not grow with the trace (4000 -> 16000 steps: ${small} -> ${big} KB)" \
        test $((big - small)) -lt 1024
else
    skip "/usr/bin/time not installed"
fi
