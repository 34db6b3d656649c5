#!/bin/bash
# export -j N writes the very bytes of -j 1 (export --help, docs/export.md), Perfetto included: each
# process is its own packet sequence with its own interning and track numbering, whichever exporter writes
# it. Perfetto -j 2 used to differ (one sequence and one name table over every input when serial, one per
# part in parallel: an extra packet and other iids and uuids). An unreadable input keeps its index either
# way (it used to shift the later processes' numbers in a serial export only).
. "$(dirname "$0")/../lib.sh"
D=$RS_TOP/tests/export
GEN=$RS_BUILD/tests/export/rs-export-gen
need_build railscope tests/export/rs-export-gen
need_cmd python3
plan 11

ex() { run_timeout 60 "$RS_CLI" export -q "$@"; }
# same FORMAT J DIR-or-files...: -j J and -j 1 give the same bytes and the same exit status
same() {
    local f=$1 j=$2 rc1 rcj
    shift 2
    ex --format "$f" -j 1 -o "$T/s1.$f" "$@"
    rc1=$?
    ex --format "$f" -j "$j" -o "$T/s$j.$f" "$@"
    rcj=$?
    [ "$rc1" = "$rcj" ] || { diag "exit $rc1 with -j 1, $rcj with -j $j"; return 1; }
    cmp "$T/s1.$f" "$T/s$j.$f"
}

"$GEN" "$T/two" --ranks 2 --steps 3 || bail "generator failed"
ok "perfetto, 2 ranks: -j 2 writes the bytes of -j 1" same perfetto 2 "$T/two"
ok "the -j 2 output passes the perfetto rules (iids interned on their sequence)" \
    python3 "$D/check_trace.py" perfetto "$T/s2.perfetto"
ok "chrome, 2 ranks: -j 2 writes the bytes of -j 1" same chrome 2 "$T/two"

# 4 ranks with the findings pseudo-process, -j 3 (a worker takes two files) and -j 8 (more than files)
"$GEN" "$T/four" --ranks 4 --steps 2 --edge 1 || bail "generator failed (4 ranks)"
for f in perfetto chrome; do
    ok "$f, 4 ranks + --findings: -j 3 writes the bytes of -j 1" same $f 3 --findings "$T/four"
    ok "$f, 4 ranks + --findings: -j 8 writes the bytes of -j 1" same $f 8 --findings "$T/four"
done

# an unreadable input between readable ones, and a truncated one: exit 1 both ways, same bytes
cp -r "$T/four" "$T/mix"
echo "not a trace" > "$T/mix/rank1-bad.rtrace"
cp "$RS_TOP/tests/corpus/files/trunc-cut-blocks.rtrace" "$T/mix/rank2-cut.rtrace"
for f in perfetto chrome; do
    ok "$f, an unreadable and a truncated input among 4 ranks: -j 2 writes the bytes of -j 1" same $f 2 "$T/mix"
done
ok "that -j 2 perfetto output passes the rules" python3 "$D/check_trace.py" perfetto "$T/s2.perfetto"

if [ -x "$RS_BUILD/synth/rs-synth" ]; then
    "$RS_BUILD/synth/rs-synth" -o "$T/syn" --nodes 2 --gpus 2 --steps 3 >/dev/null 2>&1 || bail "rs-synth failed"
    ok "perfetto, a synthetic 2 x 2 run: -j 4 writes the bytes of -j 1" same perfetto 4 "$T/syn"
else
    skip "synth/rs-synth not built" 1
fi
