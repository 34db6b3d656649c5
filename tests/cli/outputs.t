#!/bin/bash
# Outputs and option order (user audit s17, items 1, 6 and part of 10):
#  1   an output that is also an input destroyed the trace: `report --html run/x.rtrace run` read it and wrote
#      the page over it (exit 0, silent); `export -o run/x.rtrace run` truncated it before reading it ("empty
#      file"). Now refused before anything is written: one line, exit 2, the trace byte for byte as it was,
#      for a file or a directory operand and for a symbolic or hard link to an input.
#  6   options after the operands: report took them, dump/info/export read them as file names
#      (`dump run --json`: "--json: No such file or directory", nothing printed). Now every command takes
#      them anywhere; `--` ends them (`info -- -q` reads a file named -q). record still stops at its command.
#  10  `railscope --help` lists --version; report's usage line names every option; export's summary counts
#      the files read, not those skipped; the skip warning names the file once.
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile railscope
plan 44
MK=$RS_BUILD/tests/cli/mkhostile
mkdir "$T/run"
"$MK" plain "$T/run/a.rtrace" 2>/dev/null
"$MK" plain "$T/run/b.rtrace" 2>/dev/null
cp "$T/run/a.rtrace" "$T/a.orig"
cp "$T/run/b.rtrace" "$T/b.orig"
cd "$T" || bail "cd $T"

# refused CASE EXPECTED_RC MESSAGE_RE CMD...: exit status, exactly one stderr line matching MESSAGE_RE,
# and both traces unchanged
refused() {
    local desc=$1 want=$2 re=$3 rc good=0
    shift 3
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    [ "$rc" -eq "$want" ] || good=1
    [ "$(grep -c . "$T/err")" -eq 1 ] && grep -Eq -- "$re" "$T/err" || good=1
    cmp -s run/a.rtrace a.orig && cmp -s run/b.rtrace b.orig || good=1
    _tap_result $good "$desc (exit $rc)"
    [ $good -ne 0 ] && diag "$(head -c 600 "$T/err")"
    return 0
}
IN='^railscope: (report|export): output .* is one of the input traces$'

# --- 1: output = input ---
refused "report --html INPUT INPUT: refused, trace intact" 2 "$IN" "$RS_CLI" report --html run/a.rtrace run/a.rtrace
refused "report --html INPUT DIR: refused, trace intact" 2 "$IN" "$RS_CLI" report --html run/a.rtrace run
refused "report DIR --html INPUT (option last): refused" 2 "$IN" "$RS_CLI" report run --html run/b.rtrace
ln -s run/a.rtrace sym.html
refused "report --html SYMLINK-TO-INPUT DIR: refused" 2 "$IN" "$RS_CLI" report --html sym.html run
ln run/b.rtrace hard.html
refused "report --html HARDLINK-TO-INPUT FILE: refused" 2 "$IN" "$RS_CLI" report --html hard.html run/b.rtrace
is "$(grep -c . out)" 0 "report: nothing on stdout when the output is refused"
for f in chrome perfetto; do
    refused "export $f -o INPUT INPUT: refused, trace intact" 2 "$IN" \
        "$RS_CLI" export --format $f -o run/a.rtrace run/a.rtrace
    refused "export $f -o INPUT DIR: refused, trace intact" 2 "$IN" "$RS_CLI" export --format $f -o run/b.rtrace run
done
refused "export -o SYMLINK-TO-INPUT DIR: refused" 2 "$IN" "$RS_CLI" export --format chrome -o sym.html run
refused "export -o HARDLINK-TO-INPUT DIR: refused" 2 "$IN" "$RS_CLI" export --format chrome -o hard.html run
refused "export -j 2 -o INPUT DIR (parallel path): refused" 2 "$IN" \
    "$RS_CLI" export --format chrome -j 2 -o run/a.rtrace run
# outputs the exporter names itself are checked when opened, before they are truncated
cp a.orig s.0.json
refused "export --split: OUT.0.json is an input: refused" 2 'cannot write s\.0\.json: it is one of the input traces' \
    "$RS_CLI" export --format chrome --split -o s.json s.0.json run/b.rtrace
cmp -s s.0.json a.orig
_tap_result $? "export --split: that input is intact"
mkdir kin && cp a.orig kin/rank0.pt.trace.json
refused "export kineto: a rank file is an input: refused" 2 'rank0\.pt\.trace\.json: it is one of the input traces' \
    "$RS_CLI" export --format kineto -o kin kin/rank0.pt.trace.json
cmp -s kin/rank0.pt.trace.json a.orig
_tap_result $? "export kineto: that input is intact"
cp a.orig p.part0.tmp
refused "export -j 2: a part file is an input: refused" 2 'p\.part0\.tmp: it is one of the input traces' \
    "$RS_CLI" export --format chrome -j 2 -o p p.part0.tmp run/b.rtrace
cmp -s p.part0.tmp a.orig
_tap_result $? "export -j 2: that input is neither overwritten nor removed"
"$RS_CLI" export --format chrome -o - run >>run/a.rtrace 2>"$T/err"
is "$?:$(cmp -s run/a.rtrace a.orig && echo same)" "2:same" "export -o - appending to an input: refused, trace intact"
# what is not an input is still written, and an existing longer file is truncated
head -c 3000000 /dev/zero | tr '\0' x >old.json
"$RS_CLI" export -q --format chrome -o old.json run
is "$?:$(python3 -c 'import json,sys; json.load(open(sys.argv[1])); print("json")' old.json 2>&1)" "0:json" \
    "export over an existing longer file: rewritten whole (valid JSON)"
"$RS_CLI" report --html new.html run >/dev/null 2>&1
is "$?:$(head -c 15 new.html)" "0:<!DOCTYPE html>" "report --html to a new file: written"
cmp -s run/a.rtrace a.orig && cmp -s run/b.rtrace b.orig
_tap_result $? "after everything: both traces byte for byte as recorded"

# --- 6: options anywhere, "--" ends them ---
cmp_runs() { # DESC "ARGS BEFORE" "ARGS AFTER"
    local a b
    a=$(eval "\"$RS_CLI\" $2" 2>&1 | md5sum; echo "${PIPESTATUS[0]}")
    b=$(eval "\"$RS_CLI\" $3" 2>&1 | md5sum; echo "${PIPESTATUS[0]}")
    is "$b" "$a" "$1"
}
cmp_runs "dump run --json = dump --json run" "dump --json run" "dump run --json"
out=$("$RS_CLI" dump run --json 2>/dev/null)
like "$out" '^\{"kind":' "dump run --json: JSON Lines on stdout"
cmp_runs "dump run/a.rtrace --abs run/b.rtrace = dump --abs ..." "dump --abs run/a.rtrace run/b.rtrace" \
    "dump run/a.rtrace --abs run/b.rtrace"
cmp_runs "info run --help = info --help run" "info --help run" "info run --help"
cmp_runs "info run -q = info -q run (an unknown option either way)" "info -q run" "info run -q"
like "$("$RS_CLI" info run -q 2>&1)" "^railscope: info: unknown option '-q'" "info run -q: named as an unknown option"
cmp_runs "report run --json --quiet = report --json --quiet run" "report --json --quiet run" "report run --json --quiet"
"$RS_CLI" export --format chrome -o x1.json -q run >o1 2>&1
r1=$?
"$RS_CLI" export --format chrome -o x2.json run -q >o2 2>&1
is "$?:$(cat o2):$(cmp -s x1.json x2.json && echo same)" "$r1:$(cat o1):same" "export ... run -q = export ... -q run"
"$RS_CLI" export run --format perfetto -o x3.pf >/dev/null 2>&1
is "$?:$(test -s x3.pf && echo written)" "0:written" "export with every option after the path"
cp a.orig ./-q
for c in info dump "report --json" "export -q --format chrome -o dq.json"; do
    "$RS_CLI" $c -- -q >/dev/null 2>"$T/err"
    is "$?:$(grep -c . "$T/err")" "0:0" "$c -- -q: reads the file named -q"
done
out=$("$RS_CLI" record -q -o "$T/rec" /bin/echo hi --json -q 2>&1)
is "$out" "hi --json -q" "record: the command's own flags after its name stay the command's"

# --- 10 ---
like "$("$RS_CLI" --help)" '--version' "railscope --help lists --version"
u=$("$RS_CLI" report --help | sed '/^$/q')
like "$u" '--threads N' "report usage line: --threads"
like "$u" '--max-mem MIB' "report usage line: --max-mem"
like "$u" '--quiet' "report usage line: --quiet"
mkdir bad && cp a.orig bad/good.rtrace && echo hello >bad/junk.rtrace
"$RS_CLI" export --format chrome -o bad.json bad >/dev/null 2>"$T/err"
is "$?" 1 "export with an unreadable file beside a good one: exit 1"
like "$(cat "$T/err")" 'events from 1 file\(s\) \(1 skipped\)' \
    "export summary counts the file read, not the skipped one"
is "$(grep 'skipping' "$T/err" | grep -o 'junk\.rtrace' | wc -l)" 1 "the skip warning names the file once"
exit 0
