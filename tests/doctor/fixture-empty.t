#!/bin/bash
# doctor on the 'empty' fixture tree (tests/doctor/fixtures/README.md): text and JSON verdicts vs goldens.
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
echo 1..7
fixture_test empty 1
exit $((FAILED > 0))
