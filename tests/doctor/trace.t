#!/bin/bash
# The tracer's host snapshot: record a process with librailscope (railscope record), then
# `doctor --trace` on the trace must give the same verdicts as doctor run live with the same environment
# (the collector in librailscope.so and in the CLI are the same code), and its env/ facts must be the
# traced process's.
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
if [ ! -x "$RS_BUILD/railscope" ] || [ ! -f "$RS_BUILD/librailscope.so" ]; then
    echo "1..0 # SKIP railscope/librailscope.so not built in $RS_BUILD"; exit 0
fi
echo 1..10
export NCCL_SOCKET_IFNAME=lo NCCL_IB_HCA=mlx5_0
timeout 30 "$RS_BUILD/railscope" record -o "$WORK/run" -- /bin/sleep 0.1 >"$WORK/rec.out" 2>&1; st=$?
check $st "railscope record of /bin/sleep succeeds (exit $st)"
doctor --trace "$WORK/run" >"$WORK/trace.txt" 2>"$WORK/trace.err"; st=$?
check $((st > 2)) "doctor --trace exits 0..2 (got $st)"
[ -s "$WORK/trace.err" ] && sed 's/^/# /' "$WORK/trace.err"
doctor --no-verbs >"$WORK/live.txt"; lst=$?  # the snapshot has no verbs facts
same_as "$WORK/live.txt" "$WORK/trace.txt" "verdicts from the trace's HOST_FACT snapshot equal the live ones"
check $((st != lst)) "same exit status ($st vs live $lst)"
doctor --trace "$WORK/run" --dump-facts | grep -q '^env/NCCL_SOCKET_IFNAME=lo$'; check $? "the snapshot holds the traced process's env/NCCL_SOCKET_IFNAME"
# a directory whose first file (by name) has no snapshot: a short command the job ran, which ended before its
# writer thread read the facts (here: recorded without the host family), or a pid past 99999 sorting first
RAILSCOPE_EVENTS=all,-host timeout 30 "$RS_BUILD/railscope" record -q -o "$WORK/nofacts" -- /bin/true >/dev/null 2>&1
f=$(ls "$WORK"/nofacts/*.rtrace 2>/dev/null | head -1)
mkdir -p "$WORK/mixed" && [ -n "$f" ] && cp "$f" "$WORK/mixed/a-1.rtrace" && cp "$WORK"/run/*.rtrace "$WORK/mixed/"
check $? "a directory with a facts-less first file is made"
doctor --trace "$WORK/mixed" --dump-facts 2>"$WORK/e" | grep -q '^env/NCCL_SOCKET_IFNAME=lo$'
check $? "doctor --trace of that directory takes the facts of the first file that has them ($(head -1 "$WORK/e"))"
# ... and when that first file holds a fact but no snapshot (a forked child's: only nccl/version, which the NCCL
# wrappers add), or cannot be read at all: the snapshot of the next file is still the one checked
RT="$RS_BUILD/tests/analyzer/rs-retrace"
mkdir -p "$WORK/mixed2" && cp "$WORK"/run/*.rtrace "$WORK/mixed2/" && : >"$WORK/mixed2/a-0.rtrace" &&
    [ -n "$f" ] && "$RT" "$f" "$WORK/mixed2/a-1.rtrace" --fact nccl/version=2.28.9 >/dev/null 2>&1
check $? "a directory whose first files are empty, then a fact without the snapshot, is made"
doctor --trace "$WORK/mixed2" --dump-facts 2>"$WORK/e" | grep -q '^env/NCCL_SOCKET_IFNAME=lo$'
check $? "doctor --trace of it takes the snapshot of the file that has one ($(head -1 "$WORK/e"))"
: >"$WORK/empty.rtrace"
doctor --trace "$WORK/empty.rtrace" >/dev/null 2>"$WORK/e"; st=$?
[ $st = 2 ] && grep -q '^railscope: ' "$WORK/e"; check $? "--trace of a non-trace file: one-line error, exit 2"
exit $((FAILED > 0))
