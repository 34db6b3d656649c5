#!/bin/bash
# doctor on the 'rtx4090-roce' fixture tree (tests/doctor/fixtures/README.md): text and JSON verdicts vs goldens.
. "$(dirname "$0")/lib-doctor.sh"
need_doctor
echo 1..7
fixture_test rtx4090-roce 2
exit $((FAILED > 0))
