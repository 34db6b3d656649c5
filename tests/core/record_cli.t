#!/bin/bash
# railscope record as a wrapper (audit s17): no core dump of its own when it re-raises the command's signal,
# SIGINT/SIGQUIT sent by a process are forwarded (a terminal's are not: the command got them already),
# --flush-ms/--buffer-kb/--events checked before anything starts (the ranges and names the library takes), and
# a directory as the command is called one. stdin/stdout/stderr still pass through.
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so tests/core/check
C=$RS_BUILD/tests/core/check
plan 43

# --- 1. The command's core file is the one left, never one of railscope's (re-raise after a crash).
mkdir "$T/core" && cd "$T/core" || bail "no tmp"
# Under a sanitizer the runtime preloaded into the command catches its SIGSEGV (a report, exit 1): SIGABRT
# there, which also dumps core and which the runtime leaves alone (handle_abort=0).
sig=SEGV
if [ -n "$RS_SAN" ]; then sig=ABRT; fi
# perl (prove's own language) reports how record died: the signal and the kernel's "core dumped" bit.
died=$(
    ulimit -c unlimited 2>/dev/null || ulimit -c "$(ulimit -H -c)"
    perl -e 'system(@ARGV); printf "%d:%d", $? & 127, ($? & 128) ? 1 : 0' \
        "${RS_RECORD[@]}" record -q -o t -- sh -c "kill -$sig \$\$"
)
is "$died" "$(kill -l $sig):0" "command dies of SIG$sig: record dies of SIG$sig too, without dumping core itself"
pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null)
case $pattern in
"" | "|"* | /*)
    skip "core_pattern '$pattern' is not a file in the working directory: which core is left cannot be seen here" 2
    ;;
*)
    cores=$(find . -maxdepth 1 -type f -exec file {} + 2>/dev/null | grep -i 'core file')
    unlike "$cores" "railscope" "core_pattern '$pattern': no core file from railscope"
    if [ -n "$cores" ]; then
        like "$cores" "from 'sh -c kill -$sig" "the core file left is the command's (sh)"
    else
        skip "no core file at all (ulimit -c hard limit $(ulimit -H -c)${RS_SAN:+; the $RS_SAN runtime sets \
RLIMIT_CORE to 0: disable_coredump}): the command's cannot be checked" 1
    fi
    ;;
esac
cd "$T" || bail "no tmp"
ulimit -c 0 # SIGQUIT below: no core files from the commands either

# --- 2. Signals sent to record's pid by another process: the command gets them, record reports its death.
wait_trace() { # dir: the traced command has started (its file exists), so the signal is not sent too early
    for _ in $(seq 400); do ls "$1"/*.rtrace >/dev/null 2>&1 && return 0; sleep 0.05; done
    return 1
}
set -m # background jobs of a non-interactive shell would start with SIGINT and SIGQUIT ignored
# and a harness started that way passes them on ignored, which record now keeps for its command (d9f7711): the
# dispositions of an interactive shell's job, where env can set them
dfl=()
env --default-signal=INT,QUIT true 2>/dev/null && dfl=(env --default-signal=INT,QUIT)
for sig in TERM HUP INT QUIT; do
    num=$(kill -l $sig)
    "${dfl[@]}" "${RS_RECORD[@]}" record -q -o "$T/sig$sig" -- sleep 20 &
    pid=$!
    wait_trace "$T/sig$sig" || diag "no trace file from sleep after 20 s"
    t0=$(date +%s%N)
    kill -$sig $pid
    wait $pid
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    is "$rc" $((128 + num)) "kill -$sig <record's pid>: the command dies of it, and record the same way"
    ok "kill -$sig: record ends ${ms} ms after the signal, not when the command would have (20 s)" test $ms -lt 5000
    like "$("$C" "$T/sig$sig"/*.rtrace)" "status=complete .*proc_end=1 end_status=$((128 + num)) end_reason=1 " \
        "kill -$sig: the command's trace is complete (PROC_END, killed by the signal)"
done
set +m

# A terminal's Ctrl-C (si_code SI_KERNEL) went to the whole foreground group: record does not send it again.
# Seen with a command in a session of its own, which the terminal's signal does not reach.
if command -v python3 >/dev/null 2>&1; then
    out=$(run_timeout 30 python3 "$RS_TOP/tests/pty_drive.py" intr "${RS_RECORD[@]}" record -q -o "$T/pty1" -- \
        setsid -w sh -c 'echo ready; sleep 1; echo done')
    is "$out" "exit 0 done" "terminal Ctrl-C: not forwarded (a command in its own session runs to its end)"
    out=$(run_timeout 30 python3 "$RS_TOP/tests/pty_drive.py" intr "${RS_RECORD[@]}" record -q -o "$T/pty2" -- sh -c 'echo ready; exec sleep 20')
    is "$out" "signal 2 -" "terminal Ctrl-C: the command (in the foreground group) dies of it, and record the same way"
else
    skip "python3 not installed (the terminal test needs its pty module)" 2
fi

# --- 3. Bad option values: exit 2, one line naming the option, nothing started (no command, no directory).
bad() { # flag value pattern
    rm -f "$T/ran"
    err=$("${RS_RECORD[@]}" record -o "$T/bad" "$1" "$2" -- touch "$T/ran" 2>&1)
    rc=$?
    started=$([ -e "$T/ran" ] || [ -e "$T/bad" ] && echo started || echo "not started")
    is "$rc:$(printf '%s\n' "$err" | wc -l):$started" "2:1:not started" "$1 '$2': exit 2, one line, nothing started"
    like "$err" "$3" "$1 '$2': the line names the option and the value"
}
bad --flush-ms abc "^railscope: record: --flush-ms must be a number in 10\.\.60000, not 'abc'$"
bad --flush-ms 9 "^railscope: record: --flush-ms must be a number in 10\.\.60000, not '9'$"
bad --flush-ms 60001 "^railscope: record: --flush-ms .*, not '60001'$"
bad --buffer-kb -1 "^railscope: record: --buffer-kb must be a number in 64\.\.1048576, not '-1'$"
bad --buffer-kb 1048577 "^railscope: record: --buffer-kb .*, not '1048577'$"
bad --events bogus "^railscope: record: --events: unknown family 'bogus' in 'bogus' \(known: all,core,"
bad -e all,-nope "^railscope: record: --events: unknown family 'nope' in 'all,-nope'"

# Good values at the ends of the ranges: the command runs, and the library (which checks again) says nothing.
good() { # flag value
    rm -f "$T/ran"
    rm -rf "$T/good"
    err=$("${RS_RECORD[@]}" record -o "$T/good" "$1" "$2" -- touch "$T/ran" 2>&1)
    rc=$?
    is "$rc:$([ -e "$T/ran" ] && echo ran):$(printf '%s\n' "$err" | grep -vc '^railscope: trace in ')" "0:ran:0" \
        "$1 '$2': accepted, the command runs, no warning from the library"
}
good --flush-ms 10
good --flush-ms 60000
good --buffer-kb 64
good --buffer-kb 1048576
good --events 'all,-nvml'
good -e ' verbs, cuda'

# The ranges and names record takes are the library's (tracer/config.c): its warnings name the same.
libwarn() { RAILSCOPE_OUT=$T/lw env "$1=$2" LD_PRELOAD="$RS_PRELOAD" /bin/true 2>&1; }
recerr() { "${RS_RECORD[@]}" record -o "$T/lw2" "$1" "$2" -- true 2>&1; }
# (A value missing from either message fails: "?" never matches a range or a list.)
range='s/.* in \([-0-9]*\.\.[0-9]*\).*/\1/p'
lib=$(libwarn RAILSCOPE_FLUSH_MS x | sed -n "$range")
is "$(recerr --flush-ms x | sed -n "$range")" "${lib:-?}" "--flush-ms: the library's RAILSCOPE_FLUSH_MS range ($lib)"
lib=$(libwarn RAILSCOPE_BUFFER_KB x | sed -n "$range")
is "$(recerr --buffer-kb x | sed -n "$range")" "${lib:-?}" "--buffer-kb: the library's RAILSCOPE_BUFFER_KB range ($lib)"
known='s/.*(known: \([^;]*\);.*/\1/p'
lib=$(libwarn RAILSCOPE_EVENTS x | sed -n "$known")
is "$(recerr --events x | sed -n "$known")" "${lib:-?}" "--events names are the library's ($lib)"

# --- 4. A directory as the command: 126, called a directory (as a shell does); other EACCES unchanged.
err=$("${RS_RECORD[@]}" record -q -o "$T/dir" -- ./ 2>&1)
is "$?:$err" "126:railscope: record: cannot run './': Is a directory" "record -- ./: 126, 'Is a directory'"
printf 'echo hi\n' >"$T/noexec"
chmod 644 "$T/noexec"
err=$("${RS_RECORD[@]}" record -q -o "$T/dir" -- "$T/noexec" 2>&1)
is "$?:$err" "126:railscope: record: cannot run '$T/noexec': Permission denied" \
    "a file without execute permission: 126, 'Permission denied'"

# --- 5. The wrapper is still transparent: stdin, stdout, stderr pass through, exit status 1 too.
out=$(echo input | "${RS_RECORD[@]}" record -q -o "$T/io" -- sh -c 'cat; echo to-stderr >&2; exit 1' 2>"$T/io.err")
is "$?:$out:$(cat "$T/io.err")" "1:input:to-stderr" "stdin, stdout and stderr pass through; exit status 1"
