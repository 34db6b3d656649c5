#!/bin/bash
# softnic: a responder that _exits the moment it has polled a receive does not take the ACK with it: the ACK
# leaves before the receive completion is visible, as a real RC NIC acknowledges on the wire once the data is
# placed (t_exitack.c). held: the responder's link is paused, so a queued ACK could not have left before the
# exit (old library: RETRY_EXC_ERR every run); flood: 16000 SENDs inside the window fill the socket with ACKs, so
# the rest go through TX and their completions wait for them (old library: RETRY_EXC_ERR); loop: 30 unpaused
# rounds (old library: 14 of 30 failed idle).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_exitack
plan 8
tap() { # the program's TAP lines as ours, its diagnostics as diag
    while IFS= read -r l; do
        case $l in
        ok\ *) ok "${l#ok [0-9]* - }" true ;;
        not\ ok\ *) ok "${l#not ok [0-9]* - }" false ;;
        \#*) diag "${l#\# }" ;;
        esac
    done <<<"$1"
}
out=$(run_timeout 40 "$RS_BUILD/softnic/t_exitack" held 2>&1)
rc=$?
tap "$out"
is "$rc" 0 "t_exitack held exits 0"
tap "$(run_timeout 60 "$RS_BUILD/softnic/t_exitack" flood 16000 2>&1)"
out=$(run_timeout 120 "$RS_BUILD/softnic/t_exitack" loop 30 2>&1)
rc=$?
[ "$rc" = 0 ] || diag "$out"
like "$out" 'exitack_fail 0 of 30' "softnic: 30 responders that _exit right after their receive: every SEND succeeds"
