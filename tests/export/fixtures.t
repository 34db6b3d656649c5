#!/bin/bash
# railscope export on the real multi-rank NCCL traces of tests/gpu/fixtures (recorded on an H200, planted
# truth in truth.json): every scenario's Chrome JSON, Perfetto and Kineto output pass check_trace.py's viewer
# rules (exact-nanosecond nesting: float sums gave false overlaps past 16.8 s; on a Kineto thread row the NVTX
# ranges, written at their pop, nest with the thread's calls: NCCL's never-popped ncclCommInitRankConfig range
# overlapped railscope's ncclCommInit call on every rank), and truth_check.py finds the planted story (steps,
# the sleeping ranks' idle gap, collectives that end at their last ProxyOp and so span the wait for the late
# ranks, the ranks' clocks merged). A directory with
# a truncated rank file and a non-trace: exit 1, both named, the rest exported, and the truncated rank
# flagged inside the output ("trace incomplete" with the reason) in every format.
. "$(dirname "$0")/../lib.sh"
D=$RS_TOP/tests/export
FX=$RS_TOP/tests/gpu/fixtures
need_build railscope
need_cmd python3
SCENS=$(cd "$FX" && for d in */; do [ -d "$d/trace" ] && echo "${d%/}"; done)
N=$(echo $SCENS | wc -w)
plan $((4 * N + 9))

for s in $SCENS; do
    run_timeout 120 "$RS_CLI" export -q --format chrome -o "$T/$s.json" "$FX/$s/trace"
    ok "$s: chrome export passes the viewer rules" sh -c "python3 '$D/check_trace.py' chrome '$T/$s.json' > '$T/$s.csum'"
    ok "$s: the planted story is in the timeline" sh -c "python3 '$D/truth_check.py' '$FX/$s' '$T/$s.json' > '$T/$s.tc'"
    run_timeout 120 "$RS_CLI" export -q --format perfetto -o "$T/$s.pftrace" "$FX/$s/trace"
    ok "$s: perfetto export passes the viewer rules (no partial overlap)" \
        sh -c "python3 '$D/check_trace.py' perfetto '$T/$s.pftrace' > '$T/$s.psum'"
    run_timeout 120 "$RS_CLI" export -q --format kineto -o "$T/$s.kineto" "$FX/$s/trace"
    ok "$s: kineto export passes the viewer rules (no partial overlap on a thread's row)" \
        sh -c "python3 '$D/check_trace.py' kineto '$T/$s.kineto' > '$T/$s.ksum'"
done
[ -s "$T/s4_two.tc" ] && diag "$(grep -E 'idle|merged|span' "$T/s4_two.tc")"

# a damaged run: one rank cut in half (a killed writer), one file that is no trace
mkdir "$T/dmg" && cp "$FX/s4_two/trace"/*.rtrace "$T/dmg/"
f=$(ls "$T/dmg"/*.rtrace | sed -n 3p)
truncate -s $(($(stat -c %s "$f") / 2)) "$f"
printf 'garbage' > "$T/dmg/zz-bad.rtrace"
run_timeout 60 "$RS_CLI" export --format chrome -o "$T/dmg.json" "$T/dmg" 2> "$T/dmg.err"
is "$?" 1 "damaged directory: exit 1"
like "$(cat "$T/dmg.err")" "$(basename "$f"): truncated: file ends inside frame" "the truncated rank named on stderr"
like "$(cat "$T/dmg.err")" "skipping .*zz-bad.rtrace: not a railscope trace" "the non-trace named on stderr"
ok "damaged directory: the output still passes the viewer rules" python3 "$D/check_trace.py" chrome "$T/dmg.json"
pid=$(basename "$f" .rtrace | sed 's/.*-//')
like "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = {e["pid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"}
for e in d["traceEvents"]:
    if e.get("name") == "trace incomplete":
        print(names[e["pid"]], "|", e["args"]["message"])' "$T/dmg.json")" "^rank [0-9] \(vm pid $pid\) \| truncated: file ends inside frame" \
    "chrome: the truncated rank is flagged inside the output, on its own process"
run_timeout 60 "$RS_CLI" export -q --format perfetto -o "$T/dmg.pftrace" "$T/dmg"
is "$?" 1 "perfetto: exit 1 too"
like "$(grep -c 'trace incomplete' "$T/dmg.pftrace")" '^[1-9]' "perfetto: the flag is in the output"
ok "perfetto: the damaged run's output passes the viewer rules" python3 "$D/check_trace.py" perfetto "$T/dmg.pftrace"
# one truncated file alone, through -j 2 (part files) and kineto
run_timeout 60 "$RS_CLI" export -q --format kineto -o "$T/tk" "$RS_TOP/tests/corpus/files/trunc-cut-blocks.rtrace"
like "$(cat "$T/tk"/*.json | grep -o '"name":"trace incomplete"' | head -1)" 'trace incomplete' \
    "kineto: a truncated file's rank file says it is incomplete"
