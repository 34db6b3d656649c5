#!/bin/bash
# preload/ptrmap.[ch] (the interposers' pointer-keyed table) on its own: collisions, tombstones, wrap-around,
# a full table, pointer keys, concurrent lock-free claims. The program prints the TAP.
. "$(dirname "$0")/../lib.sh"
need_build verbs/vt_ptrmap
exec "$RS_BUILD/verbs/vt_ptrmap"
