#!/bin/bash
# softnic: error paths of the software test NIC (bad rkey/lkey, bounds, access rights, RNR, short
# receive, wrong state, destroy while busy, a connection accepted while its QP is destroyed): the right error
# completion, no hang, no crash (t_errors.c).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_errors
_tap_planned=own  # the program prints its own TAP plan
run_timeout 60 "$RS_BUILD/softnic/t_errors"
