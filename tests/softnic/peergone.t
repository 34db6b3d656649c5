#!/bin/bash
# softnic: a request its peer never takes (the peer's QP destroyed while it waited for a receive, or gone
# before it was sent) fails through the requester's retransmit timer, (retry_cnt + 1) x 4.096 us x 2^timeout,
# not at once: ACKs the peer still owes on its other QPs arrive first, as on a real NIC (t_peergone.c: the
# end of ibv_srq_pingpong, where that ordering failed ~1 run in 7 until session 6).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sn_env.sh"
need_build softnic/t_peergone
_tap_planned=own # the program prints its own TAP plan
run_timeout 60 "$RS_BUILD/softnic/t_peergone"
