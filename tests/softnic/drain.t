#!/bin/bash
# softnic: responses owed to a peer (the ACK of a receive the application already saw) leave before
# ibv_destroy_qp returns even when the NIC's TX thread cannot send for ~1 s (t_drain.c: a link pause window;
# on a loaded host the same happens when the thread gets no CPU).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_drain
_tap_planned=own # the program prints its own TAP plan
run_timeout 30 "$RS_BUILD/softnic/t_drain"
