#!/bin/bash
# softnic: sends to a peer QP in ERR (the peer drops each request): none completes SUCCESS, the first ends
# RETRY_EXC_ERR after the requester's retransmit timer, the rest are flushed (t_nakerr.c). Before the fix a
# second drop notice completed the first send as SUCCESS: a send that never arrived reported delivered.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_nakerr
_tap_planned=own # the program prints its own TAP plan
run_timeout 30 "$RS_BUILD/softnic/t_nakerr"
