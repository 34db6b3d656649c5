#!/bin/bash
# How a trace file ended, said the same way by every tool (audit s17, items 3, 8, 9, 10):
#  - a file without PROC_END (the process was killed, crashed or is still running) is "incomplete": info and
#    dump print everything in it, say so, and exit 1, as report (partial input) and export do. Before: info,
#    dump and export said "complete" with exit 0, report "truncated" with exit 1.
#  - the reader's reason starts with the status name once: "truncated: file ends inside frame N", never
#    "truncated: truncated: ..." (info, report's warnings).
#  - dump's text mode prints "(no time)" for the records written before the first timestamped event (ts 0),
#    not 0 minus the start time (about minus the host's uptime); dump --json keeps their raw "ts_ns":0.
#  - report --step-marker NAME that delimits no step says so in the warnings (text and JSON) and which step
#    source was used instead.
. "$(dirname "$0")/../lib.sh"
need_build railscope tests/core/emitter synth/rs-synth
need_cmd jq
plan 27
E=$RS_BUILD/tests/core/emitter

# A finished process (PROC_END) and a killed one (SIGKILL after its 1000 marks reached the file).
RAILSCOPE_OUT=$T/done run_timeout 60 "$E" -t 1 -n 1000 >/dev/null 2>&1
done_f=$(ls "$T"/done/*.rtrace)
RAILSCOPE_FLUSH_MS=50 RAILSCOPE_OUT=$T/killed "$E" -t 1 -n 1000 -p >"$T/killed.out" 2>&1 &
pid=$!
for _ in $(seq 1800); do grep -q ready "$T/killed.out" 2>/dev/null && break; sleep 0.05; done
sleep 0.5 # several flush intervals: every mark is on disk
exec 3>&2 2>/dev/null # no "Killed" line from the shell
kill -KILL $pid
wait $pid
exec 2>&3 3>&-
killed_f=$(ls "$T"/killed/*.rtrace)

out=$("$RS_CLI" info "$done_f")
is "$?" 0 "info: a file with PROC_END: exit 0"
like "$out" '^status: +complete: [0-9]+ frames, ends at a frame boundary$' "info: ... status complete"

out=$("$RS_CLI" info "$killed_f")
is "$?" 1 "info: a killed process's file: exit 1"
like "$(grep '^status:' <<<"$out")" '^status: +incomplete: [0-9]+ frames, ends at a frame boundary, but no PROC_END: .*partial' \
    "info: ... status incomplete (no PROC_END), says partial"
unlike "$out" '(^|[^n])complete' "info: ... never says complete"
like "$out" '^  mark +1000$' "info: ... every mark still listed"

"$RS_CLI" info "$T/done" "$T/killed" >/dev/null
is "$?" 1 "info: a complete file beside an incomplete one: exit 1"

"$RS_CLI" dump "$killed_f" >"$T/dump.txt" 2>"$T/dump.err"
is "$?" 1 "dump: a killed process's file: exit 1"
is "$(wc -l <"$T/dump.err"),$(grep -c "^railscope: dump: $killed_f: incomplete: [0-9]* frames, .*no PROC_END" "$T/dump.err")" 1,1 \
    "dump: ... one 'railscope:' line says incomplete"
is "$(grep -c ' mark ' "$T/dump.txt")" 1000 "dump: ... every mark still printed"
"$RS_CLI" dump --json "$killed_f" >"$T/dump.json" 2>/dev/null
is "$?:$(grep -c '"kind":"mark"' "$T/dump.json")" "1:1000" "dump --json: exit 1, every mark"

"$RS_CLI" report "$killed_f" >"$T/rep.txt" 2>/dev/null
is "$?" 1 "report: the same file: exit 1 (partial input), as info and dump"
like "$(cat "$T/rep.txt")" "$killed_f: truncated: [0-9]+ frames, ends at a frame boundary, but no PROC_END" \
    "report: ... its warning gives the reader's reason once"
run_timeout 60 "$RS_CLI" export -q --format chrome -o "$T/k.json" "$killed_f" 2>/dev/null
is "$?" 1 "export: the same file: exit 1"

for c in info dump; do
    like "$("$RS_CLI" $c --help)" 'is "incomplete": partial, exit 1' "$c --help: a file without PROC_END is incomplete, exit 1"
done

# A file cut inside a frame: the status word once.
RAILSCOPE_FLUSH_MS=20 RAILSCOPE_OUT=$T/long run_timeout 60 "$E" -t 1 -n 40000 -r 100000 >/dev/null 2>&1
long_f=$(ls "$T"/long/*.rtrace)
head -c $(($(stat -c %s "$long_f") - 100)) "$long_f" >"$T/cut.rtrace"
out=$("$RS_CLI" info "$T/cut.rtrace")
is "$?" 1 "info: a file cut inside a frame: exit 1"
like "$out" '^status: +truncated: file ends inside frame [1-9]' "info: ... 'status: truncated: file ends inside frame N'"
unlike "$out" 'truncated: truncated' "info: ... the word once"
"$RS_CLI" report "$T/cut.rtrace" >"$T/cut.txt" 2>/dev/null
like "$(cat "$T/cut.txt")" "cut.rtrace: truncated: file ends inside frame" "report: its warning: 'FILE: truncated: file ends ...'"
unlike "$(cat "$T/cut.txt")" 'truncated: truncated' "report: ... the word once"

# Records before the first timestamped event (the host snapshot's strings): no time, not minus the uptime.
"$RS_CLI" dump "$done_f" >"$T/d.txt" 2>/dev/null
line=$(grep -m1 ' string ' "$T/d.txt")
like "$line" '^\(no time\) [0-9]+/0 string id=1 ' "dump: the first string, written before any timestamp: '(no time)'"
unlike "$(cut -d' ' -f1 "$T/d.txt")" '^-[0-9]{3,}' "dump: no time hundreds of seconds before the start"
like "$("$RS_CLI" dump --json "$done_f" | grep -m1 '"kind":"string"')" '"ts_ns":0,' "dump --json: its raw ts_ns 0"

# --step-marker that matches nothing: a warning naming the step source used instead (text and JSON).
"$RS_BUILD/synth/rs-synth" -o "$T/syn" --truth "$T/syn.truth" --step-name "train_iter %d" >/dev/null ||
    bail "rs-synth failed"
"$RS_CLI" report --step-marker nosuchmarker "$T/syn" >"$T/sm.txt" 2>/dev/null
like "$(cat "$T/sm.txt")" "  --step-marker 'nosuchmarker' delimits no step \(no NVTX range and fewer than two marks start with it\): steps from [a-z]" \
    "report --step-marker NAME that matches nothing: a warning with the step source used instead"
"$RS_CLI" report --json --step-marker nosuchmarker "$T/syn" >"$T/sm.json" 2>/dev/null
src=$(jq -r .step_source "$T/sm.json")
is "$(jq -r '.warnings[] | select(startswith("--step-marker"))' "$T/sm.json")" \
    "--step-marker 'nosuchmarker' delimits no step (no NVTX range and fewer than two marks start with it): steps from $src" \
    "report --json: the same warning, naming the JSON's step_source ($src)"
"$RS_CLI" report --json --step-marker train_iter "$T/syn" >"$T/sm2.json" 2>/dev/null
is "$(jq -r '[.warnings[] | select(startswith("--step-marker"))] | length' "$T/sm2.json"),$(jq -r .step_source "$T/sm2.json")" \
    "0,marker train_iter" "report --step-marker NAME that delimits the steps: no warning"
