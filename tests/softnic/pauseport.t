#!/bin/bash
# softnic: a pause window of one port holds that port's frames only: a port waiting for a frame its paused peer
# had on the wire when the window opened keeps serving its other connections (t_pauseport.c; session 18's audit
# saw unpaused ranks of a ring stop acknowledging each other during another rank's pause).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_pauseport
_tap_planned=own # the program prints its own TAP plan
run_timeout 60 "$RS_BUILD/softnic/t_pauseport"
