#!/bin/bash
# record passes SIGUSR1, SIGUSR2 and SIGALRM on to the command, whoever sent them, and SIGWINCH when a
# process sent it (a terminal's resize went to the command already), as it does SIGTERM/SIGHUP and
# SIGINT/SIGQUIT (tests/core/record_cli.t): record then ends as the command did. Before, `kill -USR1` killed
# record (exit 138) and left the command running, orphaned. A signal found ignored when record starts (nohup's
# SIGHUP) stays ignored for record and the command: before, record forwarded it and the command died.
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so
plan 20

# wait_file F: the command wrote F (its trap is set), so the signal is not sent too early
wait_file() {
    for _ in $(seq 400); do [ -s "$1" ] && return 0; sleep 0.05; done
    return 1
}
# trapping SIG RC: the command traps SIG and exits RC; record must exit RC
for sig in USR1 USR2 ALRM WINCH; do
    rc=$((10 + $(kill -l $sig) % 50))
    "$RS_CLI" record -q -o "$T/t$sig" -- sh -c "trap 'echo got > \"$T/got$sig\"; exit $rc' $sig
        echo \$\$ > '$T/ready$sig'; i=0; while [ \$i -lt 200 ]; do sleep 0.1; i=\$((i + 1)); done; exit 1" &
    pid=$!
    wait_file "$T/ready$sig" || diag "the command did not start in 20 s"
    kill -$sig $pid
    wait $pid 2>/dev/null
    is "$?" $rc "kill -$sig <record's pid>: the command's trap runs and record exits with its status ($rc)"
    is "$(cat "$T/got$sig" 2>/dev/null)" got "kill -$sig: the command got it"
done

# the command dies of it: record dies the same way, at once, and the command is not left behind
for sig in USR1 USR2 ALRM; do
    num=$(kill -l $sig)
    "$RS_CLI" record -q -o "$T/d$sig" -- sh -c "echo \$\$ > '$T/cmd$sig'; exec sleep 20" &
    pid=$!
    wait_file "$T/cmd$sig" || diag "the command did not start in 20 s"
    sleep 0.2 # past the exec
    t0=$(date +%s%N)
    kill -$sig $pid
    wait $pid 2>/dev/null
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    is "$rc" $((128 + num)) "kill -$sig <record's pid>: the command dies of it, and record the same way"
    ok "kill -$sig: record ends ${ms} ms after the signal, not when the command would have (20 s)" test $ms -lt 5000
    cmd=$(cat "$T/cmd$sig")
    nok "kill -$sig: no orphan: the command (pid $cmd) is gone" kill -0 "$cmd"
    kill "$cmd" 2>/dev/null # leave nothing behind if it failed
done

# ignored when record starts (as nohup leaves SIGHUP): record and the command go on, the command's status
for sig in HUP USR1; do
    (
        trap '' $sig
        exec "$RS_CLI" record -q -o "$T/i$sig" -- sh -c "echo \$\$ > '$T/ign$sig'; sleep 1; exit 4"
    ) &
    pid=$!
    wait_file "$T/ign$sig" || diag "the command did not start in 20 s"
    kill -$sig $pid
    wait $pid 2>/dev/null
    is "$?" 4 "SIG$sig ignored by record's caller: kill -$sig <record's pid> changes nothing (the command's exit 4)"
done

# a window resize at the terminal (SI_KERNEL) reached the whole foreground group: not forwarded. Seen with a
# command in a session of its own, which the terminal's signal does not reach.
if command -v python3 >/dev/null 2>&1; then
    out=$(run_timeout 30 python3 "$RS_TOP/tests/pty_drive.py" winch "$RS_CLI" record -q -o "$T/pty" -- \
        setsid -w sh -c 'trap "echo winch" WINCH; echo ready; sleep 1; echo done')
    is "$out" "exit 0 done" "terminal resize: not forwarded to a command in a session of its own"
else
    skip "python3 not installed (the terminal test needs its pty module)" 1
fi
