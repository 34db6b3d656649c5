#!/bin/bash
# export --split's summary names the files it wrote (OUT.0.json ... OUT.N-1.json), not OUT, which it never
# writes (review item 7: "1 file(s) at xs.json" while xs.0.json was written).
. "$(dirname "$0")/../lib.sh"
need_build railscope tests/core/emitter
plan 4
RAILSCOPE_OUT=$T/run run_timeout 60 "$RS_BUILD/tests/core/emitter" -t 1 -n 30000 >/dev/null 2>&1

err=$(run_timeout 60 "$RS_CLI" export --format chrome --split -o "$T/xs.json" "$T/run" 2>&1)
like "$err" " in 1 file\(s\) at $T/xs\.0\.json " "one part: the summary names xs.0.json"
ok "... which exists, and xs.json does not" test -s "$T/xs.0.json" -a ! -e "$T/xs.json"

err=$(run_timeout 60 "$RS_CLI" export --format chrome --split --split-mb 1 -o "$T/many" "$T/run" 2>&1)
n=$(ls "$T"/many.*.json | wc -l)
like "$err" " in $n file\(s\) at $T/many\.0\.json \.\. $T/many\.$((n - 1))\.json " "$n parts: the summary names the first and the last"
ok "... more than one part, and the last named exists" test "$n" -gt 1 -a -s "$T/many.$((n - 1)).json"
