#!/bin/bash
# The failure digests that `make test` prints after prove's summary (CI's log keeps only the end): each of the three
# TAP helpers (tests/lib.sh, tests/nccl/taplib.py, tests/doctor/lib-doctor.sh) must leave one for a planted failing
# file, naming its failed check and a diagnostic, and none for a passing file; `make test` must print it.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
plan 7
D=$T/dig
mkdir -p "$D" "$T/p"
# planted files, each failing check 2 with a diagnostic
cat >"$T/p/sh.t" <<EOT
#!/bin/bash
. "$RS_TOP/tests/lib.sh"
plan 2
ok "fine" true
is "apple" "pear" "fruit planted to fail"
EOT
cat >"$T/p/py.t" <<EOT
#!/usr/bin/env python3
import sys
sys.path.insert(0, "$RS_TOP/tests/nccl")
from taplib import *
plan(2)
ok(True, "fine")
is_("apple", "pear", "fruit planted to fail")
finish()
EOT
cat >"$T/p/doc.t" <<EOT
#!/bin/bash
. "$RS_TOP/tests/doctor/lib-doctor.sh"
echo 1..2
ok "fine"
echo apple >"\$WORK/a"; echo pear >"\$WORK/b"
same_as "\$WORK/a" "\$WORK/b" "fruit planted to fail"
exit \$((FAILED > 0))
EOT
cat >"$T/p/pass.t" <<EOT
#!/bin/bash
. "$RS_TOP/tests/lib.sh"
plan 1
ok "fine" true
EOT
chmod +x "$T"/p/*.t
for f in sh py doc pass; do (cd "$T/p" && RS_FAIL_DIGEST=$D "./$f.t" >/dev/null 2>&1); done
for f in sh py doc; do
    g=$(cat "$D"/d-*"$f".t.* 2>/dev/null | tr '\n' ' ')
    like "$g" "not ok 2 - fruit planted to fail.*(pear|apple)" "$f helper: the digest names the failed check and a diagnostic"
done
is "$(ls "$D" | grep -c pass)" 0 "a passing file leaves no digest"
is "$(ls -A "$D" | grep -c '^\.')" 0 "no digest is a dot file (cat dir/* would skip it)"
# make test prints them: the Makefile's test recipe on the planted shell file alone. Only when the build is up to
# date (its `all` prerequisite must not relink the library under the rest of the suite).
if (cd "$RS_TOP" && make -q BUILD="$RS_BUILD" all 2>/dev/null); then
    out=$(cd "$RS_TOP" && make -s test TESTS_ALL="$T/p/sh.t" TESTS_FIRST= BUILD="$RS_BUILD" FAIL_DIGEST="$T/mdig" 2>&1)
    rc=$?
    isnt "$rc" 0 "make test on a failing file exits non-zero"
    like "$(printf '%s' "$out" | tr '\n' ' ')" "Result: FAIL.*Why they failed.*not ok 2 - fruit planted to fail.*expected: pear" \
        "make test prints the digest after prove's summary"
else
    skip "the build in $RS_BUILD is not up to date: make test's recipe not run (it would build first)" 2
fi
