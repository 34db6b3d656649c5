#!/bin/bash
# preload/verbs_abi.h (railscope's own declarations of the libibverbs ABI) against the installed verbs.h.
. "$(dirname "$0")/../lib.sh"
need_build verbs/abi_check
exec "$RS_BUILD/verbs/abi_check"
