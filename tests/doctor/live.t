#!/bin/bash
# doctor on this real machine (live /sys and /proc). Where there is no RDMA device it must say
# "no RDMA devices found" plainly and exit 1 (warning) unless something else fails (2).
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
echo 1..5
doctor >"$WORK/live.txt" 2>"$WORK/live.err"; st=$?
sed 's/^/# /' "$WORK/live.txt" | head -30
check $((st > 2)) "live run exits 0, 1 or 2 (got $st), no crash"
check $([ -s "$WORK/live.err" ]; echo $((1 - $?))) "live run writes nothing to stderr"
# what it wrote, here and in the failure digest (a sanitizer's warning would show here)
[ -s "$WORK/live.err" ] && { sed 's/^/# stderr: /' "$WORK/live.err" | head -10; cp "$WORK/live.err" "$WORK/faildiff"; }
summary_st=$(sed -n 's/^summary: .*exit status \([0-9]\).*/\1/p' "$WORK/live.txt")
check $((summary_st != st)) "summary line states the exit status ($summary_st)"
ndev=$(ls /sys/class/infiniband 2>/dev/null | wc -l)
if [ "$ndev" = 0 ]; then
    grep -q '^WARN  rdma.devices .*no RDMA devices found' "$WORK/live.txt"; check $? "no RDMA device here: says 'no RDMA devices found' as a WARN"
    grep -q '^FAIL' "$WORK/live.txt" && want=2 || want=1
    check $((st != want)) "no RDMA device here: exit status $st (expected $want: warnings, or 2 if something else fails)"
else
    ok "# skip this host has $ndev RDMA devices"
    ok "# skip this host has $ndev RDMA devices"
fi
exit $((FAILED > 0))
