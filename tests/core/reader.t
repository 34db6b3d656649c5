#!/bin/bash
# The reader on damaged input: empty, garbage, wrong version, truncated at many points, bit flips and
# crafted frames with valid checksums around hostile sizes. Every case must end with a clear status
# and no crash; the same cases run again against an ASan+UBSan build of the reader.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check railscope
need_cmd python3 zstd
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 11
# Under a sanitizer build (sanitizers.t runs tests/core on its ASan+UBSan tree) check, info and dump below are
# the sanitized runs: a report exits 99 and counts as a crash, check's runs look for leaks too and stand for the
# separate ASan build of the reader at the end (~110 more sanitized processes and a compile: 35 s at load).
san=
if [ -n "$RS_SAN" ]; then
    san=99
    export ASAN_OPTIONS=$ASAN_OPTIONS:exitcode=99 UBSAN_OPTIONS=$UBSAN_OPTIONS:exitcode=99
    export TSAN_OPTIONS=$TSAN_OPTIONS:exitcode=99
fi
crashed() { [ "$1" -ge 128 ] || [ "$1" = "$san" ]; }
check_san_bad=0
check() { # FILE: check's status; under a sanitizer build a report or a leak counts in check_san_bad
    if [ -n "$san" ]; then
        ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=1 "$C" "$1" >/dev/null 2>"$T/san.err"
        local rc=$?
        if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then
            check_san_bad=$((check_san_bad + 1))
            diag "sanitizer on $(basename "$1"): exit $rc $(grep -m1 -E 'ERROR|runtime error' "$T/san.err")"
        fi
        return $rc
    fi
    "$C" "$1" >/dev/null 2>&1
}

RAILSCOPE_FLUSH_MS=10 RAILSCOPE_OUT=$T/good run_timeout 30 "$E" -t 2 -n 3000 -r 50000 >/dev/null
good=$(ls "$T"/good/*.rtrace)
[ -n "$san" ] && check "$good"
ok "the good file decodes completely" sh -c "\"$C\" \"$good\" | grep -q 'status=complete marks=6000 gaps=0'"
mkdir "$T/bad"
python3 "$RS_TOP/tests/core/mutate.py" "$good" "$T/bad" >"$T/names" || bail "mutate.py failed"
n=$(wc -l <"$T/names")
diag "$n damaged files"

crashes=0 badexit=0 multiline=0 noprefix=0 nl=$'\n'
# (bash builtins for names and line counts: a basename and a grep per file were ~300 more processes)
for f in "$T"/bad/*.rtrace; do
    b=${f##*/}
    check "$f"
    rc=$?
    crashed $rc && { crashes=$((crashes + 1)); diag "check crashed ($rc) on $b"; }
    err=$("$RS_CLI" info "$f" 2>&1 >/dev/null)
    rc=$?
    crashed $rc && { crashes=$((crashes + 1)); diag "info crashed ($rc) on $b: $(printf '%s' "$err" | grep -m1 -E 'ERROR|runtime error')"; }
    case $b in
    craft-unknown-kind.rtrace | craft-seq-gap.rtrace | craft-mark-bad-string.rtrace | hflip-*) ;;  # decodable
    *) # (a flipped bit in a frame's sequence number is reported as a gap, and the data is intact)
       [ $rc -eq 1 ] || [ $rc -eq 2 ] || "$RS_CLI" info "$f" 2>/dev/null | grep -q "gaps in the frame sequence" ||
           { badexit=$((badexit + 1)); diag "info exit $rc on $b"; } ;;
    esac
    # more than one non-empty line: a character, a newline later, another character after it
    [[ $err != *[!$nl]*$nl*[!$nl]* ]] || { multiline=$((multiline + 1)); diag "several error lines for $b"; }
    [ -z "$err" ] || [ "${err#railscope: }" != "$err" ] || noprefix=$((noprefix + 1))
    "$RS_CLI" dump --json "$f" >/dev/null 2>&1
    rc=$?
    crashed $rc && { crashes=$((crashes + 1)); diag "dump crashed ($rc) on $b"; }
done
is "$crashes" 0 "no crash on $n damaged files (check, info, dump)"
is "$badexit" 0 "info exits 1 (damaged) or 2 (unreadable) on each"
is "$multiline" 0 "one error line per file"
is "$noprefix" 0 "errors start with 'railscope: '"

msg=$("$RS_CLI" info "$T/bad/empty.rtrace" 2>&1)
like "$msg" "empty file" "empty file: says so"
msg=$("$RS_CLI" info "$T/bad/major2.rtrace" 2>&1)
like "$msg" "format version 2\.[0-9]+, this railscope reads 1" "other major version: says which"
msg=$("$RS_CLI" info "$(ls "$T"/bad/trunc-*.rtrace | sort -t- -k2 -n | tail -1)" 2>&1)
like "$msg" "truncated: file ends inside frame" "truncated file: says where"
msg=$("$C" "$T/bad/craft-unknown-kind.rtrace")
like "$msg" "status=incomplete marks=1 " "unknown kinds are skipped by size (no PROC_END: incomplete)"

# Same cases under AddressSanitizer + UndefinedBehaviorSanitizer (only the reader: a few seconds).
if [ -n "$san" ]; then
    is "$check_san_bad" 0 "ASan/UBSan reader ($RS_SAN build, leaks checked): clean on the good file and all damaged files"
elif echo 'int main(void){return 0;}' | gcc -fsanitize=address,undefined -x c - -o "$T/asan-probe" 2>/dev/null; then
    if gcc -std=gnu11 -O1 -g -D_GNU_SOURCE -fsanitize=address,undefined -fno-sanitize-recover=all \
        -I"$RS_TOP" -I"$RS_TOP/formats" -I"$RS_TOP/tracer" -o "$T/check-asan" "$RS_TOP/tests/core/check.c" \
        "$RS_TOP/formats/reader.c" "$RS_TOP/formats/rtrace_tables.c" -lzstd 2>"$T/asan-build.log"; then
        bad=0
        for f in "$good" "$T"/bad/*.rtrace; do
            ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:exitcode=99 \
                "$T/check-asan" "$f" >/dev/null 2>"$T/asan.err"
            rc=$?
            if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then
                bad=$((bad + 1))
                diag "sanitizer on $(basename "$f"): $(grep -m1 -E 'ERROR|runtime error' "$T/asan.err")"
            fi
        done
        is "$bad" 0 "ASan/UBSan reader: clean on the good file and all damaged files"
    else
        _tap_result 1 "ASan/UBSan build of the reader"
        sed 's/^/#   /' "$T/asan-build.log" | head >&2
    fi
else
    skip "no ASan/UBSan runtime for gcc here"
fi
msg=$("$C" "$T/bad/craft-seq-gap.rtrace")
like "$msg" "status=incomplete marks=1" "a frame sequence gap still decodes (no PROC_END: incomplete)"
