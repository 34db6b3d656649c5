#!/bin/bash
# doctor on the 'dgx-h100' fixture tree (tests/doctor/fixtures/README.md): text and JSON verdicts vs goldens.
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
echo 1..7
fixture_test dgx-h100 0
exit $((FAILED > 0))
