#!/bin/bash
# Fork storm and thread storm on the software test NIC (softnic), traced, bounded by `timeout`:
# 64 threads post and poll concurrently (even threads on one shared CQ, odd ones on their own), threads
# exit early and staggered while the writer drains, and the process forks 32 DataLoader-like children,
# every 4th of which execs /bin/true. No deadlock (finishes within the timeout), the application's
# output and exit status are those of the untraced run, the parent's file holds every post, and every
# process's file (parents, children, exec'd images) is complete with a PROC_END.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hlib.sh"
need_build tests/hardening/hv_storm tests/corpus/rs-readcheck librailscope.so
use_softnic
plan 7
args=(-t 64 -n 60 -e -F 32 -X 4)
ref=$(run_timeout 60 "$HB/hv_storm" "${args[@]}" 2>&1)
refrc=$?
d=$T/storm
t0=$SECONDS
out=$(run_timeout 60 env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$d" RAILSCOPE_FLUSH_MS=50 "$HB/hv_storm" "${args[@]}" 2>&1)
rc=$?
is "$rc" "$refrc" "storm: exit status as untraced ($refrc; 124 would be a deadlock caught by timeout)"
is "$out" "$ref" "storm: output identical to the untraced run"
diag "traced storm took $((SECONDS - t0)) s"
files=("$d"/*.rtrace)
[ ${#files[@]} -ge 33 ]
# A forked child that exits before its writer thread first drains leaves no file at all (its file is
# created lazily and PROC_END is written only into an open file): .notes/hardening.md bug 17.
known_bug $? "storm: one file per process (${#files[@]} files for 1 parent + 32 children + exec'd images)" \
    "bug 17: a quickly exiting forked child may leave no file"
"$RC" -k ibv_post_send "${files[@]}" >"$T/rc.out"
bad=$(grep -v ' complete .*proc_end=[0-9]' "$T/rc.out")
# A file that an exec cut (the new image wrote NAME.1.rtrace) ends without PROC_END: bug 17b.
cut=$(printf '%s\n' "$bad" | while read -r f _; do [ -n "$f" ] && [ -e "${f%.rtrace}.1.rtrace" ] && echo "$f"; done)
other=$(printf '%s\n' "$bad" | while read -r f rest; do [ -n "$f" ] && ! printf '%s\n' "$cut" | grep -qxF "$f" && echo "$f $rest"; done)
[ -z "$other" ]
_tap_result $? "storm: every file complete with a PROC_END (except files cut by an exec)"
[ -n "$other" ] && diag "$other"
[ -z "$cut" ]
known_bug $? "storm: a file cut by an exec ends with a PROC_END too ($(printf '%s' "$cut" | grep -c .) without)" \
    "bug 17b: the pre-exec file gets no end record"
posts=$(kv "$out" posts)
maxk=$(sed -n 's/.* kind=\([0-9]*\) .*/\1/p' "$T/rc.out" | sort -n | tail -1)
is "$maxk" "$posts" "storm: the parent's file records all $posts posts"
drops=$(sed -n 's/.* drops=\([0-9]*\) .*/\1/p' "$T/rc.out" | awk '{s+=$1} END {print s+0}')
is "$drops" 0 "storm: nothing dropped"
exit 0
