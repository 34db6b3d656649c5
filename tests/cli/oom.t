#!/bin/bash
# D7 (issue 17): a small crafted file that decodes to millions of events must not crash the CLI under a
# memory limit: every allocation is checked (util/xalloc.h), so the result is a clean one-line
# "railscope: out of memory" error with exit 2, or a bounded result. The file: 3 frames of 64 MiB of
# MARK events (6.3 M marks) in ~20 KB, made by mkhostile. Before the fix `report` died of SIGSEGV under
# `ulimit -v 400M` (an unchecked calloc in analyzer/analyze_local.c). Since the analysis' memory budget
# (tests/cli/budget.t) `report` here finishes with a partial result (exit 1) instead of running out.
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile railscope
[ -n "$RS_SAN" ] && skip_all "ulimit -v and a sanitizer's shadow memory do not mix ($RS_SAN build)"
plan 7
"$RS_BUILD/tests/cli/mkhostile" marks "$T/m.rtrace" 3 2>/dev/null
sz=$(stat -c %s "$T/m.rtrace")
ok "crafted file is small ($sz bytes)" test "$sz" -lt 200000

# run CMD... under a 400 MiB address-space limit; sets rc, err
limited() {
    err=$( (ulimit -v 409600 && exec timeout -k 2 60 "$@") 2>&1 >/dev/null)
    rc=$?
}
check() { # desc: exit 0/1/2, never a signal; exit 2 comes with one railscope: line
    local good=0
    [ $rc -le 2 ] || good=1
    [ $rc -eq 2 ] && { [[ $err == railscope:* ]] && [ "$(printf '%s\n' "$err" | wc -l)" -le 2 ] || good=1; }
    _tap_result $good "$1 (exit $rc)"
    [ $good -ne 0 ] && diag "stderr: $(printf '%s' "$err" | head -c 400)"
}
limited "$RS_CLI" report "$T/m.rtrace"
check "report under ulimit -v 400M: a clean error or a result, no crash"
like "$err" 'out of memory|^$' "report: the error names the cause"
limited "$RS_CLI" report --json "$T/m.rtrace"
check "report --json under ulimit -v 400M"
limited "$RS_CLI" info "$T/m.rtrace"
check "info under ulimit -v 400M"
limited "$RS_CLI" export --format chrome -o "$T/out.json" "$T/m.rtrace"
check "export chrome under ulimit -v 400M"
limited "$RS_CLI" export --format perfetto -o "$T/out.pf" "$T/m.rtrace"
check "export perfetto under ulimit -v 400M"
exit 0
