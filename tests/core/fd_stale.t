#!/bin/bash
# The descriptor wrappers hide the trace file's descriptor only while the number still holds the trace
# file: after a raw close of that number (unseen by the wrappers), with the program's own file put there and
# the trace file removed (the writer cannot open it again and stops), fcntl() and close() of the number are
# the program's (they answered EBADF before, and for good once the writer had stopped).
. "$(dirname "$0")/../lib.sh"
need_build tests/core/fd_stale
plan 1
out=$(RAILSCOPE_OUT=$T/o RAILSCOPE_LOG=quiet run_timeout 30 "$RS_BUILD/tests/core/fd_stale" 2>&1)
is "$?:$out" "0:before=ok after=ok close=ok" "the program's own file on the trace file's old number: fcntl and close work"
