#!/bin/bash
# doctor's inputs that read as nothing (audit s17, item 7). Before, each passed for an empty host: a
# directory or an empty file given to --facts gave "WARN rdma.devices ... (/sys/class/infiniband is
# empty)", a path doctor never read; a directory or a file of garbage given to --env was taken as no
# NCCL_* variables; a trace cut inside its first frame "has no host facts (recorded without the host
# family?)", and a trace cut later gave its verdicts without a word about the cut.
# Now: an input error (one "railscope:" line, exit 2, nothing on stdout), the reader's reason for a trace
# with no facts left, and one warning line when the facts come from a damaged or incomplete trace.
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
EMIT=$RS_BUILD/tests/core/emitter
echo 1..15
err1() { # err1 DESC PATTERN ARGS...: exit 2, one stderr line "railscope: ..." matching PATTERN, no stdout
    local d=$1 pat=$2 st
    shift 2
    doctor "$@" >"$WORK/o" 2>"$WORK/e" </dev/null
    st=$?
    if [ $st = 2 ] && [ "$(wc -l <"$WORK/e")" = 1 ] && grep -Eq "^railscope: doctor: $pat" "$WORK/e" && [ ! -s "$WORK/o" ]
    then ok "$d"; else not_ok "$d (exit $st)"; sed 's/^/# /' "$WORK/e" "$WORK/o" | head -5; fi
}
mkdir "$WORK/emptydir"
: >"$WORK/empty"
printf 'hello\nworld\n' >"$WORK/garbage"
printf '# no facts\n\n' >"$WORK/comments"

err1 "--facts DIR: a directory is not a facts file" "--facts .*/emptydir: is a directory" --facts "$WORK/emptydir"
err1 "--facts /dev/null: no facts" "--facts /dev/null: no key=value facts" --facts /dev/null
err1 "--facts EMPTYFILE: no facts" "--facts .*/empty: no key=value facts" --facts "$WORK/empty"
err1 "--facts with comments only: no facts" "--facts .*/comments: no key=value facts" --facts "$WORK/comments"
err1 "--facts - with nothing on stdin: no facts" "--facts -: no key=value facts" --facts -
err1 "--env DIR: a directory is not an environment file" "--env .*/emptydir: is a directory" --env "$WORK/emptydir"
err1 "--env of a file without one NAME=value line" "--env .*/garbage: no NAME=value line \(line 1" --env "$WORK/garbage"
doctor --facts /dev/stdin --env "$WORK/comments" -q >/dev/null 2>"$WORK/e" <<<'ib/count=0'
st=$?
check $((st == 2 || $(wc -c <"$WORK/e") != 0)) "--env with comments only is an empty environment, not an error (exit $st)"

if [ ! -x "$EMIT" ] || [ ! -x "$RS_BUILD/railscope" ]; then
    for _ in 1 2 3 4 5 6 7; do ok "# skip $EMIT or railscope not built"; done
    exit $((FAILED > 0))
fi
# A trace with its host snapshot (the emitter links the recording core: HOST_FACT events in frame 0), 12 frames.
RAILSCOPE_FLUSH_MS=20 RAILSCOPE_OUT=$WORK/tr timeout 60 "$EMIT" -t 1 -n 40000 -r 100000 >/dev/null 2>&1
f=$(ls "$WORK"/tr/*.rtrace)
info() { timeout 20 "$RS_BUILD/railscope" info "$1" 2>/dev/null | grep '^status:'; }
# cut inside frame 0 (the header's size depends on the paths in it: look for the first such cut)
for n in $(seq 100 50 4000); do
    head -c "$n" "$f" >"$WORK/cut0.rtrace"
    [[ $(info "$WORK/cut0.rtrace") == *"file ends inside frame 0 ("[1-9]* ]] && break
done
err1 "--trace of a file cut inside frame 0: the reader's reason, not 'recorded without the host family'" \
    ".*cut0.rtrace \(host [^)]*\): truncated: file ends inside frame 0 .*; no host facts could be read$" \
    --trace "$WORK/cut0.rtrace"
head -c $(($(stat -c %s "$f") - 100)) "$f" >"$WORK/cutl.rtrace"
[[ $(info "$WORK/cutl.rtrace") == *"file ends inside frame "[1-9]* ]]
check $? "a trace cut inside a later frame (setup)"
doctor --trace "$WORK/cutl.rtrace" >"$WORK/o" 2>"$WORK/e"
st=$?
check $((st > 2)) "--trace of a file cut later: the verdicts, exit 0..2 ($st)"
grep -q '^summary: ' "$WORK/o"
check $? "... with the summary"
[ "$(wc -l <"$WORK/e")" = 1 ] &&
    grep -Eq '^railscope: doctor: warning: .*cutl.rtrace \(host [^)]*\): truncated: file ends inside frame [1-9][0-9]* .*; checking the [1-9][0-9]* host facts read$' "$WORK/e"
check $? "... and one warning line: truncated, the checks use the facts read"
doctor --trace "$f" >/dev/null 2>"$WORK/e"
check $(($(wc -c <"$WORK/e") != 0)) "--trace of the whole file: no warning"
# A killed process's trace (no PROC_END): incomplete, said once.
RAILSCOPE_FLUSH_MS=50 RAILSCOPE_OUT=$WORK/k "$EMIT" -t 1 -n 100 -p >"$WORK/k.out" 2>&1 &
pid=$!
for _ in $(seq 1800); do grep -q ready "$WORK/k.out" 2>/dev/null && break; sleep 0.05; done
sleep 0.3
exec 3>&2 2>/dev/null
kill -KILL $pid
wait $pid
exec 2>&3 3>&-
doctor --trace "$WORK/k" >/dev/null 2>"$WORK/e"
[ "$(wc -l <"$WORK/e")" = 1 ] && grep -Eq '^railscope: doctor: warning: .*\(host [^)]*\): incomplete: .*no PROC_END' "$WORK/e"
check $? "--trace of a killed process's file: one warning line, incomplete (no PROC_END)"
exit $((FAILED > 0))
