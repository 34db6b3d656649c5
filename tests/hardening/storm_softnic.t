#!/bin/bash
# Fork storm and thread storm on the software test NIC (softnic), traced, bounded by `timeout`:
# 64 threads post and poll concurrently (even threads on one shared CQ, odd ones on their own), threads
# exit early and staggered while the writer drains, and the process forks 32 DataLoader-like children,
# every 4th of which execs /bin/true. No deadlock (finishes within the timeout), the application's
# output and exit status are those of the untraced run, the parent's file holds every post, and every
# process's file (parents, children, exec'd images) is complete with a PROC_END (a file an exec replaced:
# reason 2), and no child's file holds the parent's empty-poll counts.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hlib.sh"
need_build tests/hardening/hv_storm tests/corpus/rs-readcheck librailscope.so
use_softnic
plan 8
args=(-t 64 -n 60 -e -F 32 -X 4)
ref=$(run_timeout 60 "$HB/hv_storm" "${args[@]}" 2>&1)
refrc=$?
d=$T/storm
t0=$SECONDS
out=$(run_timeout 60 env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$d" RAILSCOPE_FLUSH_MS=50 "$HB/hv_storm" "${args[@]}" 2>&1)
rc=$?
# Under ASan a timeout can be gcc 12 libasan's own fork deadlock (no allocator lock around fork(): a child
# forked while another thread is in ASan's malloc hangs; tests/lib.sh). Seen once in a clean-clone CI run
# (suites under ASan at prove -j2), not reproduced in 22 runs; the normal build's run of this file has no
# retry, so a deadlock of ours still fails there.
if [ "$RS_SAN" = asan ] && [ "$rc" = 124 ]; then
    diag "traced storm timed out under ASan (gcc 12 libasan fork deadlock?): one retry"
    rm -rf "$d"
    out=$(run_timeout 60 env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$d" RAILSCOPE_FLUSH_MS=50 "$HB/hv_storm" "${args[@]}" 2>&1)
    rc=$?
fi
is "$rc" "$refrc" "storm: exit status as untraced ($refrc; 124 would be a deadlock caught by timeout)"
is "$out" "$ref" "storm: output identical to the untraced run"
diag "traced storm took $((SECONDS - t0)) s"
files=("$d"/*.rtrace)
# A forked child that exits before its writer thread first drains used to leave no file (bug 17).
# The 8 children that exec record nothing before it, so their pid's file is the /bin/true image's.
is "${#files[@]}" 33 "storm: one file per process (1 parent + 32 children, 8 of them exec'd /bin/true)"
"$RC" -k ibv_post_send "${files[@]}" >"$T/rc.out"
bad=$(grep -v ' complete .*proc_end=[0-9]' "$T/rc.out")
is "$bad" "" "storm: every file complete with a PROC_END"
# How each process ended: the parent and the 8 /bin/true images exit (0), the other 24 children _exit (3).
# A file an exec replaced (NAME.1.rtrace beside it) used to end without PROC_END (bug 17b); it ends with
# reason 2 now (tests/core/proc_end.t checks that deterministically; here no child records before its exec).
reasons=$(awk '{print $7}' "$T/rc.out" | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')
cut=$(for f in "${files[@]}"; do [ -e "${f%.rtrace}.1.rtrace" ] && grep -F "$f " "$T/rc.out"; done | grep -vc ' proc_end=2 ')
is "$reasons/$cut" "proc_end=0:9 proc_end=3:24 /0" "storm: PROC_END reasons: 9 exit, 24 _exit; every file an exec replaced ends with reason exec"
# A child used to flush the parent's pending per-CQ empty-poll counts into its own file (bug 17c).
kids=$(awk '$4 == "kind=0" {print $1}' "$T/rc.out")
empty=$(for f in $kids; do "$RS_CLI" dump "$f" | grep -c 'ibv_poll_empty'; done | awk '{s+=$1} END {print s+0}')
is "$empty" 0 "storm: none of the $(grep -c . <<<"$kids") child files holds IBV_POLL_EMPTY (children never poll: those were the parent's)"
posts=$(kv "$out" posts)
maxk=$(sed -n 's/.* kind=\([0-9]*\) .*/\1/p' "$T/rc.out" | sort -n | tail -1)
is "$maxk" "$posts" "storm: the parent's file records all $posts posts"
drops=$(sed -n 's/.* drops=\([0-9]*\) .*/\1/p' "$T/rc.out" | awk '{s+=$1} END {print s+0}')
is "$drops" 0 "storm: nothing dropped"
exit 0
