# TAP helpers for shell tests. Source it first thing in a .t file:
#
#     #!/bin/bash
#     . "$(dirname "$0")/../lib.sh"        # (adjust the depth)
#     plan 3
#     ok "the CLI prints help"  "$RS_CLI" --help
#     is "$(echo hi)" "hi" "echo works"
#     like "$out" 'frames: [0-9]+' "info shows frames"
#
# Environment: RS_TOP (repo root) and RS_BUILD (build dir, absolute) are set by `make test`; when a .t
# is run by hand they default to the repo containing this file and $RS_TOP/build.
# Provided: RS_CLI, RS_LIB, RS_PRELOAD, RS_PRELOAD_SHELL, RS_SAN, T (a fresh temporary directory removed at exit), plan, ok, nok, is, isnt,
# like, unlike, skip, skip_all, diag, bail, done_testing, need_cmd, run_timeout, timing_ok.

set -u
# Sorted text compares in byte order whatever the machine's locale: en_US.UTF-8 (the GPU host) sorts "ncclGroup"
# between "Broadcast" and "ReduceScatter" (tests/export/export.t 16, session 30). LC_ALL would override LC_COLLATE:
# its value moves to LANG, which the other categories then follow as before.
if [ -n "${LC_ALL:-}" ]; then export LANG=$LC_ALL; unset LC_ALL; fi
export LC_COLLATE=C
RS_TOP=${RS_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
RS_BUILD=${RS_BUILD:-$RS_TOP/build}
RS_CLI=$RS_BUILD/railscope
RS_LIB=$RS_BUILD/librailscope.so
export RS_TOP RS_BUILD

# Sanitizer builds (make SAN=asan|ubsan|tsan, run by tests/hardening/sanitizers.t and `make soak`): RS_SAN
# names the runtime the library links, and RS_PRELOAD is what to put in LD_PRELOAD to trace a program:
# the sanitizer runtime first (it must come before any instrumented object; uninstrumented programs do
# not load it themselves), then the library. In a normal build RS_PRELOAD is just RS_LIB.
RS_SAN= RS_SAN_RT=
if [ -e "$RS_LIB" ]; then
    RS_SAN_RT=$(ldd "$RS_LIB" 2>/dev/null | awk '/lib(asan|tsan|ubsan)\.so/ { print $3; exit }')
    case $RS_SAN_RT in
    *libasan*) RS_SAN=asan ;; *libtsan*) RS_SAN=tsan ;; *libubsan*) RS_SAN=ubsan ;;
    esac
fi
RS_PRELOAD=${RS_SAN_RT:+$RS_SAN_RT:}$RS_LIB
# RS_RECORD: `railscope record` as the tests run it. Under TSan (make soak) the runtime goes first in LD_PRELOAD, and
# record keeps it in front of the library (cli/record.c set_preload); without it a traced program loads libtsan
# after libc, as the library's dependency, its writer thread dies in __tsan_func_entry and record of that SIGSEGV.
# An array (env execs record in its place: the same process for signal checks), for programs that exec it too.
RS_RECORD=("$RS_CLI")
[ "$RS_SAN" = tsan ] && RS_RECORD=(env "LD_PRELOAD=$RS_SAN_RT${LD_PRELOAD:+:$LD_PRELOAD}" "$RS_CLI")
# RS_PRELOAD_SHELL: the same for uninstrumented programs that fork from freshly forked children (shells,
# python and its pyenv shims). Under ASan it leaves the runtime out (the library still loads it, late;
# verify_asan_link_order=0): such a child forks while its new writer thread is being set up inside libasan,
# and the grandchild hangs on a lock gcc 12's libasan does not handle around fork() (seen 3 times in
# tests/core/harmless.t; session 6 blamed the allocator lock; session 7 caught cred_fork.t's hang on the
# thread registry lock with gdb, hardening.md: probably the same, not re-checked here). Those programs then use glibc's malloc: no heap checks there;
# the ASan-built test programs keep them.
RS_PRELOAD_SHELL=$RS_PRELOAD
if [ "$RS_SAN" = asan ]; then RS_PRELOAD_SHELL=$RS_LIB; fi
if [ -n "$RS_SAN" ]; then
    # sanitizer reports fail the test; the runtime comes by LD_PRELOAD, not first in the link order
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:verify_asan_link_order=0:halt_on_error=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66:die_after_fork=0:atexit_sleep_ms=0:suppressions=$RS_TOP/tests/tsan.supp}
fi
export RS_SAN RS_PRELOAD RS_PRELOAD_SHELL

_tap_n=0
_tap_fail=0
_tap_planned=

T=$(mktemp -d "${TMPDIR:-/tmp}/rs-test.XXXXXX")
# RS_FAIL_DIGEST: a directory (`make test` makes one, and nested runs such as sanitizers.t's inherit it). A file
# that fails leaves there its failed checks and its last diagnostics, which `make test` prints after
# prove's summary: CI keeps only the end of the output, where prove -j names a failed file and its check
# numbers but never why (session 12: sanitizers.t 6, a nested suite under ASan, failed in CI and nothing said
# which file).
# Only the diagnostics that go through these helpers (diag, and what ok/is/like/... print on a failure) reach a
# digest: a copy of the whole stderr (a tee behind `exec 2>`) deadlocked a test's bare `wait` (bash 5.1+ waits for
# the last process substitution too: diskfull_softnic.t hung in a clean-clone run, session 12).
_tap_notok=""
_tap_dig=""
if [ -n "${RS_FAIL_DIGEST:-}" ] && [ -d "$RS_FAIL_DIGEST" ]; then _tap_dig=$T/.diag; fi
# _tap_say TEXT: a diagnostic line (or lines) to stderr, and to this file's digest
_tap_say() {
    printf '%s\n' "$1" >&2
    if [ -n "$_tap_dig" ]; then printf '%s\n' "$1" >>"$_tap_dig" 2>/dev/null; fi
    return 0
}
_tap_digest() { # RC: write this file's digest when it failed
    { [ -n "${RS_FAIL_DIGEST:-}" ] && [ -d "$RS_FAIL_DIGEST" ]; } || return 0
    local f=$RS_FAIL_DIGEST/d-$(printf '%s' "${0#"$RS_TOP"/}" | tr -c 'A-Za-z0-9._-' _).$$
    {
        echo "== ${0#"$RS_TOP"/}${RS_SAN:+ (under $RS_SAN, build $RS_BUILD)}: $_tap_fail failed of $_tap_n$([ "$_tap_fail" -eq 0 ] && echo ", exit $1")"
        printf '%s' "$_tap_notok" | head -10
        if [ -s "$T/.diag" ]; then
            echo "-- its last diagnostics:"
            tail -12 "$T/.diag" | cut -c1-300
        fi
    } >"$f" 2>/dev/null
}
_tap_cleanup() {
    local rc=$?
    if [ "$_tap_fail" -gt 0 ] || [ $rc -ne 0 ]; then _tap_digest "$rc"; fi
    if [ -z "${RS_KEEP:-}" ]; then rm -rf "$T"; else echo "# kept $T" >&2; fi
    if [ -z "$_tap_planned" ]; then echo "1..$_tap_n"; fi
    [ "$_tap_fail" -gt 0 ] && exit 1
    exit $rc
}
trap _tap_cleanup EXIT

# plan N: the number of tests this file runs.
plan() { _tap_planned=$1; echo "1..$1"; }
# done_testing: print the plan at the end instead (when the count depends on the machine).
done_testing() { :; }

_tap_result() { # status desc
    _tap_n=$((_tap_n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $_tap_n - $2"
    else
        echo "not ok $_tap_n - $2"
        _tap_notok+="not ok $_tap_n - $2"$'\n'
        _tap_fail=$((_tap_fail + 1))
    fi
}

# ok DESC CMD [ARGS...]: passes when CMD exits 0 (its output goes to stderr as diagnostics on failure).
ok() {
    local desc=$1 out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    _tap_result $rc "$desc"
    [ $rc -ne 0 ] && _tap_say "$(printf '%s\n' "$out" | head -20 | sed 's/^/#   /')"
    return $rc
}
# nok DESC CMD [ARGS...]: passes when CMD exits non-zero.
nok() {
    local desc=$1 rc
    shift
    "$@" >/dev/null 2>&1
    rc=$?
    [ $rc -ne 0 ]
    _tap_result $? "$desc"
}
# is GOT EXPECTED DESC
is() {
    [ "$1" = "$2" ]
    local rc=$?
    _tap_result $rc "$3"
    [ $rc -ne 0 ] && _tap_say "$(printf '#   got:      %s\n#   expected: %s' "$(printf '%s' "$1" | head -c 2000)" "$2")"
    return $rc
}
isnt() {
    [ "$1" != "$2" ]
    local rc=$?
    _tap_result $rc "$3"
    [ $rc -ne 0 ] && _tap_say "$(printf '#   got %s, expected anything else' "$1")"
    return $rc
}
# like GOT REGEX DESC (extended regex, grep -E, any line; anchor a line with ^ and $). A newline in REGEX would
# make grep read two patterns, one of them empty, which matches every line: such a check fails instead.
_one_pattern() { [[ $1 != *$'\n'* ]] || { _tap_say "#   the pattern holds a newline (grep -E: a pattern list)"; return 1; }; }
like() {
    _one_pattern "$2" && printf '%s\n' "$1" | grep -Eq -- "$2"
    local rc=$?
    _tap_result $rc "$3"
    [ $rc -ne 0 ] && _tap_say "$(printf '#   %s\n#   does not match /%s/' "$(printf '%s' "$1" | head -c 2000)" "$2")"
    return $rc
}
unlike() {
    _one_pattern "$2" && ! printf '%s\n' "$1" | grep -Eq -- "$2"
    local rc=$?
    _tap_result $rc "$3"
    [ $rc -ne 0 ] && _tap_say "$(printf '#   %s\n#   matches /%s/' "$(printf '%s' "$1" | head -c 2000)" "$2")"
    return $rc
}
# skip REASON [COUNT]: count tests as skipped.
skip() {
    local i
    for ((i = 0; i < ${2:-1}; i++)); do
        _tap_n=$((_tap_n + 1))
        echo "ok $_tap_n # skip $1"
    done
}
# skip_all REASON: the whole file cannot run here.
skip_all() {
    echo "1..0 # SKIP $1"
    _tap_planned=0
    exit 0
}
diag() { _tap_say "# $*"; }
bail() {
    echo "Bail out! $*"
    exit 255
}
# timing_ok: true unless this is a sanitizer build. Checks of how long things take (ratios of stall to
# pause time, scheduling-dependent bounds) mean nothing under a sanitizer's 2-10x slowdown on a loaded
# machine; the normal build's run of the same file checks them, the sanitizer run checks memory safety.
timing_ok() { [ -z "$RS_SAN" ]; }
timing_skip_reason="timing check: runs in the normal build, not under $RS_SAN (sanitizer slowdown)"

# need_time: skip the file unless GNU time is there (cpu_seconds and peak-RSS checks read it).
need_time() { [ -x /usr/bin/time ] || skip_all "/usr/bin/time not installed (Debian package: time)"; }
# cpu_seconds MAX_RC OUT CMD...: CMD's user+sys CPU seconds (stdout to OUT, stderr dropped, 120 s limit); 999 when
# it exits above MAX_RC or times out. Needs /usr/bin/time (the `time` package). For the scaling checks below.
cpu_seconds() {
    local max=$1 out=$2 t=""
    shift 2
    /usr/bin/time -o "$T/.cpu_time" -f 'T %U %S' timeout 120 "$@" >"$out" 2>/dev/null
    [ $? -le "$max" ] && t=$(awk '/^T / { print $2 + $3 }' "$T/.cpu_time")
    echo "${t:-999}"
}
# scaling_ok DESC A B BOUND: B/A < BOUND seconds ratio (a 0.1 s floor on A: /usr/bin/time's granularity is
# 0.01 s), so 4x the input in linear time passes and in quadratic time (16x) fails; skipped under sanitizers.
scaling_ok() {
    if timing_ok; then
        ok "$1 (${2} s -> ${3} s)" awk -v a="$2" -v b="$3" -v m="$4" 'BEGIN { if (a < 0.1) a = 0.1; exit !(b / a < m) }'
    else
        skip "$timing_skip_reason"
    fi
}
# need_cmd CMD...: skip_all unless every command exists.
need_cmd() {
    local c
    for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip_all "$c not installed"; done
}
# need_build FILE...: skip_all unless the build produced these (paths relative to RS_BUILD or absolute).
need_build() {
    local f
    for f in "$@"; do
        case $f in /*) ;; *) f=$RS_BUILD/$f ;; esac
        [ -e "$f" ] || skip_all "$f not built (run make)"
    done
}
# run_timeout SECS CMD...: timeout that also kills the process group's stragglers.
run_timeout() {
    local s=$1
    shift
    timeout -k 2 "$s" "$@"
}
