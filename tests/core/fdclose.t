#!/bin/bash
# A program that closes or takes over the trace file's descriptor (issue 17 D2): close_range(3, ~0),
# closefrom(3), close() of our number, dup2()/dup3() onto it, a shell redirection onto it. Before, the trace
# was lost and the file still read "complete, 0 dropped". Now the wrappers spare our descriptor (the program
# sees what it would see untraced: EBADF for a number that would not be open, its own file on a number it
# dup2()s onto), a raw close_range the wrappers cannot see makes the writer open the file again by name
# (same device and inode only), and when even that is impossible the loss is reported with a count.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check librailscope.so
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 18
cd "$T" || bail "no tmp"

attack() { # HOW: the emitter's line and check's line
    rm -rf "$T/o" "$T/victim"
    out=$(RAILSCOPE_OUT=$T/o run_timeout 30 "$E" -t 2 -n 1000 -C "$1" 2>"$T/err")
    res=$("$C" "$T"/o/* 2>&1)
}
all='status=complete marks=2010 gaps=0 order_errors=0 .*drops=0 .*proc_end=1 end_status=0 '

attack close
like "$out" "fd=>=100 how=close close=-1 Bad file descriptor" "close(our fd): EBADF, as for a number that is not open"
like "$res" "$all" "close: every event and PROC_END are in the file"
attack close_range
like "$out" "how=close_range close_range=0" "close_range(3, ~0, 0) returns 0"
like "$res" "$all" "close_range: every event and PROC_END are in the file"
attack closefrom
like "$out" "how=closefrom closefrom errno=0" "closefrom(3)"
like "$res" "$all" "closefrom: every event and PROC_END are in the file"
attack dup2
like "$out" "how=dup2 dup2=fd devnull=1" "dup2(/dev/null, our number): the program gets the number, and it is /dev/null"
like "$res" "$all" "dup2: every event and PROC_END are in the file"
attack dup3
like "$out" "how=dup3 dup3=fd devnull=1" "dup3 the same"
like "$res" "$all" "dup3: every event and PROC_END are in the file"
attack rawdup
like "$res" "$all" "raw close_range + the program's own file on our number: the file is opened again, nothing lost"
is "$(stat -c %s "$T/victim")" 0 "the program's file got no trace bytes"
like "$(cat "$T/err")" "closed the trace file's descriptor; .* was opened again, nothing was lost" "one warning says so"
attack rawgone
like "$(cat "$T/err")" "railscope: [0-9]+ events could not be written to " \
    "raw close_range + file renamed away: the loss is reported with a count"
like "$res" "marks=2000 .*proc_end=0 " "the moved file keeps what was written before, and has no PROC_END"

# Preloaded programs: a shell redirection onto the number (bash saves it with fcntl F_DUPFD first and puts
# it back), python's os.closerange.
s='exec 100>&-; echo x; exec 100>/dev/null; echo y >&100; exec 100>&-; echo z'
want=$(bash -c "$s" 2>&1)
got=$(run_timeout 30 env RAILSCOPE_OUT="$T/b" LD_PRELOAD="$RS_PRELOAD_SHELL" bash -c "$s" 2>&1)
is "$got" "$want" "bash redirections onto 100: the same output as untraced"
like "$("$C" "$T"/b/*.rtrace)" "status=complete .*proc_end=1 end_status=0 " "bash: the file is whole, with PROC_END"
if command -v python3 >/dev/null; then
    run_timeout 30 env RAILSCOPE_OUT="$T/p" LD_PRELOAD="$RS_PRELOAD_SHELL" python3 -c 'import os; os.closerange(3, 1 << 20)'
    n=0
    for f in "$T"/p/*.rtrace; do "$C" "$f" | grep -q "status=complete .*proc_end=1 " && n=$((n + 1)); done
    ok "python3 os.closerange(3, 2**20): every file is whole, with PROC_END" test "$n" -ge 1 -a "$n" = "$(ls "$T"/p | wc -l)"
else
    skip "no python3"
fi
