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

# Under a sanitizer (tests/hardening/sanitizers.t runs tests/export against its ASan+UBSan tree and names the plain
# build in RS_BUILD_PLAIN) the sanitized exporter's output is compared byte for byte with the plain build's, which
# the plain run of this file checks with the Python checkers below: the same ~50 s of Python on the same bytes again
# was the largest part of the offline suites under ASan (session 30; the exports themselves take ~0.3 s there). Any
# difference fails the check. Without a plain build to compare with (make soak, a hand run), the checkers run.
plain=
[ -n "$RS_SAN" ] && [ -x "${RS_BUILD_PLAIN:-}/railscope" ] && plain=$RS_BUILD_PLAIN/railscope
export_fx() { # FORMAT SCENARIO OUT: this build's export (and the plain build's into OUT.plain under a sanitizer)
    run_timeout 120 "$RS_CLI" export -q --format "$1" -o "$3" "$FX/$2/trace"
    [ -z "$plain" ] || run_timeout 120 "$plain" export -q --format "$1" -o "$3.plain" "$FX/$2/trace"
}
rules() { # DESCRIPTION OUT SHELL-COMMAND: the checker, or under a sanitizer OUT identical to the plain build's
    if [ -n "$plain" ]; then
        ok "$1 ($RS_SAN build: output identical to the plain build's, which its run checks)" diff -r -q "$2" "$2.plain"
    else
        ok "$1" sh -c "$3"
    fi
}
for s in $SCENS; do
    export_fx chrome "$s" "$T/$s.json"
    rules "$s: chrome export passes the viewer rules" "$T/$s.json" \
        "python3 '$D/check_trace.py' chrome '$T/$s.json' > '$T/$s.csum'"
    rules "$s: the planted story is in the timeline" "$T/$s.json" \
        "python3 '$D/truth_check.py' '$FX/$s' '$T/$s.json' > '$T/$s.tc'"
    export_fx perfetto "$s" "$T/$s.pftrace"
    rules "$s: perfetto export passes the viewer rules (no partial overlap)" "$T/$s.pftrace" \
        "python3 '$D/check_trace.py' perfetto '$T/$s.pftrace' > '$T/$s.psum'"
    export_fx kineto "$s" "$T/$s.kineto"
    rules "$s: kineto export passes the viewer rules (no partial overlap on a thread's row)" "$T/$s.kineto" \
        "python3 '$D/check_trace.py' kineto '$T/$s.kineto' > '$T/$s.ksum'"
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
