#!/bin/bash
# The writer API as offline tools use it (tests/core/offline.c prints the TAP).
. "$(dirname "$0")/../lib.sh"
need_build tests/core/offline
_tap_planned=x
"$RS_BUILD/tests/core/offline" "$T/sim.rtrace"
