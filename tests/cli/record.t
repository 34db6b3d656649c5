#!/bin/bash
# railscope record's own command line and end-of-run summary (review of session 29, items 1-4 and 9):
#  1. an empty -o ("-o $OUTDIR" with the variable unset) is a usage error, not a trace in ./railscope-out
#     announced as "trace in  (0 files)".
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so
plan 3
cd "$T" || bail "no tmp"

# --- 1. An empty output directory.
err=$("$RS_CLI" record -o "" -- sh -c 'echo ran >"$0/ran"' "$T" 2>&1)
is "$?:$err" "2:railscope: record: -o/--out needs a directory, not an empty string" "record -o '': exit 2, one line"
ok "... the command did not run, nothing in ./railscope-out" test ! -e "$T/ran" -a ! -e "$T/railscope-out"
err=$("$RS_CLI" record --out "" -- true 2>&1)
is "$?" 2 "record --out '': exit 2 too"
