#!/bin/bash
# `make soak`: the long hardening campaigns (not run by `make test`). Needs RS_BUILD/RS_TOP (set by make).
#   1. fuzzing: every libFuzzer target SOAK_FUZZ_SECS seconds x SOAK_JOBS workers (tests/fuzz/campaign.sh);
#      aim: >= 10 M executions in total, 0 crashes;
#   2. the 100-run SIGKILL campaign, the storm, signals and output-trouble tests (RS_SOAK=1 sizes);
#   3. the whole suite under ASan+UBSan, UBSan alone and TSan builds (<build>-asan/-ubsan/-tsan).
# Prints the figures to copy into tests/README.md; exit 1 if any part failed.
set -u
: "${RS_BUILD:?run through make soak}" "${RS_TOP:?}"
cd "$RS_TOP"
export RS_SOAK=1
fail=0
echo "== fuzz campaign: ${SOAK_FUZZ_SECS:-600} s x ${SOAK_JOBS:-2} jobs per target"
tests/fuzz/campaign.sh "$RS_BUILD" "${SOAK_FUZZ_SECS:-600}" "${SOAK_JOBS:-2}" || fail=1
echo "== campaigns (soak sizes)"
prove -v tests/hardening/kill_softnic.t tests/hardening/storm_softnic.t tests/hardening/signals_softnic.t \
    tests/hardening/diskfull_softnic.t 2>&1 | grep -E '^(not ok|ok .*campaign|#.*loss window|Result|Files)' || true
prove tests/hardening/kill_softnic.t tests/hardening/storm_softnic.t tests/hardening/signals_softnic.t \
    tests/hardening/diskfull_softnic.t >/dev/null 2>&1 || fail=1
for san in asan ubsan tsan; do
    echo "== whole suite under SAN=$san"
    if make -j2 SAN=$san BUILD="$RS_BUILD-$san" all >"/tmp/rs-soak-build-$san.log" 2>&1; then
        RS_BUILD="$RS_BUILD-$san" RS_SAN_SKIP=1 ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 prove -j2 -r --ext .t tests/ 2>&1 | tail -15 || fail=1
    else
        echo "SAN=$san build failed: /tmp/rs-soak-build-$san.log"
        fail=1
    fi
done
exit $fail
