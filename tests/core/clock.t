#!/bin/bash
# The tracer clock (tracer/clock.c): rs_now() read from a calibrated TSC stays within a bound of
# clock_gettime(CLOCK_MONOTONIC), never goes back within a thread across recalibrations (several threads),
# keeps working in a forked child; RAILSCOPE_CLOCK=monotonic forces the vDSO, a bad value warns once;
# the header's CLOCK tag names the source.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/clockcheck railscope
K=$RS_BUILD/tests/core/clockcheck
plan 16
cd "$T" || bail "no tmp"

# Would auto pick the TSC here? (x86-64, and an invariant TSC or the kernel's clocksource is tsc)
tsc_ok=
if [ "$(uname -m)" = x86_64 ] && { grep -q '^tsc$' /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null ||
    grep -m1 '^flags' /proc/cpuinfo | grep -qw constant_tsc && grep -m1 '^flags' /proc/cpuinfo | grep -qw nonstop_tsc; }; then
    tsc_ok=1
fi
# Deviation bound: measured ~30 ns here (bench/core/RESULTS.md); 20 us leaves room for a writer thread
# starved for seconds on a loaded machine. Under a sanitizer only gross errors (1 ms) count.
bound=20000
timing_ok || bound=1000000
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<<"$2" | head -1; }

out=$(RAILSCOPE_OUT=$T/a "$K" 1.2 4 -f 2>"$T/err")
parent=$(grep -v '^child ' <<<"$out") child=$(grep '^child ' <<<"$out")
diag "auto: $parent / $child"
if [ -n "$tsc_ok" ]; then
    is "$(field source "$parent")" "monotonic/tsc" "auto on an invariant TSC: the TSC is the source"
    ok "recalibrated while the threads ran (records >= 3: $(field records "$parent"))" test "$(field records "$parent")" -ge 3
else
    is "$(field source "$parent")" "monotonic" "auto without an invariant TSC: clock_gettime"
    skip "no TSC here: no calibration records"
fi
is "$(field backward "$parent")" 0 "4 threads: rs_now() never went back within a thread"
ok "rs_now() within $bound ns of clock_gettime (max $(field maxdev_ns "$parent") ns)" \
    test "$(field maxdev_ns "$parent")" -le $bound
ok "bracketed samples were taken ($(field samples "$parent"))" test "$(field samples "$parent")" -ge 1000
is "$(field backward "$child")" 0 "forked child: never back"
ok "forked child: within $bound ns (max $(field maxdev_ns "$child") ns)" test "$(field maxdev_ns "$child")" -le $bound
if [ -n "$tsc_ok" ]; then
    ok "forked child: its own writer thread goes on calibrating ($(field records "$parent") -> $(field records "$child"))" \
        test "$(field records "$child")" -gt "$(field records "$parent")"
else
    skip "no TSC here"
fi
is "$(cat "$T/err")" "" "no messages"
want=monotonic
[ -n "$tsc_ok" ] && want=monotonic/tsc
like "$("$RS_CLI" info "$T/a" 2>&1)" "clock $want " "header CLOCK tag: $want"

out=$(RAILSCOPE_OUT=$T/m RAILSCOPE_CLOCK=monotonic "$K" 0.4 2 2>"$T/err")
is "$(field source "$out") $(field records "$out") $(field maxdev_ns "$out")" "monotonic 0 0" \
    "RAILSCOPE_CLOCK=monotonic: clock_gettime, never calibrated, no deviation"
like "$("$RS_CLI" info "$T/m" 2>&1)" "clock monotonic " "header CLOCK tag: monotonic"

out=$(RAILSCOPE_OUT=$T/b RAILSCOPE_CLOCK=rdtsc "$K" 0.3 2 2>"$T/err")
is "$(grep -c '^railscope: ' "$T/err")" 1 "bad RAILSCOPE_CLOCK: one warning"
like "$(cat "$T/err")" "RAILSCOPE_CLOCK='rdtsc' unknown \(auto\|tsc\|monotonic\); using auto" "the warning names the values and the default"
is "$(field source "$out")" "$want" "bad value: auto's choice"

if [ "$(uname -m)" = x86_64 ]; then
    out=$(RAILSCOPE_OUT=$T/t RAILSCOPE_CLOCK=tsc "$K" 0.3 2 2>/dev/null)
    is "$(field source "$out") $(field backward "$out")" "monotonic/tsc 0" "RAILSCOPE_CLOCK=tsc: the TSC"
else
    skip "no TSC on $(uname -m)"
fi
