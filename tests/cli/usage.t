#!/bin/bash
# A mistyped command line gets one line on stderr worded alike in every command ("railscope: CMD: ...",
# cli_option_error), exit 2, nothing else. report, export and doctor said "unknown or incomplete option '--html'"
# for a missing value; now, as record, dump and info: "--html needs a value", and a flag given a value (--json=1)
# "takes no value". A path that does not exist is one line too.
. "$(dirname "$0")/../lib.sh"
need_build railscope
plan 21
cd "$T" || bail "no tmp"

# says DESC EXPECTED ARGS...: stdout and stderr together are exactly EXPECTED (one line) and the exit is 2
says() {
    local d=$1 want=$2 out
    shift 2
    out=$("$RS_CLI" "$@" </dev/null 2>&1)
    is "$?:$out" "2:$want" "$d"
}

for c in record dump info report export doctor; do
    says "$c --bogus: unknown option, one line" "railscope: $c: unknown option '--bogus' (try 'railscope $c --help')" \
        "$c" --bogus
done
says "report --html (last): needs a value" "railscope: report: --html needs a value" report --html
says "report run --step-marker: needs a value" "railscope: report: --step-marker needs a value" report run --step-marker
says "export --format (last): needs a value" "railscope: export: --format needs a value" export --format
says "export -o (last): needs a value" "railscope: export: -o needs a value" export --format chrome -o
says "doctor --trace (last): needs a value" "railscope: doctor: --trace needs a value" doctor --trace
says "report --json=1: takes no value" "railscope: report: option '--json' takes no value" report --json=1 run
says "export --findings=1: takes no value" "railscope: export: option '--findings' takes no value" \
    export --findings=1 --format chrome -o x.json run
says "doctor --quiet=1: takes no value" "railscope: doctor: option '--quiet' takes no value" doctor --quiet=1
for c in dump info report; do
    says "$c of a missing path: one line" "railscope: $c: $T/nope: No such file or directory" "$c" "$T/nope"
done
says "export of a missing path: one line" "railscope: export: $T/nope: No such file or directory" \
    export --format chrome -o x.json "$T/nope"
says "doctor --trace of a missing path: one line" "railscope: doctor: --trace $T/nope: No such file or directory" \
    doctor --trace "$T/nope"
# Numbers are whole: report --threads took "2x" and "3.5" (atoi) where every other number option refuses them.
says "report --threads 2x: refused" "railscope: report: bad --threads '2x' (1..64)" report --threads 2x run
says "report --threads 3.5: refused" "railscope: report: bad --threads '3.5' (1..64)" report --threads=3.5 run
