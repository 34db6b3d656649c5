#!/bin/bash
# The suites that preload the library into programs not built with a sanitizer, run whole against the
# ASan+UBSan build (<build>-asan, shared with sanitizers.t; one `make` at a time through a lock):
#   tests/verbs (null provider and software test NIC (softnic): rdma-core's ibv_rc_pingpong, examples),
#   tests/softnic, tests/nccl (NCCL/CUPTI/NVTX fakes), tests/stacks (call stacks, ELF symboliser), and tests/hardening's softnic campaigns (SIGKILL,
#   signals, storm, output trouble, transparency) and security tests.
# The sanitizer runtime comes first in LD_PRELOAD (lib.sh's RS_PRELOAD); every sanitizer report goes to a
# log file (log_path) as well as failing the program (halt_on_error), so a report from a process whose
# exit status a test does not look at still fails this file. Timing checks skip (lib.sh's timing_ok).
# Also: `railscope record` keeps a sanitizer runtime in front of the library in LD_PRELOAD, and the ASan
# tree's header dependencies hold under `make SAN=asan` as under this file's make (a stale object once linked).
# The suites run on a private copy of the tree taken right after the build (sanlib.sh says why); a suite
# that fails is shown with its failed checks and the failure diagnostics. RS_SAN_SKIP=1 skips it, as sanitizers.t.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/sanlib.sh"
[ -n "${RS_SAN_SKIP:-}" ] && skip_all "RS_SAN_SKIP set"
need_cmd make gcc flock
echo 'int main(void){return 0;}' | gcc -x c -fsanitize=address -o "$T/probe" - 2>/dev/null ||
    skip_all "gcc cannot link -fsanitize=address (libasan missing)"
plan 9
JOBS=${RS_SAN_JOBS:-2}
A=${RS_BUILD}-asan
S=$T/asan # the copy the checks run on
cd "$RS_TOP" || bail "no RS_TOP"

t0=$SECONDS
# sanitizers.t builds into the same tree at the same time under prove -j2: one make at a time.
RS_SAN_JOBS=$JOBS san_build asan "$A" "$S" "$T/build.log" all
rc=$?
_tap_result $rc "ASan+UBSan build of everything ($((SECONDS - t0)) s)"
if [ $rc -ne 0 ]; then
    tail -5 "$T/build.log" | sed 's/^/#   /' >&2
    skip "ASan build failed" 8
    exit 0
fi

mkdir -p "$T/san"
export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:halt_on_error=1:log_path=$T/san/asan
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$T/san/ubsan
suites=(tests/verbs tests/softnic tests/nccl tests/stacks)
for f in tests/hardening/*.t; do
    case $f in */sanitizers*) ;; *) suites+=("$f") ;; esac
done
t0=$SECONDS
# bounded: a hang (e.g. a fork deadlock in the sanitizer runtime) must not stall the whole suite
# -v: prove writes each file's TAP as one block (output to a file), so a failed check can be named below
run_timeout 900 env RS_BUILD="$S" RS_SAN_SKIP=1 prove -v -j"$JOBS" -r "${suites[@]}" >"$T/prove.out" 2>&1
prc=$?
secs=$((SECONDS - t0))
sed -n '/^Test Summary Report/,$p' "$T/prove.out" >"$T/summary"
# a file failed: a non-zero wait status, failed tests, or a parse error (a "TODO passed" alone is no failure)
failed=$(awk '/^tests\/[^ ]+\.t / { f = $1; if ($0 !~ /Wstat: 0 / || $0 !~ /Failed: 0\)/) print f }
    /^  Parse errors:/ && f { print f }' "$T/summary" | sort -u)
for s in "tests/verbs/:tests/verbs" "tests/softnic/:tests/softnic" "tests/nccl/:tests/nccl" "tests/stacks/:tests/stacks (call stacks of pageable copies)" \
    "tests/hardening/:tests/hardening's softnic campaigns and security tests"; do
    mine=$(printf '%s\n' "$failed" | grep -F "${s%%:*}")
    [ -z "$mine" ]
    _tap_result $? "ASan+UBSan: ${s#*:} (library preloaded, ASan runtime first)"
    for f in $mine; do
        diag "failed: $f $(sed -n "\|^$f |,/^[^ ]/p" "$T/summary" | grep -m1 -oE 'Failed tests?: .*')"
        # its block: from "tests/x.t .." to the next file's; its failed checks (TAP on stdout)
        awk -v f="$f" '/^tests\/[^ ]+\.t \.+/ { in_f = (index($0, f " ") == 1) } in_f && /^not ok/' "$T/prove.out" |
            head -10 | sed 's/^/#   /' >&2
    done
done
# their diagnostics (stderr, interleaved with the other files'): lib.sh prints "#   " lines only on a failure
[ -n "$failed" ] && grep -m20 -E '^#   |ERROR: ld\.so' "$T/prove.out" | sed 's/^/# /' >&2
if [ $prc -ne 0 ] && [ -z "$failed" ]; then
    diag "prove exit $prc without a failing file:"
    tail -5 "$T/prove.out" | sed 's/^/#   /' >&2
fi
diag "suites under ASan+UBSan: $secs s wall, prove exit $prc"
# Any report, also from a process whose exit status nobody checked (a server, a forked child).
reports=$(grep -lE 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer|SUMMARY: ' "$T"/san/* 2>/dev/null)
[ -z "$reports" ]
_tap_result $? "ASan+UBSan: no sanitizer report from any process of those suites ($(ls "$T/san" | wc -l) log files)"
for r in $reports; do
    diag "$(basename "$r"): $(grep -m1 -E 'ERROR|runtime error' "$r")"
    grep -m6 -E '^ +#[0-9]+ ' "$r" | sed 's/^/#   /' >&2
done
for r in "$T"/san/*; do   # anything else a runtime wrote (warnings) is shown, not failed
    [ -e "$r" ] && ! printf '%s\n' "$reports" | grep -qxF "$r" && diag "$(basename "$r"): $(head -c 300 "$r")"
done

# `railscope record` puts the library first in LD_PRELOAD but keeps a sanitizer runtime that was there in
# front of it: the ASan runtime's own check (verify_asan_link_order, on here) aborts the program otherwise.
RT=$(ldd "$S/librailscope.so" | awk '/libasan\.so/ { print $3; exit }')
out=$(run_timeout 60 env LD_PRELOAD="$RT:/lib/x86_64-linux-gnu/libc.so.6" ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
    "$S/railscope" record -q -o "$T/rec" -- sh -c 'echo "$LD_PRELOAD"' 2>&1)
rc=$?
is "$rc|$out" "0|$RT:$S/librailscope.so:/lib/x86_64-linux-gnu/libc.so.6" \
    "railscope record keeps the ASan runtime first in LD_PRELOAD, then the library, then the rest"

# The tree's header dependencies hold under the spelling engineers use (`make SAN=asan`: BUILD=build-asan), as
# under this file's BUILD=<abs>/build-asan: every object whose dependency file lists a header is rebuilt when
# that header changes (make -n -W HEADER: nothing is run or touched). When the two spellings named different
# targets, one's dependency files were not seen by the other, a header change left objects compiled against
# the old header, and a full `make test` linked such a mix (2026-12-02: every ASan `railscope report` in
# kill_softnic.t died in free() from an_pass_recycle, analyze_local.h's struct pass changed under a stale
# object; the same commit built clean ran clean). The header: the one most objects include.
case $A in "$RS_TOP"/*) B=${A#"$RS_TOP"/} ;; *) B=$A ;; esac
{
    flock 9 # sanitizers.t may be building there
    mapfile -t deps < <(find "$A" -name '*.d')
    hdr=$(cat "${deps[@]}" /dev/null | tr ' ' '\n' | grep -E '^[a-z_]+/[a-z_0-9]+\.h$' | sort | uniq -c | sort -rn |
        awk 'NR == 1 { print $2 }')
    want=$(for d in $(grep -lF -- " $hdr" "${deps[@]}" /dev/null); do
        [ -e "$(tr ' ' '\n' <"$d" | grep -m1 '\.c$')" ] && echo "$d" # (an object whose source is gone is no target)
    done | sed "s|^$A/|$B/|; s|\.d\$|.o|" | sort)
    # shellcheck disable=SC2086
    got=$(make -k -n -W "$hdr" SAN=asan BUILD="$B" $want 2>/dev/null | grep -oE -- '-o [^ ]+\.o' | sed 's/^-o //' |
        sort)
} 9>"$A/.build.lock"
[ -n "$hdr" ] && [ -n "$want" ] && [ "$got" = "$want" ]
rc=$?
n=$(echo "$want" | grep -c .)
_tap_result $rc "ASan tree: a change of ${hdr:-(no header found)} rebuilds all $n objects that include it (BUILD=$B)"
[ "$got" != "$want" ] && diag "not rebuilt: $(comm -23 <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ')"
exit 0
