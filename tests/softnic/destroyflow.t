#!/bin/bash
# softnic: ibv_destroy_qp on a QP its peer keeps writing to takes no new request once it has begun (t_destroyflow.c):
# it is not held open by the stream, and no WRITE that arrives after it began is acknowledged.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_destroyflow
_tap_planned=own # the program prints its own TAP plan
run_timeout 60 "$RS_BUILD/softnic/t_destroyflow" held
