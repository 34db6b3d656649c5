#!/bin/bash
# softnic: the extended verbs API on the software test NIC (ibv_wr_* builders, ibv_cq_ex polling and
# completion timestamps, query_device_ex) and NCCL-style loading (dlopen + dlvsym@IBVERBS_1.1); t_exapi.c.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_exapi
_tap_planned=own  # the program prints its own TAP plan
run_timeout 30 "$RS_BUILD/softnic/t_exapi"
