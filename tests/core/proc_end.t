#!/bin/bash
# Every process the tracer saw ends its file with a PROC_END, however it ends (docs/dev/journal/hardening.md bugs
# 17, 17b): a forked child that records nothing and leaves at once (exit or _exit) still gets its own file
# (its file is opened lazily, at the first event or at the end); a file an exec replaces ends with a
# PROC_END of reason 2 (exec); when the exec fails, the process goes on recording into the same file and
# ends it with a final PROC_END (readers take the last one).
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check librailscope.so railscope
need_cmd perl
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 15

# 8 children that record nothing and exit() at once: one file each, complete, PROC_END reason 0.
out=$(RAILSCOPE_OUT=$T/f run_timeout 30 "$E" -F 8 -t 1 -n 0)
like "$out" "children_failed=0" "8 children that record nothing ran"
is "$(ls "$T"/f/*.rtrace 2>/dev/null | wc -l)" 9 "9 trace files: the parent and one per silent child"
n=0
for f in "$T"/f/*.rtrace; do
    "$C" "$f" | grep -q "status=complete .*forks=0 " || continue
    "$C" "$f" | grep -q "proc_end=1 end_status=0 end_reason=0 " && n=$((n + 1))
done
is "$n" 8 "each silent child's file is complete with PROC_END(status 0, reason exit)"

# 4 children record 10 events each, then exec /bin/true (untraced: the emitter links the core itself).
out=$(RAILSCOPE_OUT=$T/x run_timeout 30 "$E" -F 4 -X 1 -t 1 -n 10)
like "$out" "children_failed=0" "4 children that exec /bin/true ran"
n=0
for f in "$T"/x/*.rtrace; do
    "$C" "$f" | grep -q "status=complete marks=10 .*proc_end=1 end_status=0 end_reason=2 " && n=$((n + 1))
done
is "$n" 4 "each child's file holds its 10 events and ends with PROC_END(reason exec)"

# Preloaded: a child that only calls _exit(7); the parent tries an exec that fails, then forks again.
pl='use POSIX; exec("/nonexistent/rs-no-such-program"); my $p = fork(); if (!$p) { POSIX::_exit(7) } waitpid($p, 0); exit($? >> 8)'
run_timeout 30 env RAILSCOPE_OUT="$T/p" LD_PRELOAD="$RS_PRELOAD_SHELL" perl -e "$pl" 2>/dev/null
is "$?" 7 "perl: the failed exec is reported to it, the _exit(7) child's status reaches it"
files=("$T"/p/*.rtrace)
is "${#files[@]}" 2 "perl: two files (perl, its child that recorded nothing)"
"$RS_CLI" dump "${files[@]}" >"$T/p.dump" 2>"$T/p.err"
is "$?" 0 "perl: railscope dump reads both files as complete"
parent= child=
for f in "${files[@]}"; do
    e=$("$RS_CLI" dump "$f" | grep -oE 'proc_end status=[0-9]+ reason=[0-9]+|fork child_pid' | tr '\n' ' ')
    case $e in *fork*) parent=$e ;; *) child=$e ;; esac
done
is "$child" "proc_end status=7 reason=3 " "perl: the child's file ends with PROC_END(status 7, reason _exit)"
is "$parent" "proc_end status=0 reason=2 fork child_pid proc_end status=7 reason=0 " \
    "perl: the parent's file: exec end record, then events after the failed exec, then PROC_END(exit 7)"
"$RS_CLI" info "${files[@]}" >"$T/p.info" 2>&1
is "$?" 0 "perl: railscope info calls both files complete"

# The exit status reaches PROC_END however the program leaves (issue 17 D1: it said 0 for every exit(N)
# and return from main: the library's destructor, which glibc runs before the on_exit handler of a
# preloaded library, wrote PROC_END(0) first).
end_of() { "$RS_CLI" dump "$1" | grep -oE 'proc_end status=[0-9]+ reason=[0-9]+' | tail -1; }
n=0
for c in "1:/bin/false" "4:perl -e 'exit 4'" "6:perl -e 'use POSIX; POSIX::exit(6)'" "0:/bin/true"; do
    want=${c%%:*} cmd=${c#*:} d=$T/s$n
    (eval "RAILSCOPE_OUT=$d LD_PRELOAD=$RS_PRELOAD_SHELL run_timeout 30 $cmd") 2>/dev/null
    got=$?
    is "$got $(end_of "$d"/*.rtrace)" "$want proc_end status=$want reason=0" "PROC_END says the exit status of: $cmd"
    n=$((n + 1))
done
