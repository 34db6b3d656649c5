#!/bin/bash
# softnic: data integrity under load on the software test NIC: many QP pairs, many outstanding WRs,
# random sizes and SGE counts, SEND/WRITE/WRITE_IMM/READ mixed, every byte checked (t_integrity.c).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_integrity
_tap_planned=own  # the program prints its own TAP plan
run_timeout 60 "$RS_BUILD/softnic/t_integrity" 8 500 "$RANDOM$RANDOM"
