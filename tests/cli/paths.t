#!/bin/bash
# Which files the CLI reads (issue 17 D10, D11, D12), for info, dump, report and export alike:
#  D10  a 0-byte or headerless .rtrace beside good traces: the good ones are used, the bad one is flagged,
#       exit 1 (partial); exit 2 only when nothing is readable. Before: `info DIR` exited 2 and `report DIR`
#       (rank-less traces beside an empty file) said "no readable trace".
#  D11  a FIFO named on the command line or found in a directory is skipped with one warning and never
#       opened in a way that blocks (the reader opens O_NONBLOCK and reads only regular files). Before:
#       info, dump and report hung on a named FIFO.
#  D12  1,000 planted symbolic links in a trace directory give one summary warning, not 1,001 lines
#       (links inside directories are not followed).
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile tests/corpus/rs-readcheck railscope
plan 22
MK=$RS_BUILD/tests/cli/mkhostile
cmds=(info dump "dump --json" report "report --json" "export --format chrome -o $T/o.json")

# --- D10 ---
mkdir "$T/d10"
"$MK" plain "$T/d10/a.rtrace" 2>/dev/null
"$MK" plain "$T/d10/b.rtrace" 2>/dev/null
: >"$T/d10/c-empty.rtrace"
head -c 20 "$T/d10/a.rtrace" >"$T/d10/d-headerless.rtrace"
for c in "${cmds[@]}"; do
    run_timeout 20 "$RS_CLI" $c "$T/d10" >"$T/out" 2>"$T/err"
    rc=$?
    cat "$T/out" >>"$T/err" # report flags them in its warnings (stdout)
    good=0
    [ $rc -eq 1 ] || good=1
    grep -q 'c-empty.rtrace' "$T/err" && grep -q 'd-headerless.rtrace' "$T/err" || good=1
    _tap_result $good "D10: ${c%% -o*} DIR with an empty and a headerless file beside good ones: exit 1, both flagged (exit $rc)"
    [ $good -ne 0 ] && diag "$(head -c 600 "$T/err")"
done
out=$("$RS_CLI" info "$T/d10" 2>/dev/null)
is "$(grep -c '^status: *complete' <<<"$out")" 2 "D10: info lists both good files as complete"
like "$out" 'status: +unreadable: .*empty file' "D10: info's listing flags the empty file"
out=$("$RS_CLI" report "$T/d10" 2>&1)
unlike "$out" 'no readable trace' "D10: report uses the good traces"
"$RS_CLI" info "$T/d10/c-empty.rtrace" "$T/d10/d-headerless.rtrace" >/dev/null 2>&1
is $? 2 "D10: info with nothing readable: exit 2"

# --- D11 ---
mkfifo "$T/pipe.rtrace"
for c in info dump report "export -q --format chrome -o $T/o2.json"; do
    run_timeout 10 "$RS_CLI" $c "$T/pipe.rtrace" "$T/d10/a.rtrace" >/dev/null 2>"$T/err"
    rc=$?
    good=0
    [ $rc -le 1 ] || good=1
    [ "$(grep -c 'pipe.rtrace' "$T/err")" -eq 1 ] || good=1
    _tap_result $good "D11: ${c%% -o*} FIFO GOOD: no hang, one warning, the good file read (exit $rc)"
    [ $good -ne 0 ] && diag "$(head -c 600 "$T/err")"
done
run_timeout 10 "$RS_CLI" info "$T/pipe.rtrace" >/dev/null 2>"$T/err"
rc=$?
is "$rc:$(grep -c . "$T/err")" "2:2" "D11: info on a FIFO alone: exit 2, the skip and the error (no hang)"
mkdir "$T/d11" && mkfifo "$T/d11/p.rtrace" && cp "$T/d10/a.rtrace" "$T/d11/"
run_timeout 10 "$RS_CLI" dump "$T/d11" >/dev/null 2>"$T/err"
rc=$?
is "$rc:$(grep -c 'p.rtrace is a FIFO' "$T/err")" "0:1" "D11: a FIFO named *.rtrace in a directory: skipped with one warning"
run_timeout 10 "$RS_BUILD/tests/corpus/rs-readcheck" "$T/pipe.rtrace" >"$T/out" 2>&1
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 137 ]
_tap_result $? "D11: the reader refuses a FIFO without blocking (rs-readcheck exit $rc)"

# --- D12 ---
mkdir "$T/d12"
cp "$T/d10/a.rtrace" "$T/d12/"
for i in $(seq 1000); do ln -s /etc/passwd "$T/d12/planted$i.rtrace"; done
ln -s "$T/d10" "$T/d12/linkdir"
for c in info dump report "export -q --format perfetto -o $T/o.pf"; do
    run_timeout 20 "$RS_CLI" $c "$T/d12" >/dev/null 2>"$T/err"
    rc=$?
    n=$(grep -c . "$T/err")
    good=0
    [ $rc -eq 0 ] && [ "$n" -eq 1 ] && grep -q 'skipped 1001 symbolic links' "$T/err" || good=1
    _tap_result $good "D12: ${c%% -o*} DIR with 1,000 planted links: one summary warning (exit $rc, $n lines)"
    [ $good -ne 0 ] && diag "$(head -c 600 "$T/err")"
done
run_timeout 10 "$RS_CLI" info "$T/d12/planted1.rtrace" >/dev/null 2>&1
is $? 2 "D12: a link named on the command line is followed (here to a non-trace: exit 2)"
exit 0
