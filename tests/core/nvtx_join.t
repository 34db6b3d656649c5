#!/bin/bash
# NVTX message numbers: split/join round trips, and the reader joining template and numbers back (damaged and
# hostile tails left as they are) (tests/core/nvtx_join.c prints the TAP).
. "$(dirname "$0")/../lib.sh"
need_build tests/core/nvtx_join
_tap_planned=x
"$RS_BUILD/tests/core/nvtx_join" "$T/nvtx.rtrace"
