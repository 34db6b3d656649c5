#!/bin/bash
# The tricky-file corpus (tests/corpus/files, made by mkcorpus.c) through every consumer:
#  1. the reader (rs-readcheck): status, events handed out and (column 4) the reason, against EXPECT,
#     and its peak memory per file;
#  2. every fuzz target's replay driver over the corpus and the fuzzers' seed/regression inputs
#     (tests/fuzz/seeds/, tests/corpus/regress/) with the fuzzers' invariants (fuzz_common.h);
#  3. the CLI: dump, dump --json, info, report, report --json, report --html, export perfetto/chrome/
#     kineto on each file: never a crash (signal or sanitizer report), exit 0 for complete files, 1 for
#     truncated/corrupt/partial ones (report: not 0), 2 for files the reader refuses; exit 2 comes with a
#     "railscope: " line on stderr, exit 1 with output that says truncated/corrupt/partial.
# Under a sanitizer build (RS_BUILD=.../build-asan) the same runs check memory errors too.
. "$(dirname "$0")/../lib.sh"
C=$RS_TOP/tests/corpus
RC=$RS_BUILD/tests/corpus/rs-readcheck
need_build tests/corpus/rs-readcheck railscope

mapfile -t names < <(grep -v '^#' "$C/EXPECT" | awk '{print $1}')
cli_cmds=(dump "dump --json" info report "report --json" "report --html OUT.html" "export --format perfetto -o OUT.pf"
    "export --format chrome -o OUT.json" "export --format kineto -o OUT.kj")
# RS_CORPUS_QUICK=1 (sanitizers.t, where every command costs a sanitized process start): one command per
# code path family.
[ -n "${RS_CORPUS_QUICK:-}" ] && cli_cmds=("dump --json" info "report --html OUT.html" "export --format perfetto -o OUT.pf")
nfuzz=$(ls "$RS_BUILD"/fuzz/*-replay 2>/dev/null | wc -l)
plan $((${#names[@]} + nfuzz + 2))

# 1. the reader
declare -A expect_status
while read -r name status events reason; do
    case $name in '#'*|'') continue ;; esac
    expect_status[$name]=$status
    line=$("$RC" "$C/files/$name.rtrace")
    read -r _ gst gev _ <<<"$line"
    why=${line#*| }
    good=0
    [ "$gst" = "$status" ] && [ "$gev" = "$events" ] || good=1
    [ -n "$reason" ] && [[ $why != *"$reason"* ]] && good=1
    _tap_result $good "reader: $name -> $status, $events events${reason:+, reason mentions '$reason'}"
    [ $good -ne 0 ] && diag "got: $line"
done <"$C/EXPECT"

# 1b. bounded resources: no file of a few hundred bytes may make the reader take more than 64 MB
# (a string id near the table limit, or the writer's PARTIAL reason id, must not size a 100 MB table).
if command -v /usr/bin/time >/dev/null; then
    big=""
    for name in "${names[@]}"; do
        kb=$(/usr/bin/time -f '%M' "$RC" "$C/files/$name.rtrace" 2>&1 >/dev/null | tail -1)
        [ "${kb:-0}" -gt 65536 ] && big+="$name=${kb}KB "
    done
    _tap_result $([ -z "$big" ] && echo 0 || echo 1) "reader: peak memory under 64 MB on every corpus file"
    [ -n "$big" ] && diag "over the limit: $big"
else
    skip "/usr/bin/time not installed (Debian package: time)"
fi

# 2. fuzz targets' replay over every input we have
for f in "$RS_BUILD"/fuzz/*-replay; do
    t=$(basename "$f" -replay)
    dirs=("$C/files")
    [ -d "$RS_TOP/tests/fuzz/seeds/$t" ] && dirs+=("$RS_TOP/tests/fuzz/seeds/$t")
    [ -d "$C/regress/$t" ] && dirs+=("$C/regress/$t")
    ok "fuzz target $t: replay of ${dirs[*]#$RS_TOP/}" run_timeout 60 "$f" "${dirs[@]}"
done

# 3. the CLI
# Outputs are read and matched by bash builtins: a grep per command was ~20 s of the file's ~60 s (567 commands).
slurp() { REPLY=""; IFS= read -r -d '' REPLY <"$1"; } # FILE: all of it in REPLY (no process started)
nl=$'\n'
bad_any=0
for name in "${names[@]}"; do
    status=${expect_status[$name]}
    bad=""
    for cmd in "${cli_cmds[@]}"; do
        # shellcheck disable=SC2086
        set -- ${cmd//OUT/$T/out}
        run_timeout 20 "$RS_CLI" "$@" "$C/files/$name.rtrace" >"$T/stdout" 2>"$T/stderr"
        rc=$?
        sub=$1
        want=""
        case $status in
        complete) want=0 ;;
        refused) want=2 ;;
        *) want=1 ;;
        esac
        problem=""
        slurp "$T/stderr"
        err=$REPLY
        if [ $rc -ge 3 ]; then
            problem="exit $rc (crash or timeout)"
        elif [[ $err =~ AddressSanitizer|runtime\ error:|ThreadSanitizer|LeakSanitizer ]]; then
            problem="sanitizer: $(grep -m1 -E 'Sanitizer|runtime error' "$T/stderr")"
        elif [ "$sub" = report ]; then
            # report may refuse a complete file with nothing to analyse (2), but must flag damage
            if [ "$status" != complete ] && [ $rc -eq 0 ]; then problem="exit 0 on a $status file"; fi
        elif [ "$sub" = export ] && [ "$status" = partial ] && [ $rc -le 1 ]; then
            : # export documents 1 for "truncated or damaged" input; a writer-marked partial file is neither
        elif [ $rc -ne "$want" ]; then
            problem="exit $rc, want $want"
        fi
        if [ -z "$problem" ] && [ $rc -eq 2 ] && [[ $nl$err != *"${nl}railscope: "* ]]; then
            problem="exit 2 without a 'railscope: ' line on stderr"
        fi
        if [ -z "$problem" ] && [ $rc -eq 1 ]; then
            slurp "$T/stdout"
            [[ "${REPLY,,} ${err,,}" =~ truncat|corrupt|partial|damaged ]] ||
                problem="exit 1 but neither stdout nor stderr says truncated/corrupt/partial"
        fi
        [ -n "$problem" ] && bad+="$cmd: $problem; "
    done
    if [ -n "$bad" ]; then
        bad_any=1
        diag "$name ($status): $bad"
    fi
done
_tap_result $bad_any "CLI (dump/info/report/export x${#cli_cmds[@]}) on ${#names[@]} corpus files: no crash, exit status and error lines as documented"
exit 0
