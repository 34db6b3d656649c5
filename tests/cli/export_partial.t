#!/bin/bash
# Review: export's exit status is 1 when an input is partial (README: 1 partial/damaged input), like dump and
# report: a file whose string text passes the reader's limit (strings not kept: names missing from the
# export) exited 0 with only a warning.
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile railscope
plan 3
"$RS_BUILD/tests/cli/mkhostile" strings "$T/s.rtrace" 20000 4096 2>/dev/null
"$RS_CLI" dump "$T/s.rtrace" >/dev/null 2>&1
is "$?" 1 "dump: strings past the reader's limit: exit 1 (partial)"
for f in chrome perfetto; do
    "$RS_CLI" export --format $f -o "$T/out.$f" "$T/s.rtrace" >/dev/null 2>"$T/err"
    is "$?" 1 "export --format $f: same file: exit 1 (was 0)"
done
